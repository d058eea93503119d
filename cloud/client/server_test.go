package client_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/viewer"
)

// testServer is a reference server on a loopback httptest listener that can drop every TCP
// connection (to test reconnects), a clock the test moves, and a record of what the server
// was asked to store.
type testServer struct {
	URL     string
	clock   *clock
	storage *recordingStorage
	ln      *trackingListener
	mu      sync.Mutex
	paths   map[string]int // "METHOD path" → requests, for counting registrations and mints
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recordingStorage keeps every value the server stores, as the server got it.
type recordingStorage struct {
	server.Storage
	mu   sync.Mutex
	puts []server.StoreItem
}

func (r *recordingStorage) StorePut(ctx context.Context, ns server.Namespace, it server.StoreItem, ifMatch *int64, q server.StoreQuota, now int64) (int64, error) {
	r.mu.Lock()
	r.puts = append(r.puts, it)
	r.mu.Unlock()
	return r.Storage.StorePut(ctx, ns, it, ifMatch, q, now)
}

func (r *recordingStorage) stored() []server.StoreItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]server.StoreItem(nil), r.puts...)
}

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

// dropAll closes every accepted connection at the server end, as a crash or a NAT timeout would.
func (l *trackingListener) dropAll() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if c.Close() == nil {
			n++
		}
		delete(l.conns, c)
	}
	return n
}

func newTestServer(t testing.TB, configure ...func(*server.Config)) *testServer {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{clock: &clock{t: time.Now()}, storage: &recordingStorage{Storage: st}, paths: map[string]int{}}
	cfg := server.DefaultConfig(ts.storage)
	cfg.Now = ts.clock.Now
	cfg.PowDifficulty = 8
	cfg.Pages = viewer.FS()
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.paths[r.Method+" "+r.URL.Path]++
		ts.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	ts.ln = &trackingListener{Listener: hs.Listener, conns: map[net.Conn]bool{}}
	hs.Listener = ts.ln
	hs.Start()
	t.Cleanup(func() {
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
		st.Close()
	})
	ts.URL = hs.URL
	return ts
}

func (ts *testServer) count(methodPath string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.paths[methodPath]
}

// newClient is a Client of ts with a fast reconnect backoff and the server's clock.
func (ts *testServer) newClient(t testing.TB, ids client.IdentityStore) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: ts.URL, Identities: ids, Now: ts.clock.Now, Backoff: fastBackoff})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var fastBackoff = client.Backoff{Min: 20 * time.Millisecond, Max: 200 * time.Millisecond}

// next returns the next event of type want, failing the test on a timeout or when events end.
// Events of other types are skipped (and returned in skipped for tests that care).
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
