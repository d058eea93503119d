package viewer

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPages(t *testing.T) {
	got := Pages()
	if len(got) != 2 || got[0] != [2]string{"card-share", "view"} || got[1] != [2]string{"demo", "view"} {
		t.Fatalf("Pages() = %v, want [[card-share view] [demo view]]", got)
	}
}

// TestPageAssets checks that the page loads only files FS has, from its own directory, with no
// inline script or style (the server's CSP forbids both), and that the bundle keeps the noble
// licences.
func TestPageAssets(t *testing.T) {
	for _, pg := range Pages() {
		t.Run(pg[0]+"/"+pg[1], func(t *testing.T) { pageAssets(t, pg[0]+"/"+pg[1]) })
	}
}

func pageAssets(t *testing.T, dir string) {
	fsys := FS()
	html, err := fs.ReadFile(fsys, dir+"/index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(html), -1)
	if len(refs) != 2 {
		t.Fatalf("index.html references %d files, want 2 (view.js, view.css): %v", len(refs), refs)
	}
	for _, r := range refs {
		name, ok := strings.CutPrefix(r[1], "/w/"+dir+"/")
		if !ok {
			t.Errorf("index.html loads %q, outside /w/%s/", r[1], dir)
			continue
		}
		if _, err := fs.Stat(fsys, dir+"/"+name); err != nil {
			t.Errorf("index.html loads %q: %v", r[1], err)
		}
	}
	for _, bad := range []string{"<script>", "style=", "<style", "onload=", "onclick=", "javascript:"} {
		if strings.Contains(string(html), bad) {
			t.Errorf("index.html contains %q, which a strict CSP blocks", bad)
		}
	}
	js, err := fs.ReadFile(fsys, dir+"/view.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pku-harness-cloud/v1/join", "pku-harness-cloud/v1/enc", "pku-harness-cloud/v1/peer", "/join", "/ws?t="} {
		if !strings.Contains(string(js), want) {
			t.Errorf("view.js lacks %q", want)
		}
	}
	for _, bad := range []string{"eval(", "new Function(", ".innerHTML", "document.write"} {
		if strings.Contains(string(js), bad) {
			t.Errorf("view.js contains %q, which a strict CSP blocks or which writes markup", bad)
		}
	}
}

// TestJSVectors runs the bundled JavaScript protocol code against the Go package's test vectors
// (cloud/protocol/testdata/vectors.json) with node, when node is installed.
func TestJSVectors(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the Chromium test (browsertest TestViewerPageInChromium) covers the JS end to end")
	}
	vectors, err := filepath.Abs("../protocol/testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(vectors); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "testdata/vectors-check.mjs", vectors).CombinedOutput()
	if err != nil {
		t.Fatalf("node vectors-check.mjs: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`^ok: \d+ checks\n$`).Match(out) {
		t.Fatalf("unexpected output: %q", out)
	}
}

// TestBuildIsFresh checks that dist/ was built from the sources as they are: `npm run build`
// records the SHA-256 of every input in testdata/sources.sha256.
func TestBuildIsFresh(t *testing.T) {
	list, err := os.ReadFile("testdata/sources.sha256")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(list)), "\n")
	if len(lines) < 5 {
		t.Fatalf("testdata/sources.sha256 lists %d inputs", len(lines))
	}
	for _, line := range lines {
		want, path, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Errorf("%s changed since the last build: run `npm ci && npm run build` in cloud/viewer and commit dist/", path)
		}
	}
}
