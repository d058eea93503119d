// Package storagetest holds the conformance script every cloud/server Storage must pass, so the
// embedded SQLite store, the in-memory one and the PostgreSQL one (cloud/server/pgstore) are held
// to one behaviour by one golden transcript (cloud/server/testdata/storage-conformance.txt), in
// the way testing/fstest serves fs.FS implementations.
package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
)

func i64(v int64) *int64 { return &v }

// Transcript runs the conformance script against st, which must be empty, and returns the
// transcript of results, one line per call; compare it with the golden file. A storage failure
// (an error that is none of ErrNotFound, ErrConflict, *QuotaError) fails t at once.
func Transcript(t testing.TB, st server.Storage) string {
	ctx := context.Background()
	out := ""
	log := func(format string, args ...any) { out += fmt.Sprintf(format, args...) + "\n" }
	e := func(err error) string {
		var qe *server.QuotaError
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, server.ErrNotFound):
			return "not found"
		case errors.Is(err, server.ErrConflict):
			return "conflict"
		case errors.As(err, &qe):
			return qe.Error()
		}
		t.Fatalf("storage failure: %v", err)
		return ""
	}
	// Devices and nonces.
	log("create d1: %s", e(st.CreateDevice(ctx, server.Device{ID: "d1", SignPub: "s1", BoxPub: "b1", CreatedAt: 1})))
	log("create d1 again (same signPub): %s", e(st.CreateDevice(ctx, server.Device{ID: "d2", SignPub: "s1", BoxPub: "b2"})))
	log("create d2: %s", e(st.CreateDevice(ctx, server.Device{ID: "d2", SignPub: "s2", BoxPub: "b2"})))
	d, err := st.Device(ctx, "d1")
	log("device d1: %+v %s", d, e(err))
	_, err = st.Device(ctx, "nope")
	log("device nope: %s", e(err))
	log("nonce n1: %s", e(st.UseNonce(ctx, "d1", "n1", 100, 0)))
	log("nonce n1 again: %s", e(st.UseNonce(ctx, "d1", "n1", 100, 50)))
	log("nonce n1 other device: %s", e(st.UseNonce(ctx, "d2", "n1", 100, 50)))
	log("nonce n1 after it is forgotten: %s", e(st.UseNonce(ctx, "d1", "n1", 300, 100)))

	// Store: versions, conditions, expiry, quotas, listing.
	ns := server.Namespace{Device: "d1", Plugin: "p"}
	q := server.StoreQuota{StoreLimits: protocol.StoreLimits{MaxBytes: 60, MaxKeys: 3, MaxValueBytes: 40}}
	put := func(key, val string, ifMatch *int64, exp, now int64) {
		v, err := st.StorePut(ctx, ns, server.StoreItem{Key: key, Value: json.RawMessage(val), ExpiresAt: exp}, ifMatch, q, now)
		im := "-"
		if ifMatch != nil {
			im = fmt.Sprint(*ifMatch)
		}
		log("put %s=%s if-match %s at %d: version %d %s", key, val, im, now, v, e(err))
	}
	put("a", `1`, i64(0), 0, 10)
	put("a", `2`, i64(0), 0, 11)
	put("a", `2`, i64(1), 0, 12)
	put("b/x", `"bx"`, nil, 20, 13)
	put("b/y", `"by"`, nil, 0, 14)
	put("c", `"cccccccccccccccccccc"`, nil, 0, 15)
	put("c", `"ccccccccccccccccccccccccccccccccccccccccccccccc"`, nil, 0, 25)
	put("c", `3`, nil, 0, 25)
	items, _ := st.StoreList(ctx, ns, "b/", "", 10, 15)
	log("list b/ at 15: %+v", items)
	items, _ = st.StoreList(ctx, ns, "", "", 2, 25)
	log("list all at 25, limit 2: %+v", items)
	items, _ = st.StoreList(ctx, ns, "", "a", 10, 25)
	log("list after a at 25: %+v", items)
	it, err := st.StoreGet(ctx, ns, "a", 30)
	log("get a: %s %d %d %d %s", it.Value, it.Version, it.UpdatedAt, it.ExpiresAt, e(err))
	_, err = st.StoreGet(ctx, ns, "b/x", 20)
	log("get b/x at its expiry: %s", e(err))
	log("delete b/x after expiry: %s", e(st.StoreDelete(ctx, ns, "b/x", 21)))
	log("delete a: %s", e(st.StoreDelete(ctx, ns, "a", 30)))
	log("delete a again: %s", e(st.StoreDelete(ctx, ns, "a", 30)))
	put("a", `4`, i64(0), 0, 31)
	_, err = st.StoreGet(ctx, server.Namespace{Device: "d1", Plugin: "other"}, "b/y", 31)
	log("other plugin reads b/y: %s", e(err))
	// A JSON null is a value like any other, distinct from no value (seed 003: `value?: unknown`).
	nulls := server.Namespace{Device: "d1", Plugin: "nulls"}
	for _, kv := range [][2]string{{"null", `null`}, {"absent", ``}, {"zero", `0`}} {
		v, err := st.StorePut(ctx, nulls, server.StoreItem{Key: kv[0], Value: json.RawMessage(kv[1])}, nil, q, 32)
		log("put %s=%q: version %d %s", kv[0], kv[1], v, e(err))
		it, err := st.StoreGet(ctx, nulls, kv[0], 33)
		log("get %s: %q (%d bytes) %s", kv[0], it.Value, len(it.Value), e(err))
	}
	log("sweep: %s", e(st.Sweep(ctx, 40)))

	// Channels, peers, mailbox.
	meta := protocol.Envelope{V: 1, N: "n", C: "c"}
	ch := func(id, dev string, exp int64) server.Channel {
		return server.Channel{ID: id, Device: dev, Plugin: "p", JoinHash: "h", ChanPub: "k", Meta: meta, MaxPeers: 1, Page: "view", CreatedAt: 1, ExpiresAt: exp}
	}
	log("create c1: %s", e(st.CreateChannel(ctx, ch("c1", "d1", 1000), 2, 0)))
	log("create c1 again: %s", e(st.CreateChannel(ctx, ch("c1", "d1", 1000), 5, 0)))
	log("create c2: %s", e(st.CreateChannel(ctx, ch("c2", "d1", 500), 2, 0)))
	log("create c3 (two open): %s", e(st.CreateChannel(ctx, ch("c3", "d1", 1000), 2, 0)))
	log("create c3 after c2 expired: %s", e(st.CreateChannel(ctx, ch("c3", "d1", 1000), 2, 600)))
	log("peer p1: %s", e(st.AddPeer(ctx, "c1", server.Peer{ID: "p1", Pub: "pp", TokenHash: "t1", JoinedAt: 5}, 1)))
	log("peer p2 (full): %s", e(st.AddPeer(ctx, "c1", server.Peer{ID: "p2", Pub: "pp", TokenHash: "t2", JoinedAt: 6}, 1)))
	log("peer on missing channel: %s", e(st.AddPeer(ctx, "zz", server.Peer{ID: "p3", TokenHash: "t3"}, 1)))
	cid, p, err := st.PeerByToken(ctx, "t1")
	log("peer by t1: %s %+v %s", cid, p, e(err))
	c, err := st.Channel(ctx, "c1")
	log("channel c1: %+v %s", c, e(err))
	log("extend c1: %s", e(st.SetChannelExpiry(ctx, "c1", 2000)))
	box := func(slot string, exp, now int64) {
		log("mailbox %s: %s", slot, e(st.MailboxPut(ctx, "c1", server.MailboxItem{Slot: slot, Env: meta, ExpiresAt: exp}, 2, now)))
	}
	box("s1", 100, 0)
	box("s2", 50, 0)
	box("s3", 100, 0)
	box("s3", 100, 60)
	box("s1", 200, 60)
	mb, _ := st.MailboxList(ctx, "c1", 60)
	log("mailbox at 60: %+v", mb)
	log("delete s9: %s", e(st.MailboxDelete(ctx, "c1", "s9")))
	log("delete s1: %s", e(st.MailboxDelete(ctx, "c1", "s1")))
	log("remove p1: %s", e(st.RemovePeer(ctx, "c1", "p1")))
	log("remove p1 again: %s", e(st.RemovePeer(ctx, "c1", "p1")))
	_, _, err = st.PeerByToken(ctx, "t1")
	log("peer by t1 after removal: %s", e(err))
	st.AddPeer(ctx, "c1", server.Peer{ID: "p4", Pub: "pp", TokenHash: "t4", JoinedAt: 7}, 1)
	log("close c1: %s", e(st.SetChannelStatus(ctx, "c1", protocol.StatusClosed)))
	c, _ = st.Channel(ctx, "c1")
	mb, _ = st.MailboxList(ctx, "c1", 60)
	log("c1 closed: status %s peers %d mailbox %d", c.Status, len(c.Peers), len(mb))
	log("clear c3 mailbox: %s", e(st.MailboxClear(ctx, "c3")))

	// Secrets and deletion.
	s1, _ := st.Secret(ctx, "k")
	s2, _ := st.Secret(ctx, "k")
	s3, _ := st.Secret(ctx, "other")
	log("secret stable: %v, 32 bytes: %v, distinct: %v", string(s1) == string(s2), len(s1) == 32, string(s1) != string(s3))
	chans, err := st.DeleteDevice(ctx, "d1")
	log("delete d1: %v %s", chans, e(err))
	_, err = st.DeleteDevice(ctx, "d1")
	log("delete d1 again: %s", e(err))
	_, err = st.StoreGet(ctx, ns, "b/y", 41)
	log("d1 store after deletion: %s", e(err))
	_, err = st.Channel(ctx, "c3")
	log("d1 channel after deletion: %s", e(err))
	log("d1 signPub free again: %s", e(st.CreateDevice(ctx, server.Device{ID: "d9", SignPub: "s1", BoxPub: "b"})))
	// Channel records go a day after expiry.
	st.CreateChannel(ctx, ch("c7", "d2", 1000), 5, 0)
	st.Sweep(ctx, 1000+server.ChannelRetentionMs-1)
	_, err = st.Channel(ctx, "c7")
	log("c7 just before retention ends: %s", e(err))
	st.Sweep(ctx, 1000+server.ChannelRetentionMs)
	_, err = st.Channel(ctx, "c7")
	log("c7 after retention: %s", e(err))
	return out
}

// DeviceQuota holds st to the device-wide store bounds (docs/CLOUD.md "Quotas per device"): a device that spreads its
// values over plugin names of its own choosing is held to the device's bytes and plugin count;
// replacing a value, a plugin whose values all expired or were deleted, and another device are
// counted right. Every Storage runs it.
func DeviceQuota(t *testing.T, st server.Storage) {
	t.Helper()
	ctx := context.Background()
	q := server.StoreQuota{StoreLimits: protocol.StoreLimits{MaxBytes: 1000, MaxKeys: 10, MaxValueBytes: 500},
		Device: server.DeviceStoreLimits{MaxBytes: 250, MaxPlugins: 3}}
	val := json.RawMessage(`"` + strings.Repeat("x", 98) + `"`) // 100 bytes, 101 with key "k"
	put := func(dev, plugin, key string, v json.RawMessage, exp, now int64) string {
		_, err := st.StorePut(ctx, server.Namespace{Device: dev, Plugin: plugin}, server.StoreItem{Key: key, Value: v, ExpiresAt: exp}, nil, q, now)
		var qe *server.QuotaError
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
		if err := st.StoreDelete(ctx, server.Namespace{Device: "d1", Plugin: "p3"}, k, 2); err != nil {
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
}
