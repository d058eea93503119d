package plugin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// A small valid plugin whose frontmatter names a tool, a shared file and a widget; the folder
// also holds files the loader must never read.
var roomsFiles = map[string]string{
	"PLUGIN.md": `---
spec: 1
id: rooms
name: 教室
description: 各教学楼的空闲教室。
version: 1.0.0
author: alice
network: [portal.pku.edu.cn]
shared: shared.yaml
tools:
  free: tools/free.yaml
widgets:
  overview: widgets/overview.json
dataSources:
  overview: { tool: free, ttl: 30m }
i18n:
  en:
    name: Rooms
    description: Free rooms in each building.
    tools: { free: { title: Free rooms } }
---
Use rooms__free.
`,
	"shared.yaml": "constants:\n  BUILDING: 二教\nfunctions:\n  clean: \"(s) => trim(s)\"\n",
	"tools/free.yaml": `title: 空闲教室
description: Free rooms.
effect: read
steps:
  - let: page
    request: { url: 'https://portal.pku.edu.cn/q?b=${BUILDING}' }
return: "page.rows.map(r => clean(r.room))"
`,
	"widgets/overview.json": `{ "ui": 1, "kind": "widget", "title": "空闲教室", "description": "Free rooms.",
  "i18n": { "en": { "title": "Free rooms" } },
  "data": { "rooms": { "source": "overview" } },
  "root": { "type": "Text", "text": "${data.rooms.length}" } }
`,
	"tests/free.yaml":   "tool: free\n",
	"README.md":         "# rooms\n",
	"tools/unused.yaml": "not: named\n",
}

// recordingFetcher serves a MapFetcher and records every name asked for.
type recordingFetcher struct {
	mu    sync.Mutex
	files MapFetcher
	asked []string
}

func (r *recordingFetcher) Fetch(ctx context.Context, name string, max int64) ([]byte, error) {
	r.mu.Lock()
	r.asked = append(r.asked, name)
	r.mu.Unlock()
	return r.files.Fetch(ctx, name, max)
}

func filesAt(base string, files map[string]string) MapFetcher {
	m := MapFetcher{}
	for name, text := range files {
		m[base+name] = []byte(text)
	}
	return m
}

func loadedNames(p *Plugin) []string {
	var names []string
	for n := range p.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestLoadLinkForms loads the same plugin through every link form of the seed's table and checks
// that exactly the files the frontmatter names were fetched, from the right URLs.
func TestLoadLinkForms(t *testing.T) {
	folder := "https://raw.githubusercontent.com/alice/plugins/main/rooms/"
	root := "https://raw.githubusercontent.com/alice/rooms/HEAD/"
	own := "https://plugins.example.org/v1/rooms/"
	all := MapFetcher{}
	for _, base := range []string{folder, root, own} {
		for k, v := range filesAt(base, roomsFiles) {
			all[k] = v
		}
	}
	tests := []struct{ name, link, base string }{
		{"github folder", "https://github.com/alice/plugins/tree/main/rooms", folder},
		{"github repository root", "https://github.com/alice/rooms", root},
		{"github file", "https://github.com/alice/plugins/blob/main/rooms/PLUGIN.md", folder},
		{"any https URL", own + "PLUGIN.md", own},
		{"deep link", "pkuharness://plugin?src=" + url.QueryEscape("https://github.com/alice/plugins/tree/main/rooms"), folder},
	}
	wantFiles := []string{"PLUGIN.md", "shared.yaml", "tools/free.yaml", "widgets/overview.json"}
	var hash string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &recordingFetcher{files: all}
			p, ds, err := Load(context.Background(), f, tc.link)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				t.Errorf("unexpected diagnostic: %s", d)
			}
			if p.Manifest.ID != "rooms" || p.Tool("free") == nil || p.Source != tc.link {
				t.Fatalf("loaded id %q, source %q", p.Manifest.ID, p.Source)
			}
			if got := loadedNames(p); strings.Join(got, ",") != strings.Join(wantFiles, ",") {
				t.Errorf("loaded %v, want %v", got, wantFiles)
			}
			var want []string
			for _, n := range wantFiles {
				want = append(want, tc.base+n)
			}
			sort.Strings(f.asked)
			sort.Strings(want)
			if strings.Join(f.asked, "\n") != strings.Join(want, "\n") {
				t.Errorf("fetched\n  %s\nwant\n  %s", strings.Join(f.asked, "\n  "), strings.Join(want, "\n  "))
			}
			if hash == "" {
				hash = p.Hash
			} else if p.Hash != hash {
				t.Errorf("hash %s differs from the first form's %s", p.Hash, hash)
			}
		})
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	for name, text := range roomsFiles {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, ds, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	if p.Dir != dir || p.Instructions != "Use rooms__free." {
		t.Errorf("Dir %q, Instructions %q", p.Dir, p.Instructions)
	}
	// The same files through a map give the same hash.
	m := map[string][]byte{}
	for _, n := range []string{"PLUGIN.md", "shared.yaml", "tools/free.yaml", "widgets/overview.json"} {
		m[n] = []byte(roomsFiles[n])
	}
	q, _, err := LoadFiles(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if q.Hash != p.Hash {
		t.Errorf("LoadFiles hash %s != LoadDir hash %s", q.Hash, p.Hash)
	}
	if _, _, err := LoadDir(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "cannot read PLUGIN.md") {
		t.Errorf("LoadDir(missing) error = %v", err)
	}
}

// TestDirFetcherStaysInside checks that a symlink out of the plugin folder is not followed.
func TestDirFetcherStaysInside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("title: secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if _, err := DirFetcher(dir).Fetch(context.Background(), "link.yaml", 1000); err == nil {
		t.Fatal("DirFetcher followed a symlink out of the folder")
	}
	if _, err := DirFetcher(dir).Fetch(context.Background(), "../x", 1000); err == nil {
		t.Fatal("DirFetcher accepted ../x")
	}
}

