package natsbus_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/enginetest"
	"github.com/pkuinfo/harness/cloud/server/natsbus"
	"github.com/pkuinfo/harness/cloud/server/pgstore"
)

// node is one `harness cloud serve` as a test runs it: its own PostgreSQL pool and NATS
// connection (as a separate process would have), a server, and an HTTP listener.
type node struct {
	URL  string
	ln   *trackingListener
	srv  *server.Server
	hs   *httptest.Server
	bus  *natsbus.Bus
	st   *pgstore.Store
	once sync.Once
}

// kill stops the node as a crash would: the listener and every connection drop, the NATS
// connection closes without the node saying it is gone.
func (n *node) kill() {
	n.once.Do(func() {
		n.ln.dropAll() // sockets too, which httptest no longer tracks once hijacked
		n.hs.CloseClientConnections()
		n.hs.Close()
		n.bus.Close()
	})
}

func startNode(t testing.TB, dsn, natsURL, name string, configure ...func(*server.Config)) *node {
	t.Helper()
	ctx := context.Background()
	st, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	bus, err := natsbus.Connect(natsURL, "harness-cloud "+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	cfg.Bus = bus
	// Unique on the shared NATS server: other test processes' nodes announce themselves there.
	cfg.Node = name + "-" + rand.Text()[:8]
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{srv: srv, bus: bus, st: st}
	n.hs = httptest.NewUnstartedServer(srv)
	n.ln = &trackingListener{Listener: n.hs.Listener, conns: map[net.Conn]bool{}}
	n.hs.Listener = n.ln
	n.hs.Start()
	n.URL = n.hs.URL
	t.Cleanup(func() {
		n.kill()
		srv.Close()
		st.Close()
	})
	return n
}

// twoNodes starts nodes a and b on one fresh PostgreSQL schema and one NATS server.
func twoNodes(t testing.TB, configure ...func(*server.Config)) (a, b *node) {
	dsn := enginetest.Postgres(t)
	natsURL := enginetest.NATS(t)
	return startNode(t, dsn, natsURL, "a", configure...), startNode(t, dsn, natsURL, "b", configure...)
}

var fast = client.Backoff{Min: 20 * time.Millisecond, Max: 200 * time.Millisecond}

func newClient(t testing.TB, base string, ids client.IdentityStore) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: base, Identities: ids, Backoff: fast})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openChannel opens a channel as plugin "demo" of a new device on base.
func openChannel(t testing.TB, base string, maxPeers int) (*client.Channel, *client.Plugin) {
	t.Helper()
	p, err := newClient(t, base, nil).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(context.Background(), client.OpenOptions{TTL: 10 * time.Minute, MaxPeers: maxPeers, Page: "view", Meta: "m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Disconnect)
	next(t, ch.Events(), client.EventConnected)
	return ch, p
}

// linkOn is the channel's share link with its origin moved to base: the viewer opens it
// through another node (as a load balancer would send it).
func linkOn(t testing.TB, ch *client.Channel, from, base string) client.SecretLink {
	t.Helper()
	l, err := client.ParseSecretLink(strings.Replace(ch.Link().Reveal(), from, base, 1))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func join(t testing.TB, link client.SecretLink) *client.Viewer {
	t.Helper()
	v, err := client.Join(context.Background(), link, client.ViewerOptions{Backoff: fast})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Leave)
	return v
}

// next returns the next event of type want, skipping others; it fails after 10 s.
func next(t testing.TB, events <-chan client.Event, want client.EventType) client.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("events ended while waiting for %s", want)
			}
			if ev.Type == want {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event in 10 s", want)
		}
	}
}

// ownerEvent waits for the viewer to hear that the owner is online (or offline). The viewer's
// hello may have been answered before the owner's node said it has the owner, so an earlier
// "online" may come first.
func ownerEvent(t testing.TB, v *client.Viewer, online bool) {
	t.Helper()
	for {
		if ev := next(t, v.Events(), client.EventOwner); ev.Online == online {
			return
		}
	}
}

