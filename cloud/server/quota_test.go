package server

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// TestDeviceQuota: a device that spreads its values over plugin names of its own choosing is
// held to the device-wide bytes and plugin count, on every Storage; replacing a value, a
// plugin whose values all expired or were deleted, and another device are counted right.
func TestDeviceQuota(t *testing.T) {
	for _, s := range storages {
		t.Run(s.name, func(t *testing.T) {
			st := s.open(t)
			defer st.Close()
			ctx := context.Background()
			q := StoreQuota{StoreLimits: protocol.StoreLimits{MaxBytes: 1000, MaxKeys: 10, MaxValueBytes: 500},
				Device: DeviceStoreLimits{MaxBytes: 250, MaxPlugins: 3}}
			val := json.RawMessage(`"` + strings.Repeat("x", 98) + `"`) // 100 bytes, 101 with key "k"
			put := func(dev, plugin, key string, v json.RawMessage, exp, now int64) string {
				_, err := st.StorePut(ctx, Namespace{dev, plugin}, StoreItem{Key: key, Value: v, ExpiresAt: exp}, nil, q, now)
				var qe *QuotaError
				if errors.As(err, &qe) {
					return qe.Limit
				} else if err != nil {
					t.Fatal(err)
				}
				return "ok"
			}
			steps := []struct {
				dev, plugin, key string
				v                json.RawMessage
				exp, now         int64
				want             string
			}{
				{"d1", "p1", "k", val, 0, 1, "ok"},
				{"d1", "p2", "k", val, 0, 1, "ok"},
				{"d1", "p3", "k", val, 0, 1, "250 bytes per device"}, // 303 > 250
				{"d1", "p1", "k", val, 0, 1, "ok"},                   // a replacement adds nothing
				{"d1", "p3", "k", json.RawMessage(`1`), 0, 1, "ok"},  // small: 204
				{"d1", "p4", "k", json.RawMessage(`1`), 0, 1, "3 plugins per device"},
				{"d2", "p4", "k", val, 0, 1, "ok"}, // another device
				{"d1", "p3", "k2", json.RawMessage(`2`), 0, 1, "ok"},
				{"d1", "p5", "k", json.RawMessage(`1`), 0, 1, "3 plugins per device"},
			}
			for i, s := range steps {
				if got := put(s.dev, s.plugin, s.key, s.v, s.exp, s.now); got != s.want {
					t.Fatalf("step %d (%s/%s): %s, want %s", i, s.dev, s.plugin, got, s.want)
				}
			}
			// A plugin whose values are all deleted no longer counts.
			for _, k := range []string{"k", "k2"} {
				if err := st.StoreDelete(ctx, Namespace{"d1", "p3"}, k, 2); err != nil {
					t.Fatal(err)
				}
			}
			if got := put("d1", "p5", "k", json.RawMessage(`1`), 0, 3); got != "ok" {
				t.Fatalf("after emptying p3: %s", got)
			}
			// A plugin whose values all expired no longer counts either.
			if got := put("d1", "p5", "k", json.RawMessage(`1`), 10, 4); got != "ok" {
				t.Fatal(got)
			}
			if got := put("d1", "p6", "k", json.RawMessage(`1`), 0, 5); got != "3 plugins per device" {
				t.Fatalf("p5 still live: %s", got)
			}
			if got := put("d1", "p6", "k", json.RawMessage(`1`), 0, 11); got != "ok" {
				t.Fatalf("after p5 expired: %s", got)
			}
		})
	}
}

// TestDeviceQuotaOverHTTP is the attack of issue 11: one device writes values of a
// plugin-sized quota under one plugin name after another, through the real routes, until
// the device-wide bound stops it; GET /v1/meta keeps the seed's schema.
func TestDeviceQuotaOverHTTP(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Limits.Store = protocol.StoreLimits{MaxBytes: 10_000, MaxKeys: 100, MaxValueBytes: 5_000}
		c.DeviceStore = DeviceStoreLimits{MaxBytes: 30_000, MaxPlugins: 50}
	})
	dev := e.register()
	value := fmt.Sprintf(`{"value":%q}`, strings.Repeat("x", 4_900))
	stored, refused := 0, ""
	for p := range 20 {
		tok := e.token(dev, fmt.Sprintf("plugin%d", p), "store")
		for k := range 2 {
			r := e.do("PUT", fmt.Sprintf("/v1/store/k%d", k), tok, value, "Content-Type", "application/json")
			if r.status != 200 {
				refused = string(r.body)
				break
			}
			stored += 4_900
		}
		if refused != "" {
			break
		}
	}
	if stored > 30_000 || !strings.Contains(refused, `"code":"quota"`) || !strings.Contains(refused, "30000 bytes per device") {
		t.Fatalf("stored %d bytes over plugins, then %q", stored, refused)
	}
}

// TestRegisterLowOrderBoxPub: registration refuses a boxPub of small order — all zeros, one,
// the two points of order 8, p−1, p, p+1, and the same with the unused top bit set — even
// with a valid proof of work, as channels refuse such a chanPub or peerPub; a real key passes.
func TestRegisterLowOrderBoxPub(t *testing.T) {
	e := newEnv(t, nil)
	small := []string{
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0100000000000000000000000000000000000000000000000000000000000000",
		"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
		"5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"0000000000000000000000000000000000000000000000000000000000000080",
		"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880",
	}
	register := func(boxPub string) resp {
		_, sp, _ := newKeys()
		m := e.meta()
		n, err := protocol.SolvePow(context.Background(), m.Pow.Salt, sp, boxPub, m.Pow.Difficulty)
		if err != nil {
			t.Fatal(err)
		}
		return e.do("POST", "/v1/devices", "", protocol.RegisterDeviceRequest{SignPub: sp, BoxPub: boxPub,
			Pow: protocol.PowSolution{Salt: m.Pow.Salt, Nonce: n}})
	}
	for _, h := range small {
		b, _ := hex.DecodeString(h)
		r := register(protocol.B64.EncodeToString(b))
		if r.status != 400 || string(r.body) != `{"error":{"code":"bad_request","message":"boxPub: a low-order X25519 key"}}`+"\n" {
			t.Errorf("boxPub %s: %d %s", h, r.status, r.body)
		}
	}
	_, _, good := newKeys()
	if r := register(good); r.status != 200 {
		t.Fatalf("a real boxPub: %d %s", r.status, r.body)
	}
}
