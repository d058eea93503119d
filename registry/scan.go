package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

// Scanned is one plugin a scan found: where (its folder relative to the
// scanned root, or its install link), whether it validates, its id and
// version, every diagnostic (the validator's and the scan's own, with FILE
// relative to the root), and the review sheet students will see when it
// validated.
type Scanned struct {
	Path        string            `json:"path"`
	Link        string            `json:"link,omitempty"`
	OK          bool              `json:"ok"`
	ID          string            `json:"id,omitempty"`
	Version     string            `json:"version,omitempty"`
	Errors      int               `json:"errors"`
	Warnings    int               `json:"warnings"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	Review      *host.Review      `json:"review,omitempty"`
}

// MaxPlugins bounds the plugins one scan reads.
const MaxPlugins = 200

// skipDir reports folders a scan does not enter: hidden ones, node_modules,
// and the recorded tests of a plugin.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "tests" || name == "testdata"
}

// ScanDir scans a local folder (a repository checkout): every folder under
// root with a PLUGIN.md is loaded and validated as the app does, then
// checked as a set (see check). The plugins of a local folder are
// Community. The error is for a root that cannot be read.
func ScanDir(ctx context.Context, root string) ([]*Scanned, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	var dirs []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == plugin.ManifestFile {
			dirs = append(dirs, filepath.Dir(p))
			if len(dirs) > MaxPlugins {
				return fmt.Errorf("more than %d plugins", MaxPlugins)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	var out []*Scanned
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		s := &Scanned{Path: rel}
		p, diags, err := plugin.LoadDir(dir)
		s.load(p, diags, err, dir, false)
		out = append(out, s)
	}
	check(out)
	return out, nil
}

// load fills s from a loader's answer.
func (s *Scanned) load(p *plugin.Plugin, diags []diag.Diagnostic, err error, source string, official bool) {
	prefix := ""
	if s.Link == "" && s.Path != "." {
		prefix = s.Path + "/"
	}
	if err != nil {
		s.Diagnostics = append(s.Diagnostics, diag.Diagnostic{Severity: diag.Error, File: prefix + plugin.ManifestFile,
			Pos: diag.Pos{Line: 1, Col: 1}, Msg: err.Error()})
	}
	for _, d := range diags {
		d.File = prefix + d.File
		s.Diagnostics = append(s.Diagnostics, d)
	}
	if p != nil && p.Manifest != nil {
		s.ID, s.Version = p.Manifest.ID, p.Manifest.Version
	}
	if err == nil && !diag.HasErrors(diags) {
		s.Review = host.ReviewOf(p, source, official)
		for _, d := range diags {
			if d.Severity == diag.Warning {
				s.Review.Warnings = append(s.Review.Warnings, d)
			}
		}
		s.declarations(p, prefix)
	}
}

// publicSuffixes are two-label suffixes a wildcard host may not stop at.
var publicSuffixes = map[string]bool{"edu.cn": true, "com.cn": true, "net.cn": true, "org.cn": true, "gov.cn": true, "ac.cn": true,
	"co.uk": true, "github.io": true, "vercel.app": true, "netlify.app": true, "pages.dev": true, "workers.dev": true}

// declarations checks what a valid plugin declares, as the marketplace
// reviews it: a wildcard host over a public suffix reaches every site
// under it; an author of pkuinfo outside the official repository claims
// a name that is not the author's.
func (s *Scanned) declarations(p *plugin.Plugin, prefix string) {
	m := p.Manifest
	warn := func(path, format string, args ...any) {
		s.Diagnostics = append(s.Diagnostics, diag.Diagnostic{Severity: diag.Warning, File: prefix + plugin.ManifestFile,
			Pos: m.Pos.At(path), Msg: fmt.Sprintf(format, args...)})
	}
	for _, h := range m.Network {
		rest, wild := strings.CutPrefix(h, "*.")
		if wild && (!strings.Contains(rest, ".") || publicSuffixes[rest]) {
			warn("network", "network: %s reaches every site under .%s; list the hosts the plugin needs", h, rest)
		}
	}
	if strings.EqualFold(m.Author, "pkuinfo") && (s.Review == nil || !s.Review.Official) {
		warn("author", "author: pkuinfo is the official plugins' author; a plugin outside github.com/pkuinfo/pku-harness-plugins names its own")
	}
}

// check applies the rules over all scanned plugins: ids are unique, a
// plugin's folder is named after its id, and no plugin sits inside
// another's folder (its files would be part of the outer plugin).
func check(list []*Scanned) {
	byID := map[string]*Scanned{}
	for _, s := range list {
		file := path.Join(s.Path, plugin.ManifestFile)
		if s.Link != "" {
			file = plugin.ManifestFile
		}
		add := func(sev diag.Severity, format string, args ...any) {
			s.Diagnostics = append(s.Diagnostics, diag.Diagnostic{Severity: sev, File: file, Pos: diag.Pos{Line: 1, Col: 1}, Msg: fmt.Sprintf(format, args...)})
		}
		if s.ID != "" {
			if prev := byID[s.ID]; prev != nil {
				add(diag.Error, "id %s is already used by the plugin in %s", s.ID, prev.Path)
				s.Review = nil
			} else {
				byID[s.ID] = s
			}
			if base := path.Base(s.Path); s.Path != "." && base != s.ID {
				add(diag.Warning, "the folder is %s; name it after the id (%s), as users and links will", base, s.ID)
			}
		}
		for _, o := range list {
			if o == s || s.Path == "." || s.Link != "" && o.Link == "" {
				continue
			}
			if o.Path == "." || strings.HasPrefix(s.Path, o.Path+"/") {
				add(diag.Error, "this plugin is inside the folder of the plugin in %s; move it out", o.Path)
				s.Review = nil
				break
			}
		}
	}
	for _, s := range list {
		sort.SliceStable(s.Diagnostics, func(i, j int) bool {
			a, b := s.Diagnostics[i], s.Diagnostics[j]
			if a.File != b.File {
				return a.File < b.File
			}
			if a.Pos.Line != b.Pos.Line {
				return a.Pos.Line < b.Pos.Line
			}
			return a.Pos.Col < b.Pos.Col
		})
		s.Errors, s.Warnings = 0, 0
		for _, d := range s.Diagnostics {
			if d.Severity == diag.Error {
				s.Errors++
			} else {
				s.Warnings++
			}
		}
		s.OK = s.Errors == 0 && s.Review != nil
	}
}

// Lister lists the files of a GitHub repository at a ref (slash-separated
// paths from the repository root).
type Lister interface {
	List(ctx context.Context, owner, repo, ref string) ([]string, error)
}

// GitHubLister lists a repository through GitHub's git trees API
// (GET /repos/OWNER/REPO/git/trees/REF?recursive=1). API is the API's base
// URL, https://api.github.com when empty; Client is http.DefaultClient
// when nil.
type GitHubLister struct {
	API    string
	Client *http.Client
}

// List implements Lister. A truncated tree (over GitHub's limit) is an
// error, since plugins would be missed.
func (g *GitHubLister) List(ctx context.Context, owner, repo, ref string) ([]string, error) {
	api := g.API
	if api == "" {
		api = "https://api.github.com"
	}
	c := g.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	u := fmt.Sprintf("%s/repos/%s/%s/git/trees/%s?recursive=1", strings.TrimRight(api, "/"), url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(ref))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list %s/%s: %w", owner, repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list %s/%s at %s: GitHub answered %s", owner, repo, ref, resp.Status)
	}
	var tree struct {
		Tree []struct {
			Path string `json:"path"`
			Type string `json:"type"`
		} `json:"tree"`
		Truncated bool `json:"truncated"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&tree); err != nil {
		return nil, fmt.Errorf("list %s/%s: %w", owner, repo, err)
	}
	if tree.Truncated {
		return nil, fmt.Errorf("list %s/%s: the repository is too large for one listing; scan a folder link (…/tree/REF/plugins)", owner, repo)
	}
	var out []string
	for _, e := range tree.Tree {
		if e.Type == "blob" {
			out = append(out, e.Path)
		}
	}
	return out, nil
}

