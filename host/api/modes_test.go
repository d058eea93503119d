package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

// TestSetModesAllOrNothing: a PUT of modes with one bad entry is refused 400 and changes no
// mode (the good entries visited before the bad one were written).
func TestSetModesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "notes")
	for p, b := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(b), 0o644)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := host.New(db)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := h.Review(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, src, rv.Hash); err != nil {
		t.Fatal(err)
	}
	before, err := h.Modes(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(h, Options{}))
	defer srv.Close()
	for _, body := range []string{
		`{"read":"deny","write":"deny","money":"deny","public":"deny","bogus":"auto"}`,
		`{"read":"deny","write":"deny","money":"deny","public":"never"}`,
		`{"write":"auto","read":"deny","money":"auto","public":"auto","Read":"deny"}`,
	} {
		for range 8 { // the entries are visited in map order: try it in several
			req, _ := http.NewRequest("PUT", srv.URL+"/v1/plugins/notes/modes", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s: %d %s, want 400", body, resp.StatusCode, b)
			}
		}
		after, err := h.Modes(ctx, "notes")
		if err != nil {
			t.Fatal(err)
		}
		for e, m := range before {
			if after[e] != m {
				t.Fatalf("%s: refused, yet %s changed from %s to %s", body, e, m, after[e])
			}
		}
	}
}
