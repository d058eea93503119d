package client_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
)

// TestChannelBoundsPeersAServerAnnounces: the relay cannot make the owner keep more viewers than
// the channel allows: a server (compromised, or a man in the middle of a custom provider) that
// sends join after join with new seats gets the ones past maxPeers refused with an error event,
// so the owner's memory and key derivations stay bounded by the channel's own limit.
func TestChannelBoundsPeersAServerAnnounces(t *testing.T) {
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const joins = 2000
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/channels/") || !strings.HasSuffix(r.URL.Path, "/ws") {
			srv.ServeHTTP(w, r)
			return
		}
		// The owner socket, as a hostile relay answers it.
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/channels/"), "/ws")
		exp := time.Now().Add(time.Hour).UnixMilli()
		c.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `{"t":"hello","id":%q,"expiresAt":%d,"peers":[]}`, id, exp))
		for i := range joins {
			k, _ := ecdh.X25519().GenerateKey(rand.Reader)
			pub := protocol.B64.EncodeToString(k.PublicKey().Bytes())
			if err := c.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `{"t":"join","peerId":"peer%05d","peerPub":%q,"at":%d}`, i, pub, exp)); err != nil {
				return
			}
		}
		<-r.Context().Done()
	}))
	defer hs.Close()
	c, err := client.New(client.Config{BaseURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, MaxPeers: 2, EventBuffer: joins + 16})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	got, refused := 0, 0
	for deadline := time.After(20 * time.Second); got+refused < joins; {
		select {
		case ev := <-ch.Events():
			switch ev.Type {
			case client.EventJoin:
				got++
			case client.EventError:
				refused++
			}
		case <-deadline:
			t.Fatalf("after %d joins and %d refusals no more events", got, refused)
		}
	}
	if got != 2 || len(ch.Peers()) != 2 {
		t.Errorf("the owner took %d joins and keeps %d peers on a maxPeers 2 channel", got, len(ch.Peers()))
	}
}

// TestChannelStateKeepsMaxPeers: the seats survive a save and a resume, and a state that does
// not say them (saved before they were kept) resumes with client.MaxResumePeers.
func TestChannelStateKeepsMaxPeers(t *testing.T) {
	ts := newTestServer(t)
	p, err := ts.newClient(t, nil).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(context.Background(), client.OpenOptions{TTL: time.Minute, MaxPeers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	b, err := ch.State().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var st client.ChannelState
	if err := st.UnmarshalBinary(b); err != nil || st.MaxPeers != 3 {
		t.Fatalf("maxPeers %d after a round trip (%v)", st.MaxPeers, err)
	}
	old := strings.Replace(string(b), `,"maxPeers":3`, "", 1)
	if err := st.UnmarshalBinary([]byte(old)); err != nil || st.MaxPeers != 0 {
		t.Fatalf("an older state: maxPeers %d (%v)", st.MaxPeers, err)
	}
	bad := strings.Replace(string(b), `"maxPeers":3`, `"maxPeers":-1`, 1)
	if err := st.UnmarshalBinary([]byte(bad)); err == nil {
		t.Fatal("a negative maxPeers was accepted")
	}
}