// until polls cond for up to 10 s.
func until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestCrossNodeRelay: the owner on node a, the viewer on node b. Join, presence both ways,
// frames both ways, extend, kick and close all cross the bus.
func TestCrossNodeRelay(t *testing.T) {
	a, b := twoNodes(t)
	ctx := context.Background()
	ch, _ := openChannel(t, a.URL, 3)
	v := join(t, linkOn(t, ch, a.URL, b.URL))
	if ev := next(t, ch.Events(), client.EventJoin); ev.PeerID != v.PeerID() {
		t.Fatalf("join from node b: %+v", ev)
	}
	next(t, v.Events(), client.EventConnected)
	until(t, "the viewer on b to see the owner on a online", v.OwnerOnline)
	// The owner's client counts a viewer online from its join; node a says so once node b has
	// told it the viewer's socket is up.
	if ev := next(t, ch.Events(), client.EventPeer); !ev.Online || ev.PeerID != v.PeerID() {
		t.Fatalf("peer event on a: %+v", ev)
	}

	if err := ch.Send(ctx, v.PeerID(), map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventMessage); string(ev.Msg) != `{"n":1}` {
		t.Errorf("viewer got %s", ev.Msg)
	}
	if err := v.Send(ctx, "back"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch.Events(), client.EventMessage); string(ev.Msg) != `"back"` || ev.PeerID != v.PeerID() {
		t.Errorf("owner got %+v", ev)
	}
	if _, err := ch.Extend(ctx, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	next(t, v.Events(), client.EventExtended)

	// A second viewer through node a; the owner kicks the first (on b).
	v2 := join(t, ch.Link())
	next(t, ch.Events(), client.EventJoin)
	next(t, v2.Events(), client.EventConnected)
	if err := ch.Kick(ctx, v.PeerID()); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventClosed); ev.Reason != "kicked" {
		t.Errorf("kicked viewer: %+v", ev)
	}
	// The seat is free on every node: a third viewer through b takes it.
	v3 := join(t, linkOn(t, ch, a.URL, b.URL))
	next(t, v3.Events(), client.EventConnected)

	// Presence: v3 leaves, the owner on a hears it.
	next(t, ch.Events(), client.EventJoin)
	v3.Leave()
	until(t, "the owner to see v3 offline", func() bool {
		for _, p := range ch.Peers() {
			if p.PeerID == v3.PeerID() {
				return !p.Online
			}
		}
		return true
	})

	// The owner closes; the viewer on a and a fresh viewer on b both get closed.
	v4 := join(t, linkOn(t, ch, a.URL, b.URL))
	next(t, v4.Events(), client.EventConnected)
	if err := ch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v4.Events(), client.EventClosed); ev.Reason != "owner" {
		t.Errorf("viewer on b after close: %+v", ev)
	}
	if ev := next(t, v2.Events(), client.EventClosed); ev.Reason != "owner" {
		t.Errorf("viewer on a after close: %+v", ev)
	}
}