func TestContentHash(t *testing.T) {
	a := map[string][]byte{"PLUGIN.md": []byte("x"), "tools/a.yaml": []byte("y")}
	h := ContentHash(a)
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Fatalf("hash %q", h)
	}
	if ContentHash(map[string][]byte{"tools/a.yaml": []byte("y"), "PLUGIN.md": []byte("x")}) != h {
		t.Error("hash depends on map order")
	}
	for name, m := range map[string]map[string][]byte{
		"content": {"PLUGIN.md": []byte("x"), "tools/a.yaml": []byte("z")},
		"rename":  {"PLUGIN.md": []byte("x"), "tools/b.yaml": []byte("y")},
		"shift":   {"PLUGIN.md": []byte("xy"), "tools/a.yaml": []byte("")},
		"extra":   {"PLUGIN.md": []byte("x"), "tools/a.yaml": []byte("y"), "w.json": nil},
	} {
		if ContentHash(m) == h {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

// tlsServer serves files over https on loopback; paths listed in slow wait before answering.
func tlsServer(t *testing.T, files map[string]string, slow map[string]bool) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect/PLUGIN.md" {
			http.Redirect(w, r, "http://"+r.Host+"/p/PLUGIN.md", http.StatusFound)
			return
		}
		if slow[r.URL.Path] {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		text, ok := files[strings.TrimPrefix(r.URL.Path, "/p/")]
		if !ok || !strings.HasPrefix(r.URL.Path, "/p/") {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(text))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadHTTPS(t *testing.T) {
	files := map[string]string{}
	for k, v := range roomsFiles {
		files[k] = v
	}
	srv := tlsServer(t, files, nil)
	f := &HTTPFetcher{Client: srv.Client()}
	p, ds, err := Load(context.Background(), f, srv.URL+"/p/PLUGIN.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 0 || p.Tool("free") == nil {
		t.Fatalf("diagnostics %v", ds)
	}

	// A missing tool file is a diagnostic at the field that names it.
	delete(files, "tools/free.yaml")
	_, ds, err = Load(context.Background(), f, srv.URL+"/p/PLUGIN.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := formatDiagnostics(ds, nil); !strings.Contains(got, "PLUGIN.md:11:9: tools.free.file: cannot read tools/free.yaml: file not found\n") {
		t.Errorf("diagnostics:\n%s", got)
	}

	// No PLUGIN.md: an error, not a diagnostic.
	if _, _, err := Load(context.Background(), f, srv.URL+"/q/PLUGIN.md"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("missing PLUGIN.md: err = %v", err)
	}
	// A redirect to http is refused.
	if _, _, err := Load(context.Background(), f, srv.URL+"/redirect/PLUGIN.md"); err == nil || !strings.Contains(err.Error(), "only https is allowed") {
		t.Errorf("redirect to http: err = %v", err)
	}
	// A link to http on another machine is refused before any request.
	if _, _, err := Load(context.Background(), f, "http://192.0.2.1/p/PLUGIN.md"); err == nil || !strings.Contains(err.Error(), "only https links are allowed") {
		t.Errorf("http link: err = %v", err)
	}
	// The default client never dials a loopback or private address.
	if _, _, err := Load(context.Background(), &HTTPFetcher{}, srv.URL+"/p/PLUGIN.md"); err == nil || !strings.Contains(err.Error(), "not a public address") {
		t.Errorf("default client to loopback: err = %v", err)
	}
	// A server that does not trust the certificate fails.
	untrusting := &HTTPFetcher{Client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}}
	if _, _, err := Load(context.Background(), untrusting, srv.URL+"/p/PLUGIN.md"); err == nil {
		t.Error("an untrusted certificate was accepted")
	}
}

// TestLoadHTTPLoopback: a plugin folder served over plain http on this machine (python3 -m
// http.server) loads with the default fetcher; plain http never leaves the machine.
func TestLoadHTTPLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away/PLUGIN.md":
			http.Redirect(w, r, "http://192.0.2.1/p/PLUGIN.md", http.StatusFound)
			return
		case "/tls/PLUGIN.md":
			http.Redirect(w, r, "https://192.0.2.1/p/PLUGIN.md", http.StatusFound)
			return
		}
		text, ok := roomsFiles[strings.TrimPrefix(r.URL.Path, "/p/")]
		if !ok || !strings.HasPrefix(r.URL.Path, "/p/") {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(text))
	}))
	t.Cleanup(srv.Close)
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	f := &HTTPFetcher{}
	for _, link := range []string{srv.URL + "/p/PLUGIN.md", "http://localhost:" + port + "/p/PLUGIN.md"} {
		p, ds, err := Load(context.Background(), f, link)
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
		if len(ds) != 0 || p.Tool("free") == nil {
			t.Fatalf("%s: diagnostics %v", link, ds)
		}
	}
	for _, tc := range []struct{ link, want string }{
		{srv.URL + "/away/PLUGIN.md", "only https is allowed"},
		// A redirect from a loopback http link to https elsewhere is dialled by the loopback-only client.
		{srv.URL + "/tls/PLUGIN.md", "an http link may only reach this machine"},
	} {
		if _, _, err := Load(context.Background(), f, tc.link); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.link, err, tc.want)
		}
	}
	// The fetcher itself refuses plain http to other hosts, whatever the loader allowed.
	if _, err := f.Fetch(context.Background(), "http://192.0.2.1/p/PLUGIN.md", 1<<10); err == nil || !strings.Contains(err.Error(), "only https URLs (or http to localhost) can be fetched") {
		t.Errorf("http to another host: err = %v", err)
	}
}

