package server

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// TestDeviceQuotaOverHTTP is the attack the device-wide quota exists for (docs/CLOUD.md "Quotas per device"): one device writes values of a
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
