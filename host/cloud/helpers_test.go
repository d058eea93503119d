package cloud

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host/store"
)

// TestMain keeps the tests out of the developer's OS keyring: the vault key goes to a key file
// beside each temporary data directory.
func TestMain(m *testing.M) {
	os.Setenv("HARNESS_KEYRING", "off")
	os.Exit(m.Run())
}

// provider is a reference server on a loopback listener with a record of what it was asked to
// store and how often each route was hit.
type provider struct {
	URL   string
	hs    *httptest.Server
	store *recording
	mu    sync.Mutex
	hits  map[string]int
}

type recording struct {
	server.Storage
	mu   sync.Mutex
	puts []server.StoreItem
}

func (r *recording) StorePut(ctx context.Context, ns server.Namespace, it server.StoreItem, ifMatch *int64, q server.StoreQuota, now int64) (int64, error) {
	r.mu.Lock()
	r.puts = append(r.puts, it)
	r.mu.Unlock()
	return r.Storage.StorePut(ctx, ns, it, ifMatch, q, now)
}

func (r *recording) stored() []server.StoreItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]server.StoreItem(nil), r.puts...)
}

// echoFunctions is a server-function runner answering every call with its input and the
// document it ran, for the functions service.
type echoFunctions struct{}

func (echoFunctions) Call(_ context.Context, c server.FunctionCall) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"fn": c.Name, "input": c.Input, "doc": c.Doc.Hash})
}

func (echoFunctions) Listed() []protocol.MetaFunction { return nil }

func newProvider(t *testing.T, withFunctions bool) *provider {
	t.Helper()
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{store: &recording{Storage: st}, hits: map[string]int{}}
	cfg := server.DefaultConfig(p.store)
	cfg.PowDifficulty = 4
	if withFunctions {
		cfg.Functions = echoFunctions{}
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits[r.Method+" "+r.URL.Path]++
		p.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		p.hs.CloseClientConnections()
		p.hs.Close()
		srv.Close()
		st.Close()
	})
	p.URL = p.hs.URL
	return p
}

func (p *provider) count(route string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[route]
}

// stop takes the provider off the network, as a phone losing its connection sees it.
func (p *provider) stop() {
	p.hs.CloseClientConnections()
	p.hs.Close()
}

// newManager is the Manager of a new host database, released when the test ends.
func newManager(t *testing.T) (*Manager, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(db); db.Close() })
	return For(db), db
}

func storeDecl(id string, e2e bool, uses ...string) *Decl {
	if len(uses) == 0 {
		uses = []string{"store"}
	}
	return &Decl{Plugin: id, Uses: uses, E2E: e2e, DisclosureZh: []string{"计数器保存在云端"}, DisclosureEn: []string{"The counter is kept in the cloud"}}
}

// newHTTP is a web server that is not a Cloud provider (404 on /v1/meta).
func newHTTP(t *testing.T) string {
	hs := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(hs.Close)
	return hs.URL
}