// ScanLink scans a link: a GitHub repository or folder link
// (https://github.com/OWNER/REPO[/tree/REF[/PATH]]) is listed with l and
// every PLUGIN.md under it is loaded through f as its own install link; any
// other install link is loaded as one plugin. Official follows the link
// (github.com/pkuinfo/pku-harness-plugins, plugins/, main).
func ScanLink(ctx context.Context, link string, f plugin.Fetcher, l Lister) ([]*Scanned, error) {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", link, err)
	}
	segs := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	if strings.EqualFold(u.Hostname(), "github.com") && len(segs) >= 2 && (len(segs) == 2 || segs[2] == "tree") {
		owner, repo := segs[0], strings.TrimSuffix(segs[1], ".git")
		ref, dir := "HEAD", ""
		if len(segs) >= 4 {
			ref, dir = segs[3], strings.Join(segs[4:], "/")
		}
		files, err := l.List(ctx, owner, repo, ref)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", link, err)
		}
		var out []*Scanned
		for _, p := range files {
			if path.Base(p) != plugin.ManifestFile || (dir != "" && !strings.HasPrefix(p, dir+"/")) {
				continue
			}
			pdir := path.Dir(p)
			if hidden(pdir) {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(pdir, dir), "/")
			if rel == "" {
				rel = "."
			}
			pl := "https://github.com/" + owner + "/" + repo + "/tree/" + ref
			if pdir != "." {
				pl += "/" + pdir
			}
			out = append(out, scanOne(ctx, rel, pl, f))
			if len(out) > MaxPlugins {
				return nil, fmt.Errorf("scan %s: more than %d plugins", link, MaxPlugins)
			}
		}
		check(out)
		return out, nil
	}
	out := []*Scanned{scanOne(ctx, ".", link, f)}
	check(out)
	return out, nil
}

func hidden(dir string) bool {
	for _, s := range strings.Split(dir, "/") {
		if skipDir(s) && s != "." {
			return true
		}
	}
	return false
}

func scanOne(ctx context.Context, rel, link string, f plugin.Fetcher) *Scanned {
	s := &Scanned{Path: rel, Link: link}
	official := false
	if l, err := plugin.ResolveLink(link); err == nil {
		official = l.Official
	}
	p, diags, err := plugin.Load(ctx, f, link)
	s.load(p, diags, err, link, official)
	return s
}
