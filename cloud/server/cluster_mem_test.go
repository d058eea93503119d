package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
)

// memBus is a server.Bus in memory, for tests of several nodes without NATS: each subscription
// gets its messages in order on its own goroutine, as nats.go delivers them.
type memBus struct {
	mu   sync.Mutex
	subs map[string][]*memSub
	drop func(data []byte) bool // messages lost on the way, when set
	cut  atomic.Bool            // every message lost (a partition)
}

type memSub struct {
	ch   chan []byte
	once sync.Once
}

func (b *memBus) Publish(subject string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut.Load() || b.drop != nil && b.drop(data) {
		return nil
	}
	for _, s := range b.subs[subject] {
		select {
		case s.ch <- append([]byte(nil), data...):
		default: // a slow consumer loses messages, as on NATS
		}
	}
	return nil
}

func (b *memBus) Subscribe(subject string, handle func([]byte)) (func(), error) {
	s := &memSub{ch: make(chan []byte, 4096)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[string][]*memSub{}
	}
	b.subs[subject] = append(b.subs[subject], s)
	b.mu.Unlock()
	go func() {
		for m := range s.ch {
			handle(m)
		}
	}()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		l := b.subs[subject]
		for i, x := range l {
			if x == s {
				b.subs[subject] = append(l[:i:i], l[i+1:]...)
				s.once.Do(func() { close(s.ch) })
				break
			}
		}
	}, nil
}

// memNodes starts two servers on one in-memory Storage and one memBus.
func memNodes(t *testing.T) (a, b string) {
	urls, _ := memCluster(t, &memBus{}, nil)
	return urls[0], urls[1]
}

// memCluster starts two servers on one in-memory Storage and bus, with the clock now (nil:
// time.Now).
func memCluster(t *testing.T, bus server.Bus, now func() time.Time, configure ...func(*server.Config)) ([]string, []*server.Server) {
	st := server.NewMemory()
	var urls []string
	var srvs []*server.Server
	for _, name := range []string{"a", "b"} {
		url, srv := startServer(t, st, bus, name, now, configure...)
		urls = append(urls, url)
		srvs = append(srvs, srv)
	}
	return urls, srvs
}

// startNode starts one server on st (a node of bus when bus is set) and returns its URL.
func startNode(t *testing.T, st server.Storage, bus server.Bus, name string, configure ...func(*server.Config)) string {
	url, _ := startServer(t, st, bus, name, nil, configure...)
	return url
}

func startServer(t *testing.T, st server.Storage, bus server.Bus, name string, now func() time.Time, configure ...func(*server.Config)) (string, *server.Server) {
	t.Helper()
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 0
	cfg.Now = now
	if bus != nil {
		cfg.Bus, cfg.Node = bus, name
	}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return hs.URL, srv
}

