package cloud

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
)

// restartable is a reference server that can be stopped and started again on the same address
// and the same storage, as an operator restarting the provider leaves it: the durable records
// (devices, channels, secrets) stay, every socket drops.
type restartable struct {
	t    testing.TB
	st   server.Storage
	addr string
	URL  string
	srv  *server.Server
	hs   *http.Server
	ln   *trackingListener
}

func newRestartable(t testing.TB) *restartable {
	t.Helper()
	st, err := server.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	r := &restartable{t: t, st: st, addr: "127.0.0.1:0"}
	r.start()
	r.URL = "http://" + r.addr
	t.Cleanup(func() {
		r.stop()
		st.Close()
	})
	return r
}

// start serves a new server on r's address (the port of the first start).
func (r *restartable) start() {
	r.t.Helper()
	cfg := server.DefaultConfig(r.st)
	cfg.PowDifficulty = 4
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	var ln net.Listener
	for deadline := time.Now().Add(5 * time.Second); ; {
		ln, err = net.Listen("tcp", r.addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.srv, r.ln = srv, &trackingListener{Listener: ln, conns: map[net.Conn]bool{}}
	r.hs = &http.Server{Handler: srv}
	go r.hs.Serve(r.ln)
}

// stop closes the server and every connection, WebSockets included.
func (r *restartable) stop() {
	if r.hs == nil {
		return
	}
	r.ln.dropAll()
	r.hs.Close()
	r.srv.Close()
	r.hs = nil
}

// A provider restart (server closed, a new one on the same storage and address): the owner
// socket retries with backoff while it is down (a few attempts, not a tight loop), status says
// offline once the provider has been down past the probe interval, and when it is back the
// owner and the viewer reconnect and the share goes on with the same channel and keys.
func TestChannelSurvivesProviderRestart(t *testing.T) {
	ctx := context.Background()
	r := newRestartable(t)
	m, _ := newManager(t)
	mustUse(t, m, r.URL)
	var skew atomic.Int64 // how far the manager's clock runs ahead, in ns
	m.SetClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	d := storeDecl("card-share", true, "channels")
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin(d)
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 30 * time.Minute, MaxPeers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	waitFor(t, ch.Events(), client.EventConnected)
	v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	waitFor(t, ch.Events(), client.EventJoin)
	waitFor(t, v.Events(), client.EventConnected)
	send := func(code string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := ch.Send(ctx, v.PeerID(), map[string]string{"t": "code", "code": code})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("send %s: %v", code, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		want := `{"code":"` + code + `","t":"code"}`
		for {
			ev := waitFor(t, v.Events(), client.EventMessage)
			if string(ev.Msg) == want {
				return
			}
			t.Logf("viewer got %s", ev.Msg)
		}
	}
	send("1")
	if s := p.Status(ctx); !s.Online || !s.Available {
		t.Fatalf("status before the restart = %+v", s)
	}

	r.stop()
	waitFor(t, ch.Events(), client.EventDisconnected)
	// Two seconds down: each failed dial is one more disconnected event.
	attempts := 0
	for end := time.After(2 * time.Second); end != nil; {
		select {
		case ev := <-ch.Events():
			if ev.Type == client.EventDisconnected {
				attempts++
			}
		case <-end:
			end = nil
		}
	}
	if attempts < 2 || attempts > 10 {
		t.Fatalf("%d reconnect attempts in 2 s while the provider was down; want a few, spaced by backoff", attempts)
	}
	t.Logf("%d reconnect attempts in 2 s down", attempts)
	// Down past the probe interval: status probes GET /v1/meta and reports offline.
	skew.Store(int64(2 * probeEvery))
	if s := p.Status(ctx); s.Online || s.Available || s.Why != WhyOffline || !s.Consented {
		t.Fatalf("status while the provider is down = %+v", s)
	}
	if s := m.Status(ctx); s.Online || s.Available {
		t.Fatalf("device status while the provider is down = %+v", s)
	}

	r.start()
	if r.URL != "http://"+r.addr {
		t.Fatalf("restarted on %s, not %s", r.addr, r.URL)
	}
	waitFor(t, ch.Events(), client.EventConnected)
	waitFor(t, v.Events(), client.EventConnected)
	send("2")
	skew.Store(int64(4 * probeEvery))
	if s := p.Status(ctx); !s.Online || !s.Available {
		t.Fatalf("status after the restart = %+v", s)
	}
	if ids, _ := p.Channels(ctx); len(ids) != 1 || ids[0] != ch.ID() {
		t.Fatalf("channels after the restart = %v", ids)
	}
}
