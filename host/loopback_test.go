package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/store"
)

// TestLocalHTTPLink: a plugin folder served over plain http on this machine
// (python3 -m http.server during development) is reviewed, installed,
// updated in all three cases and rolled back with the host's default
// fetcher; plain http to anywhere else, or inside a pkuharness:// link, is
// an *Unreadable source.
func TestLocalHTTPLink(t *testing.T) {
	var mu sync.Mutex
	files := demo("1.0.0")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/demo/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	defer srv.Close()
	set := func(f map[string]string) { mu.Lock(); files = f; mu.Unlock() }

	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := New(db) // the default fetcher, as harness serve uses it
	if err != nil {
		t.Fatal(err)
	}
	src := srv.URL + "/demo/PLUGIN.md"
	rv, err := h.Review(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if rv.Official {
		t.Error("a loopback http link is Official")
	}
	if _, err := h.Install(ctx, src, rv.Hash); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		files map[string]string
		run   func() (*UpdateOutcome, error)
		want  string
	}{
		{"same hash", demo("1.0.0"), func() (*UpdateOutcome, error) { return h.Update(ctx, "demo") }, StatusCurrent},
		{"content changed", demo("1.1.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}),
			func() (*UpdateOutcome, error) { return h.Update(ctx, "demo") }, StatusApplied},
		{"widened", demo("2.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]", "network: [api.example.com, '*.example.net']"}),
			func() (*UpdateOutcome, error) { return h.Update(ctx, "demo") }, StatusHeld},
		{"accepted", nil, func() (*UpdateOutcome, error) { return h.AcceptUpdate(ctx, "demo", "") }, StatusApplied},
		{"rolled back", nil, func() (*UpdateOutcome, error) { return h.Rollback(ctx, "demo") }, StatusApplied},
	}
	for _, s := range steps {
		if s.files != nil {
			set(s.files)
		}
		o, err := s.run()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if o.Status != s.want {
			t.Fatalf("%s: status %s (%+v), want %s", s.name, o.Status, o, s.want)
		}
	}
	if in, err := h.Show(ctx, "demo"); err != nil || in.Version != "1.1.0" {
		t.Fatalf("after rollback: %+v, %v; want 1.1.0", in, err)
	}

	for _, bad := range []string{
		"http://192.0.2.1/demo/PLUGIN.md",
		"http://localhost.example.org/demo/PLUGIN.md",
		"pkuharness://plugin?src=" + url.QueryEscape(src),
	} {
		_, err := h.Review(ctx, bad)
		var u *Unreadable
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "only https links are allowed") {
			t.Errorf("Review(%s) = %v, want an *Unreadable that says only https", bad, err)
		}
	}
}

// TestSlowSource: a server that answers each file slowly cannot hold a
// review past the host's load limit; the error says so.
func TestSlowSource(t *testing.T) {
	manifest := "---\nspec: 1\nid: slow\nname: 慢\ndescription: 慢。\nversion: 1.0.0\nauthor: a\ntools:\n"
	for i := range 40 {
		manifest += fmt.Sprintf("  t%d: tools/t%d.yaml\n", i, i)
	}
	manifest += "---\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/PLUGIN.md" {
			io.WriteString(w, manifest)
			return
		}
		<-r.Context().Done() // within the fetcher's per-file limit, but never done
	}))
	defer srv.Close()
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	h.loadLimit = 300 * time.Millisecond
	start := time.Now()
	_, err = h.Review(context.Background(), srv.URL+"/PLUGIN.md")
	var u *Unreadable
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "reading the plugin took longer than 300ms: the server is too slow") {
		t.Fatalf("Review = %v, want an *Unreadable that says it took too long", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Review took %s", d)
	}
}

// TestEmptySource: an empty source is an error, not the current folder.
func TestEmptySource(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	for _, src := range []string{"", "  "} {
		_, err := e.h.Review(context.Background(), src)
		var u *Unreadable
		if !errors.As(err, &u) || err.Error() != `host: "": no source: give an install link, a folder or official:NAME` {
			t.Errorf("Review(%q) = %v", src, err)
		}
	}
}