func TestLoadHTTPSTimeout(t *testing.T) {
	srv := tlsServer(t, roomsFiles, map[string]bool{"/p/tools/free.yaml": true})
	f := &HTTPFetcher{Client: srv.Client(), Timeout: 100 * time.Millisecond}
	start := time.Now()
	_, ds, err := Load(context.Background(), f, srv.URL+"/p/PLUGIN.md")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %v; the timeout is 100ms", time.Since(start))
	}
	got := formatDiagnostics(ds, nil)
	if !strings.Contains(got, "PLUGIN.md:11:9: tools.free.file: cannot read tools/free.yaml: ") || !strings.Contains(got, "deadline exceeded") {
		t.Errorf("diagnostics:\n%s", got)
	}
	// A cancelled context stops PLUGIN.md itself.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Load(ctx, f, srv.URL+"/p/PLUGIN.md"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestLoadSizeCap checks the 512 KB cap on everything loaded: a file that would push the total
// past it is not read.
func TestLoadSizeCap(t *testing.T) {
	big := "title: 大\ndescription: Big.\neffect: read\nconstants:\n  PAD: '" + strings.Repeat("x", 300<<10) + "'\nreturn: \"1\"\n"
	files := map[string][]byte{
		"PLUGIN.md": []byte(`---
spec: 1
id: big
name: 大
description: Too large in all.
version: 1.0.0
author: pkuinfo
tools:
  a: tools/a.yaml
  b: tools/b.yaml
i18n:
  en: { name: Big, description: Too large in all., tools: { a: { title: A }, b: { title: B } } }
---
`),
		"tools/a.yaml": []byte(big),
		"tools/b.yaml": []byte(big),
	}
	p, ds, err := LoadFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	want := "PLUGIN.md:10:6: tools.b.file: cannot read tools/b.yaml: the loaded files would exceed 512 KB\n"
	if got := formatDiagnostics(ds, nil); got != want {
		t.Errorf("diagnostics:\n%swant\n%s", got, want)
	}
	if _, ok := p.Files["tools/b.yaml"]; ok {
		t.Error("tools/b.yaml was loaded")
	}
	files["PLUGIN.md"] = append([]byte("---\n"), make([]byte, MaxTotalBytes)...)
	if _, _, err := LoadFiles(context.Background(), files); err == nil || err.Error() != "PLUGIN.md is larger than 512 KB" {
		t.Errorf("huge PLUGIN.md: err = %v", err)
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "162.105.129.1": true, "2001:da8:201::1": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "::1": false,
		"fe80::1": false, "fc00::1": false, "::ffff:127.0.0.1": false, "224.0.0.1": false,
		"64:ff9b::7f00:1": false, "64:ff9b::8.8.8.8": true, "2002:c0a8:101::1": false, "2001::1": false,
		"2001:db8::1": false, "255.255.255.255": false, "ff02::1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestLoadLinkFormsHTTPS loads GitHub links over real https: the client dials the loopback TLS
// server whatever the host name, and verifies its certificate as example.com (a name the
// httptest certificate holds), so raw.githubusercontent.com URLs travel the whole way.
func TestLoadLinkFormsHTTPS(t *testing.T) {
	var mu sync.Mutex
	var hosts, paths []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		name, ok := strings.CutPrefix(r.URL.Path, "/alice/plugins/v2/rooms/")
		text, found := roomsFiles[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(text))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.ServerName = "example.com"
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	f := &HTTPFetcher{Client: &http.Client{Transport: tr}}
	for _, link := range []string{
		"https://github.com/alice/plugins/tree/v2/rooms",
		"https://github.com/alice/plugins/blob/v2/rooms/PLUGIN.md",
		"pkuharness://plugin?src=" + url.QueryEscape("https://github.com/alice/plugins/tree/v2/rooms"),
	} {
		hosts, paths = nil, nil
		p, ds, err := Load(context.Background(), f, link)
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
		if len(ds) != 0 || p.Tool("free") == nil {
			t.Fatalf("%s: diagnostics %v", link, ds)
		}
		sort.Strings(paths)
		if got := strings.Join(paths, " "); got != "/alice/plugins/v2/rooms/PLUGIN.md /alice/plugins/v2/rooms/shared.yaml /alice/plugins/v2/rooms/tools/free.yaml /alice/plugins/v2/rooms/widgets/overview.json" {
			t.Errorf("%s: fetched %s", link, got)
		}
		for _, h := range hosts {
			if h != "raw.githubusercontent.com" {
				t.Errorf("%s: request to host %q", link, h)
			}
		}
	}
}

// slowFetcher answers from a map after a pause and records how many reads overlapped.
type slowFetcher struct {
	files        MapFetcher
	mu           sync.Mutex
	now, maxSeen int
}

func (s *slowFetcher) Fetch(ctx context.Context, name string, limit int64) ([]byte, error) {
	s.mu.Lock()
	s.now++
	s.maxSeen = max(s.maxSeen, s.now)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	s.now--
	s.mu.Unlock()
	return s.files.Fetch(ctx, name, limit)
}

// TestLoadPrefetch checks that the files a manifest names are read at the same time, and that
// the size cap still falls on the same file as when they are read one by one.
func TestLoadPrefetch(t *testing.T) {
	var tools, i18n []string
	files := map[string][]byte{}
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("t%d", i)
		tools = append(tools, fmt.Sprintf("  %s: tools/%s.yaml", name, name))
		i18n = append(i18n, fmt.Sprintf("%s: { title: T }", name))
		pad := 1
		if i == 5 {
			pad = 520 << 10 // pushes the total past 512 KB
		}
		files["tools/"+name+".yaml"] = []byte("title: 工具\ndescription: A tool.\neffect: read\nconstants:\n  PAD: '" + strings.Repeat("x", pad) + "'\nreturn: \"1\"\n")
	}
	files[ManifestFile] = []byte("---\nspec: 1\nid: many\nname: 多\ndescription: Many tools.\nversion: 1.0.0\nauthor: pkuinfo\ntools:\n" +
		strings.Join(tools, "\n") + "\ni18n:\n  en: { name: Many, description: Many tools., tools: { " + strings.Join(i18n, ", ") + " } }\n---\n")
	f := &slowFetcher{files: MapFetcher(files)}
	start := time.Now()
	p, ds, err := load(context.Background(), f, "", "many")
	if err != nil {
		t.Fatal(err)
	}
	if f.maxSeen < 2 {
		t.Errorf("at most %d reads overlapped; prefetch should read several files at once", f.maxSeen)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("loading took %v", elapsed)
	}
	want := "PLUGIN.md:14:7: tools.t5.file: cannot read tools/t5.yaml: the loaded files would exceed 512 KB\n"
	if got := formatDiagnostics(ds, nil); got != want {
		t.Errorf("diagnostics:\n%swant\n%s", got, want)
	}
	if len(p.Tools) != 7 || p.Tool("t5") != nil || p.Tool("t7") == nil {
		t.Errorf("loaded %d tools", len(p.Tools))
	}
}
