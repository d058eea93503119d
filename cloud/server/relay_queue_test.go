package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// A burst the frame-rate limit allows must not disconnect the party at the other end: when the
// receiver's send queue is full the frame is dropped and the sender gets a rate_limited error
// frame, while the receiver stays connected (it used to be closed with 1008 "too slow").
func TestRelayFullQueueDropsFrameNotReceiver(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "card-share", "channels")
	sh, r := e.openChannel(tok, 900, 1)
	if r.status != 200 {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	v, r := e.join(sh)
	if r.status != 200 {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	rm, err := e.srv.hub.room(context.Background(), sh.id)
	if err != nil {
		t.Fatal(err)
	}
	// Receivers without writers and a 1-byte bound: what attaching sends (hello, presence)
	// fills them past it.
	owner, peer := newConn(1, time.Minute), newConn(1, time.Minute)
	if !rm.attachOwner(owner, e.srv.nowMs()) {
		t.Fatal("attachOwner refused")
	}
	st := rm.attachPeer(sha256B64(v.token), peer, e.srv.nowMs())
	if st == nil {
		t.Fatal("attachPeer refused")
	}
	env, _ := protocol.Seal(v.key[:], map[string]int{"n": 1})
	toPeer, _ := json.Marshal(map[string]any{"t": "msg", "to": v.peerID, "env": env})
	toOwner, _ := json.Marshal(map[string]any{"t": "msg", "env": env})

	want := `{"t":"error","code":"rate_limited","message":"peer ` + v.peerID + ` is not reading fast enough; frame dropped"}`
	if got := string(e.srv.relayOwnerFrame(rm, toPeer)); got != want {
		t.Errorf("owner → full peer queue: %s\nwant %s", got, want)
	}
	pe, reply := e.srv.relayPeerFrame(rm, st, toOwner)
	want = `{"t":"error","code":"rate_limited","message":"the owner is not reading fast enough; frame dropped"}`
	if pe == nil || pe.Code != protocol.CodeRateLimited || string(reply) != want {
		t.Errorf("peer → full owner queue: %v %s\nwant %s", pe, reply, want)
	}
	for name, c := range map[string]*conn{"owner": owner, "peer": peer} {
		select {
		case <-c.done:
			t.Errorf("%s was disconnected (code %d %q) for a full queue", name, c.code, c.reason)
		default:
		}
	}
}
