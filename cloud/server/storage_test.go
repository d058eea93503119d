package server

import (
	"context"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// TestServerOnMemory runs the server end to end on the in-memory Storage: store versions and a
// relayed frame.
func TestServerOnMemory(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Storage = NewMemory() })
	tok := e.token(e.register(), "demo", "store")
	for i, want := range []string{`{"version":1}`, `{"version":2}`} {
		if r := e.do("PUT", "/v1/store/k", tok, `{"value":1}`); string(r.body) != want+"\n" {
			t.Errorf("put %d: %s", i, r.body)
		}
	}
	if r := e.do("PUT", "/v1/store/k", tok, `{"value":1}`, "If-Match", "1"); r.status != 409 {
		t.Errorf("stale If-Match: %d", r.status)
	}
	o := e.ownerUp(1)
	v, _ := e.join(o.sh)
	o.ws.next()
	peer := e.dial("/v1/c/"+o.sh.id+"/ws?t="+v.token, nil)
	peer.next()
	o.ws.next()
	env1, _ := protocol.SealBytes(v.key[:], []byte(`"hi"`))
	o.ws.send(protocol.OwnerOutFrame{T: "msg", To: v.peerID, Env: env1})
	msg := mustFrame(t, peer.next(), protocol.DecodePeerInFrame)
	if pt, err := protocol.OpenBytes(v.key[:], &msg.Env); err != nil || string(pt) != `"hi"` {
		t.Errorf("opened %s %v", pt, err)
	}
}

// TestRestartKeepsState: a second server on the same database file accepts the tokens and peer
// tokens of the first, and the channel carries on (clients reconnect after 1001).
func TestRestartKeepsState(t *testing.T) {
	path := t.TempDir() + "/cloud.db"
	st, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Storage = st })
	tok := e.token(e.register(), "demo", "store", "channels")
	e.do("PUT", "/v1/store/k", tok, `{"value":"kept"}`)
	sh, _ := e.openChannel(tok, 600, 1)
	v, _ := e.join(sh)
	e.srv.Close()
	st.Close()

	st2, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(t, func(c *Config) { c.Storage = st2; c.Now = e.clk.Now })
	t.Cleanup(func() { st2.Close() })
	if r := e2.do("GET", "/v1/store/k", tok, nil); r.status != 200 || !strings.Contains(string(r.body), `"value":"kept"`) {
		t.Fatalf("store after restart: %d %s", r.status, r.body)
	}
	ow := e2.dial("/v1/channels/"+sh.id+"/ws", ownerHdr(tok))
	hello := mustFrame(t, ow.next(), protocol.DecodeOwnerInFrame)
	if len(hello.Peers) != 1 || hello.Peers[0].PeerID != v.peerID || hello.Peers[0].Online {
		t.Fatalf("hello after restart: %+v", hello)
	}
	peer := e2.dial("/v1/c/"+sh.id+"/ws?t="+v.token, nil)
	if f := mustFrame(t, peer.next(), protocol.DecodePeerInFrame); f.T != "hello" || !f.OwnerOnline {
		t.Errorf("peer hello: %+v", f)
	}
}
