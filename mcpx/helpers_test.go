package mcpx

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// testEnv is a host on a fresh data directory with the official plugins
// and the test plugins of testdata/plugins installed.
type testEnv struct {
	h   *host.Host
	db  *store.DB
	reg *Registry
	b   *HostBackend
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := NewRegistry(db)
	h, err := host.New(db, host.WithRemotes(reg.HostRemotes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"notes", "longid"} {
		rv, err := h.Review(ctx, filepath.Join("testdata", "plugins", dir))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Install(ctx, "", rv.Hash); err != nil {
			t.Fatal(err)
		}
	}
	return &testEnv{h: h, db: db, reg: reg, b: &HostBackend{Host: h}}
}

// connect runs s on an in-memory transport (a stateful session, as
// `harness mcp` over stdio is) and returns the client's session.
func connect(t testing.TB, s *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := s.MCP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// demoCanteen serves examples/demo-canteen on a loopback test server.
func demoCanteen(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", canteen.Handler(canteen.DemoToken))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// accept is an elicitation handler that answers allow (or declines).
func elicit(allow bool, asked *[]string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		*asked = append(*asked, req.Params.Message)
		if !allow {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs (go test -update rewrites it):\ngot:\n%s", path, got)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// last is the last text item of res: the value, after an untrusted
// result's note.
func last(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return "<no result>"
	}
	if tc, ok := res.Content[len(res.Content)-1].(*mcp.TextContent); ok {
		return tc.Text
	}
	return "<not text>"
}

func text(res *mcp.CallToolResult) string {
	if res == nil {
		return "<no result>"
	}
	s := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			if s != "" {
				s += "\n"
			}
			s += tc.Text
		}
	}
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