// TestExtendEventLost: when the event of an extension made on node a never reaches node b, b
// reads the stored expiry before expiring the channel, and the viewer on b stays.
func TestExtendEventLost(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	bus := &memBus{drop: func(d []byte) bool { return strings.Contains(string(d), `"k":"extend"`) }}
	urls, srvs := memCluster(t, bus, now)
	ctx := context.Background()
	ca, _ := client.New(client.Config{BaseURL: urls[0], Now: now})
	pa, _ := ca.Plugin("demo", "channels")
	ch, err := pa.OpenChannel(ctx, client.OpenOptions{TTL: time.Minute, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	waitEvent(t, ch.Events(), client.EventConnected)
	link, _ := client.ParseSecretLink(strings.Replace(ch.Link().Reveal(), urls[0], urls[1], 1))
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	waitEvent(t, v.Events(), client.EventConnected)
	// The viewer's presence reaches node a over the bus before the owner sends to it.
	for ev := waitEvent(t, ch.Events(), client.EventPeer); !ev.Online; ev = waitEvent(t, ch.Events(), client.EventPeer) {
	}
	if _, err := ch.Extend(ctx, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()
	srvs[1].Sweep(ctx)
	srvs[0].Sweep(ctx)
	if err := ch.Send(ctx, v.PeerID(), "still open"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, v.Events(), client.EventMessage); string(ev.Msg) != `"still open"` {
		t.Errorf("viewer got %+v", ev)
	}
}

func waitEvent(t *testing.T, events <-chan client.Event, want client.EventType) client.Event {
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

// TestTwoNodesInMemory: the relay across two nodes over a Bus, without external engines (the
// PostgreSQL + NATS version is cloud/server/natsbus): join, frames both ways, the one-owner
// socket rule, kick.
func TestTwoNodesInMemory(t *testing.T) {
	a, b := memNodes(t)
	ctx := context.Background()
	ids := &client.MemIdentityStore{}
	ca, _ := client.New(client.Config{BaseURL: a, Identities: ids})
	pa, _ := ca.Plugin("demo", "channels")
	ch, err := pa.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, MaxPeers: 2, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	waitEvent(t, ch.Events(), client.EventConnected)
	link, _ := client.ParseSecretLink(strings.Replace(ch.Link().Reveal(), a, b, 1))
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	waitEvent(t, ch.Events(), client.EventJoin)
	if ev := waitEvent(t, ch.Events(), client.EventPeer); !ev.Online {
		t.Fatalf("peer: %+v", ev)
	}
	if err := ch.Send(ctx, v.PeerID(), "to b"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, v.Events(), client.EventMessage); string(ev.Msg) != `"to b"` {
		t.Errorf("viewer got %s", ev.Msg)
	}
	if err := v.Send(ctx, "to a"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, ch.Events(), client.EventMessage); string(ev.Msg) != `"to a"` {
		t.Errorf("owner got %s", ev.Msg)
	}
	// The same owner through node b replaces the socket on a.
	cb, _ := client.New(client.Config{BaseURL: b, Identities: ids})
	pb, _ := cb.Plugin("demo", "channels")
	ch2, err := pb.ResumeChannel(ctx, ch.State(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ch2.Disconnect()
	select {
	case <-ch.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the owner socket on a was not replaced")
	}
	if err := ch2.Kick(ctx, v.PeerID()); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, v.Events(), client.EventClosed); ev.Reason != "kicked" {
		t.Errorf("viewer: %+v", ev)
	}
}

// TestPartitionHeals: while the bus is cut the nodes stop hearing each other, and after 3.5 s
// each shows the other's parties offline; once it heals they resync and the channel goes on.
func TestPartitionHeals(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 3.5 s node timeout")
	}
	bus := &memBus{}
	urls, _ := memCluster(t, bus, nil)
	ctx := context.Background()
	ca, _ := client.New(client.Config{BaseURL: urls[0]})
	pa, _ := ca.Plugin("demo", "channels")
	ch, err := pa.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	waitEvent(t, ch.Events(), client.EventConnected)
	link, _ := client.ParseSecretLink(strings.Replace(ch.Link().Reveal(), urls[0], urls[1], 1))
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	peerEvent := func(online bool) {
		t.Helper()
		for {
			if ev := waitEvent(t, ch.Events(), client.EventPeer); ev.Online == online {
				return
			}
		}
	}
	peerEvent(true)
	bus.cut.Store(true)
	peerEvent(false) // node a has forgotten node b's parties
	bus.cut.Store(false)
	peerEvent(true) // resynced
	if err := ch.Send(ctx, v.PeerID(), "after"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, v.Events(), client.EventMessage); string(ev.Msg) != `"after"` {
		t.Errorf("viewer got %+v", ev)
	}
}

// TestChannelInfoAcrossNodes: GET /v1/c/{id} on a node that has no party of the channel still
// says the owner, connected to the other node, is online.
func TestChannelInfoAcrossNodes(t *testing.T) {
	urls, _ := memCluster(t, &memBus{}, nil)
	ctx := context.Background()
	ca, _ := client.New(client.Config{BaseURL: urls[0]})
	pa, _ := ca.Plugin("demo", "channels")
	ch, err := pa.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	waitEvent(t, ch.Events(), client.EventConnected)
	res, err := http.Get(urls[1] + "/v1/c/" + ch.ID())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"ownerOnline":true`) {
		t.Errorf("info on node b: %s", body)
	}
}

// TestRequestLimitAcrossNodes: the per-device request limit counts the requests a device makes
// on every node. Each node tells the others its counts over the bus, so requests spread over
// two nodes get the quota once, not once per node.
func TestRequestLimitAcrossNodes(t *testing.T) {
	st := server.NewMemory()
	bus := &memBus{}
	var urls []string
	var srvs []*server.Server
	for _, name := range []string{"a", "b"} {
		cfg := server.DefaultConfig(st)
		cfg.PowDifficulty = 0
		cfg.Bus, cfg.Node = bus, name
		cfg.RequestsPerDevice = server.RatePolicy{Name: "requests", Quota: 10, Window: time.Hour}
		srv, err := server.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(func() { srv.Close(); hs.Close() })
		urls = append(urls, hs.URL)
		srvs = append(srvs, srv)
	}
	heard := func(s *server.Server, n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); s.RemoteRequests() != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the other node's counts: %d, want %d", s.RemoteRequests(), n)
			}
		}
	}
	c, err := client.New(client.Config{BaseURL: urls[0]})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plugin("demo", "store")
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
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 6 {
		if got := get(urls[0]); got != 200 {
			t.Fatalf("request %d on a: %d", i+1, got)
		}
	}
	// b hears of a's six within a gossip interval; then it allows only the four left.
	heard(srvs[1], 6)
	var codes []int
	for range 6 {
		codes = append(codes, get(urls[1]))
	}
	if want := []int{200, 200, 200, 200, 429, 429}; !slices.Equal(codes, want) {
		t.Errorf("requests on b after six on a: %v, want %v", codes, want)
	}
	heard(srvs[0], 4)
	if got := get(urls[0]); got != 429 {
		t.Errorf("a after b used the rest: %d, want 429", got)
	}
}
