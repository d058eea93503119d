package api

import (
	"context"
	"encoding/json"
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

// TestReviewFromPage is a web page (the host's own, led there by another site's link to
// /install?link=…) asking for a review or an install of what is not an install link: a folder
// of this machine, a file: URL, an official: or builtin: source, a relative path. Each is
// refused before anything is read; the same folder from a client that is no browser is still
// reviewed and installed, and an http link to this machine still works from the page.
func TestReviewFromPage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "notes")
	for p, b := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(b), 0o644)
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	srv := httptest.NewServer(New(h, Options{}))
	defer srv.Close()
	links := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer links.Close()

	page := [][2]string{{"Origin", srv.URL}, {"Sec-Fetch-Site", "same-origin"}}
	post := func(path string, body any, hdr ...[2]string) (int, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		for _, kv := range hdr {
			req.Header.Set(kv[0], kv[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var v map[string]any
		json.Unmarshal(raw, &v)
		return resp.StatusCode, v
	}
	errOf := func(v map[string]any) (code, msg string) {
		e, _ := v["error"].(map[string]any)
		c, _ := e["code"].(string)
		m, _ := e["message"].(string)
		return c, m
	}

	for _, source := range []string{
		src, "/etc", " /etc", "/etc/passwd", "file:///", "file:///etc/passwd", "FILE://localhost/etc",
		"official:../x", "official:shuttle", "builtin:focus", "../x", "x", "notes", "~/notes",
		"%2Fhome", "https:/etc", "https:///etc", "http:etc", "//evil.example/PLUGIN.md",
		"javascript:alert(1)", "pkuharness://plugin?src=" + src, "C:\\Users\\x",
	} {
		for _, hdr := range [][][2]string{page, page[:1], page[1:]} {
			status, v := post("/v1/reviews", map[string]string{"source": source}, hdr...)
			code, msg := errOf(v)
			if status != http.StatusUnprocessableEntity || code != "bad_source" || !strings.Contains(msg, "a web page may have an install link reviewed") {
				t.Errorf("review of %q from a page (%v): %d %s %q, want 422 bad_source", source, hdr, status, code, msg)
			}
		}
	}

	// The folder from the command line (no Origin, no Sec-Fetch-Site): reviewed; its hash is
	// what a page would need to install it.
	status, rv := post("/v1/reviews", map[string]string{"source": src})
	if status != http.StatusOK {
		t.Fatalf("review of a folder from a client: %d %v", status, rv)
	}
	hash, _ := rv["hash"].(string)

	// A page that names the folder and that hash on a host that has not reviewed it (a new
	// host, the review evicted): the host does not read the folder to check it.
	h2, _ := host.New(db)
	srv2 := httptest.NewServer(New(h2, Options{}))
	defer srv2.Close()
	body, _ := json.Marshal(map[string]string{"source": src, "hash": hash})
	req, _ := http.NewRequest("POST", srv2.URL+"/v1/plugins", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(raw), "review the plugin first") {
		t.Errorf("install of an unreviewed folder from a page: %d %s, want 409 review first", resp.StatusCode, raw)
	}

	// An http link to this machine, from the page: reviewed and installed.
	link := links.URL + "/notes/PLUGIN.md"
	status, rv = post("/v1/reviews", map[string]string{"source": link}, page...)
	if status != http.StatusOK || rv["id"] != "notes" {
		t.Fatalf("review of %s from the page: %d %v", link, status, rv)
	}
	status, in := post("/v1/plugins", map[string]string{"source": link, "hash": rv["hash"].(string)}, page...)
	if status != http.StatusCreated || in["id"] != "notes" {
		t.Errorf("install of %s from the page: %d %v", link, status, in)
	}
}