// TestCrossNodeOwnerOffline: a viewer on b sees the owner on a go offline and come back.
func TestCrossNodeOwnerOffline(t *testing.T) {
	a, b := twoNodes(t)
	ch, p := openChannel(t, a.URL, 1)
	v := join(t, linkOn(t, ch, a.URL, b.URL))
	next(t, v.Events(), client.EventConnected)
	until(t, "owner online", v.OwnerOnline)
	state := ch.State()
	ch.Disconnect()
	ownerEvent(t, v, false)
	// While the owner is away a frame from the viewer is refused (conflict), not lost silently.
	if err := v.Send(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventError); ev.Code != "conflict" {
		t.Errorf("send with the owner offline: %+v", ev)
	}
	ch2, err := p.ResumeChannel(context.Background(), state, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ch2.Disconnect()
	ownerEvent(t, v, true)
}

// TestOneOwnerSocketAcrossNodes: the owner's socket on a is replaced (4009) when the same owner
// connects through b; the newer one relays.
func TestOneOwnerSocketAcrossNodes(t *testing.T) {
	a, b := twoNodes(t)
	ids := &client.MemIdentityStore{}
	pa, err := newClient(t, a.URL, ids).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := pa.OpenChannel(context.Background(), client.OpenOptions{TTL: 10 * time.Minute, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	next(t, ch.Events(), client.EventConnected)
	v := join(t, ch.Link())
	next(t, v.Events(), client.EventConnected)

	pb, err := newClient(t, b.URL, ids).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch2, err := pb.ResumeChannel(context.Background(), ch.State(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ch2.Disconnect()
	next(t, ch2.Events(), client.EventConnected)
	select {
	case <-ch.Done():
		if !errors.Is(ch.Err(), client.ErrReplaced) {
			t.Errorf("old owner socket ended with %v, want ErrReplaced", ch.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the owner socket on a was not replaced")
	}
	if err := v.Send(context.Background(), "to b"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch2.Events(), client.EventMessage); string(ev.Msg) != `"to b"` {
		t.Errorf("new owner got %+v", ev)
	}
}

// TestSeatsAndRatesAcrossNodes: maxPeers holds when viewers join through both nodes at once,
// and a viewer's frame allowance is one, whichever nodes its frames go through.
func TestSeatsAndRatesAcrossNodes(t *testing.T) {
	a, b := twoNodes(t)
	ch, _ := openChannel(t, a.URL, 1)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := a.URL
			if i%2 == 1 {
				base = b.URL
			}
			v, err := client.Join(context.Background(), linkOn(t, ch, a.URL, base), client.ViewerOptions{Backoff: fast})
			if err == nil {
				v.Leave()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !client.IsCode(err, "conflict"):
			t.Errorf("join: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d viewers got the one seat", ok)
	}
}

// TestNodeKilledMidChannel: owner and viewer reach the cluster through a load balancer; the
// node they are on dies; both reconnect to the other node and the channel goes on.
func TestNodeKilledMidChannel(t *testing.T) {
	a, b := twoNodes(t)
	lb := newBalancer(t, a.hs.Listener.Addr().String(), b.hs.Listener.Addr().String())
	ctx := context.Background()
	ch, _ := openChannel(t, lb.URL, 1)
	v := join(t, ch.Link())
	next(t, v.Events(), client.EventConnected)
	until(t, "owner online", v.OwnerOnline)
	if ev := next(t, ch.Events(), client.EventPeer); !ev.Online {
		t.Fatalf("peer event: %+v", ev)
	}
	if err := ch.Send(ctx, v.PeerID(), 1); err != nil {
		t.Fatal(err)
	}
	next(t, v.Events(), client.EventMessage)

	a.kill()
	next(t, ch.Events(), client.EventDisconnected)
	next(t, ch.Events(), client.EventConnected)
	until(t, "the viewer back on b", v.Connected)
	until(t, "the owner on b to see the viewer online", func() bool {
		ps := ch.Peers()
		return len(ps) == 1 && ps[0].Online
	})
	// Drain the viewer's events so far, then the channel carries on.
	until(t, "a frame after the failover", func() bool {
		if err := ch.Send(ctx, v.PeerID(), 2); err != nil {
			return false
		}
		for {
			select {
			case ev := <-v.Events():
				if ev.Type == client.EventMessage && string(ev.Msg) == "2" {
					return true
				}
			case <-time.After(200 * time.Millisecond):
				return false
			}
		}
	})
	if err := v.Send(ctx, "still here"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch.Events(), client.EventMessage); string(ev.Msg) != `"still here"` {
		t.Errorf("owner got %+v", ev)
	}
}

// balancer is a TCP load balancer for tests: each connection goes to the first backend that
// accepts it, so when one dies new connections go to the next.
type balancer struct {
	URL string
	ln  net.Listener
}

func newBalancer(t testing.TB, backends ...string) *balancer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for _, be := range backends {
					up, err := net.DialTimeout("tcp", be, time.Second)
					if err != nil {
						continue
					}
					defer up.Close()
					done := make(chan struct{}, 2)
					go func() { io.Copy(up, c); done <- struct{}{} }()
					go func() { io.Copy(c, up); done <- struct{}{} }()
					<-done
					return
				}
			}()
		}
	}()
	return &balancer{URL: "http://" + ln.Addr().String(), ln: ln}
}

var _ http.Handler = (*server.Server)(nil)

// trackingListener remembers every connection it accepted, so that a test can drop them all.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns[c] = true
		l.mu.Unlock()
	}
	return c, err
}

func (l *trackingListener) dropAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		c.Close()
	}
	clear(l.conns)
}

// TestRateLimitsAcrossNodes: the per-IP registration limit counts the registrations of every
// node (PostgreSQL's shared windows): 3 per hour in all, whichever node they go to.
func TestRateLimitsAcrossNodes(t *testing.T) {
	a, b := twoNodes(t, func(c *server.Config) {
		c.Registrations = server.RatePolicy{Name: "register", Quota: 3, Window: time.Hour}
	})
	var results []string
	for _, base := range []string{a.URL, b.URL, a.URL, b.URL, a.URL} {
		_, err := newClient(t, base, nil).Device(context.Background())
		switch {
		case err == nil:
			results = append(results, "ok")
		case client.IsCode(err, "rate_limited"):
			results = append(results, "429")
		default:
			t.Fatalf("register: %v", err)
		}
	}
	if got := strings.Join(results, " "); got != "ok ok ok 429 429" {
		t.Errorf("registrations through a, b, a, b, a: %s", got)
	}
}

// TestRequestLimitAcrossNodesNATS: a device's requests spread over two nodes count against one
// per-device request limit (the nodes gossip their counts on NATS).
func TestRequestLimitAcrossNodesNATS(t *testing.T) {
	a, b := twoNodes(t, func(c *server.Config) {
		c.RequestsPerDevice = server.RatePolicy{Name: "requests", Quota: 20, Window: time.Hour}
	})
	p, err := newClient(t, a.URL, nil).Plugin("demo", "store")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := p.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	get := func(base string) int {
		req, _ := http.NewRequest("GET", base+"/v1/store", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	ok := 0
	// Alternate nodes, pausing past the gossip interval now and then: without the shared
	// count each node would allow 20 (40 in all).
	for i := range 60 {
		if get([]string{a.URL, b.URL}[i%2]) == 200 {
			ok++
		}
		if i%5 == 4 {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if ok > 30 || ok < 20 {
		t.Errorf("%d of 60 requests over two nodes allowed, want 20 and at most a few more (what a gossip interval lets through), never 40", ok)
	}
}
