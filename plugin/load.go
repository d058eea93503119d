package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// LoadDir loads the plugin in a local folder: PLUGIN.md and the files its frontmatter names, and
// nothing else. The error is non-nil only when PLUGIN.md cannot be read; every problem with the
// plugin's content is a Diagnostic. The Plugin is returned even when the diagnostics hold errors
// (see Plugin).
func LoadDir(dir string) (*Plugin, []diag.Diagnostic, error) {
	return LoadDirContext(context.Background(), dir)
}

// LoadDirContext is LoadDir reading under ctx: a done context stops the reads and is the
// error.
func LoadDirContext(ctx context.Context, dir string) (*Plugin, []diag.Diagnostic, error) {
	p, ds, err := load(ctx, DirFetcher(dir), "", dir)
	if p != nil {
		p.Dir = dir
	}
	return p, ds, err
}

// Load loads the plugin behind an install link of any form ResolveLink accepts, fetching
// PLUGIN.md and the files its frontmatter names through f. The error is non-nil when the link is
// malformed or PLUGIN.md cannot be fetched; content problems are Diagnostics.
func Load(ctx context.Context, f Fetcher, link string) (*Plugin, []diag.Diagnostic, error) {
	l, err := ResolveLink(link)
	if err != nil {
		return nil, nil, err
	}
	return load(ctx, f, l.Base, link)
}

// LoadFiles loads a draft given as files by relative path ({ "PLUGIN.md": …, "tools/x.yaml": … }),
// as the assistant's plugins.validate tool passes them (seed 003 "让 AI 帮你写插件").
func LoadFiles(ctx context.Context, files map[string][]byte) (*Plugin, []diag.Diagnostic, error) {
	return load(ctx, MapFetcher(files), "", "")
}

// loader holds the state of one load.
type loader struct {
	ctx    context.Context
	f      Fetcher
	base   string // "" for folders and drafts
	budget int64
	d      *diagList
	p      *Plugin
	env    *expr.Env
	fm     *fileDec // the frontmatter

	fetched map[string]fetchResult // files read ahead by prefetch, by clean path
}

func (l *loader) name(rel string) string {
	if l.base == "" {
		return rel
	}
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return l.base + strings.Join(segs, "/")
}

func load(ctx context.Context, f Fetcher, base, source string) (*Plugin, []diag.Diagnostic, error) {
	l := &loader{ctx: ctx, f: f, base: base, budget: MaxTotalBytes, d: &diagList{}}
	text, err := f.Fetch(ctx, l.name(ManifestFile), l.budget)
	if err != nil {
		if err == ErrTooLarge {
			return nil, nil, fmt.Errorf("%s is larger than %d KB", ManifestFile, MaxTotalBytes>>10)
		}
		return nil, nil, fmt.Errorf("cannot read %s: %w", ManifestFile, err)
	}
	l.budget -= int64(len(text))
	l.env = stdlib.NewEnv()
	p := &Plugin{
		Source:   source,
		Manifest: &Manifest{Pos: Positions{}},
		Shared:   &Shared{Constants: expr.NewObject(0)},
		Files:    map[string][]byte{ManifestFile: text},
		Env:      l.env,
	}
	l.p = p
	l.loadManifest(text)
	p.Hash = ContentHash(p.Files)
	for _, d := range Validate(p) {
		l.d.add(d)
	}
	return p, l.d.result(), nil
}

// splitFrontmatter finds the YAML frontmatter of PLUGIN.md. It returns the text the YAML parser
// reads (the file up to the closing line, with the opening "---" blanked so that lines and
// columns match the file), the Markdown body, and ok.
func splitFrontmatter(text []byte) (yamlText []byte, body string, ok bool) {
	if !bytes.HasPrefix(text, []byte("---")) {
		return nil, "", false
	}
	first := bytes.IndexByte(text, '\n')
	if first < 0 || strings.TrimRight(string(text[3:first]), " \t\r") != "" {
		return nil, "", false
	}
	off := first + 1
	for off <= len(text) {
		end := bytes.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		if end >= 0 {
			lineEnd = off + end
		}
		line := strings.TrimRight(string(text[off:lineEnd]), " \t\r")
		if line == "---" || line == "..." {
			y := make([]byte, off)
			copy(y, text[:off])
			copy(y, "   ")
			bodyStart := lineEnd + 1
			if bodyStart > len(text) {
				bodyStart = len(text)
			}
			return y, string(text[bodyStart:]), true
		}
		if end < 0 {
			break
		}
		off = lineEnd + 1
	}
	return nil, "", false
}

func (l *loader) loadManifest(text []byte) {
	p := l.p
	src := newSource(ManifestFile, text)
	l.fm = &fileDec{src: src, d: l.d}
	if !utf8.Valid(text) {
		l.d.errorf(ManifestFile, src.pos(firstInvalidUTF8(text)), "", "file is not UTF-8 text")
		return
	}
	if i := bytes.IndexByte(text, 0); i >= 0 {
		l.d.errorf(ManifestFile, src.pos(i), "", "file contains a NUL byte")
		return
	}
	if bytes.HasPrefix(text, []byte("\xef\xbb\xbf")) {
		l.d.errorf(ManifestFile, diag.Pos{Line: 1, Col: 1}, "", "remove the byte-order mark at the start of %s", ManifestFile)
		return
	}
	yamlText, body, ok := splitFrontmatter(text)
	if !ok {
		l.d.errorf(ManifestFile, diag.Pos{Line: 1, Col: 1}, "", "%s must start with YAML frontmatter between two --- lines", ManifestFile)
		return
	}
	p.Instructions = strings.TrimSpace(body)
	root, ok := parseYAML(src, yamlText, l.d)
	if !ok {
		return
	}
	m, raw := decodeManifest(l.fm, root)
	p.Manifest = m
	l.prefetch(m)

	// shared: first, since every tool's Env builds on it.
	switch {
	case raw.inlineShared != nil:
		p.Shared = decodeShared(l.fm, raw.inlineShared, "", l.env)
	case m.Shared != "":
		if f, n := l.yamlFile(m.Shared, "shared"); n != nil {
			p.Shared = decodeShared(f, n, f.file(), l.env)
		}
	}
	// Tool files are fetched in order (the size budget is shared), then parsed and decoded in
	// parallel: each has its own Env layer and diagnostics.
	seen := map[string]string{}
	jobs := make([]toolJob, 0, len(m.Tools))
	for _, ref := range m.Tools {
		job := toolJob{ref: ref, d: &diagList{}}
		if ref.File == "" {
			job.node = raw.inlineTools[ref.Name]
			job.f = &fileDec{src: l.fm.src, d: job.d}
		} else {
			if clean, err := checkRelPath(ref.File); err == nil {
				if other, dup := seen[clean]; dup {
					l.d.errorf(ManifestFile, m.Pos.At("tools."+ref.Name+".file"), "", "tools.%s: %s is already the file of tool %s (one tool per file)", ref.Name, clean, other)
					continue
				}
				seen[clean] = ref.Name
			}
			name, b := l.fetchFile(ref.File, "tools."+ref.Name+".file")
			if b == nil {
				continue
			}
			job.name, job.text = name, b
		}
		jobs = append(jobs, job)
	}
	runParallel(len(jobs), func(i int) {
		job := &jobs[i]
		if job.f == nil {
			src := newSource(job.name, job.text)
			root, ok := parseYAML(src, job.text, job.d)
			if !ok {
				return
			}
			job.f, job.node = &fileDec{src: src, d: job.d}, root
		}
		job.tool, _ = decodeTool(job.f, job.ref.Name, job.node, l.env, p.Shared, false)
		// The tree is garbage once decoded: dropping it now keeps the live heap (and so the
		// collector's marking) to the files being decoded instead of every file of the plugin.
		job.node, job.f = nil, nil
	})
	for _, job := range jobs {
		for _, d := range job.d.ds {
			l.d.add(d)
		}
		if job.tool != nil {
			p.Tools = append(p.Tools, job.tool)
		}
	}
	for _, ref := range m.Widgets {
		l.rawFile(ref.File, "widgets."+ref.Name)
	}
	for _, ref := range m.Screens {
		l.rawFile(ref.File, "screens."+ref.Name)
	}
	if raw.server != nil {
		m.Server = decodeServer(l.fm, raw.server, l.env, p.Shared, m.Pos)
	}
}

// fetchFile reads one file the frontmatter names, reporting problems at the naming field.
func (l *loader) fetchFile(rel, field string) (string, []byte) {
	at := l.p.Manifest.Pos.At(field)
	clean, err := checkRelPath(rel)
	if err != nil {
		l.d.errorf(ManifestFile, at, "", "%s: %v", field, err)
		return "", nil
	}
	if clean == ManifestFile {
		l.d.errorf(ManifestFile, at, "", "%s: %s cannot name %s itself", field, field, ManifestFile)
		return "", nil
	}
	if b, ok := l.p.Files[clean]; ok {
		return clean, b
	}
	var b []byte
	if r, ok := l.fetched[clean]; ok {
		b, err = r.data, r.err
		if err == nil && int64(len(b)) > l.budget {
			b, err = nil, ErrTooLarge
		}
	} else {
		b, err = l.f.Fetch(l.ctx, l.name(clean), l.budget)
	}
	if err != nil {
		l.d.errorf(ManifestFile, at, "", "%s: %s", field, describeFetchError(clean, err))
		return "", nil
	}
	l.budget -= int64(len(b))
	l.p.Files[clean] = b
	return clean, b
}

// prefetchWorkers is how many files prefetch reads at the same time.
const prefetchWorkers = 6

// fetchResult is one prefetched file.
type fetchResult struct {
	data []byte
	err  error
}

// prefetch reads every file the manifest names, up to prefetchWorkers at a time, so that a
// plugin behind a link loads in about one round trip per file batch instead of one per file.
// Each read is capped at what was left of the budget after PLUGIN.md, and no new read starts
// once the files read hold more than the whole budget. fetchFile then takes the files in
// manifest order and does the budget accounting, so the diagnostics do not depend on timing.
func (l *loader) prefetch(m *Manifest) {
	var names []string
	seen := map[string]bool{}
	add := func(rel string) {
		if clean, err := checkRelPath(rel); err == nil && clean != ManifestFile && !seen[clean] {
			seen[clean] = true
			names = append(names, clean)
		}
	}
	if m.Shared != "" {
		add(m.Shared)
	}
	for _, t := range m.Tools {
		if t.File != "" {
			add(t.File)
		}
	}
	for _, list := range [][]*FileRef{m.Widgets, m.Screens} {
		for _, f := range list {
			add(f.File)
		}
	}
	if len(names) < 2 {
		return // nothing to overlap
	}
	results := make([]fetchResult, len(names))
	done := make([]bool, len(names))
	var total atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(prefetchWorkers, len(names)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(names) || total.Load() > MaxTotalBytes || l.ctx.Err() != nil {
					return
				}
				b, err := l.f.Fetch(l.ctx, l.name(names[i]), l.budget)
				total.Add(int64(len(b)))
				results[i], done[i] = fetchResult{b, err}, true
			}
		}()
	}
	wg.Wait()
	l.fetched = make(map[string]fetchResult, len(names))
	for i, name := range names {
		if done[i] {
			l.fetched[name] = results[i]
		}
	}
}

// yamlFile fetches and parses a YAML file the frontmatter names.
func (l *loader) yamlFile(rel, field string) (*fileDec, *yaml.Node) {
	name, b := l.fetchFile(rel, field)
	if b == nil {
		return nil, nil
	}
	src := newSource(name, b)
	root, ok := parseYAML(src, b, l.d)
	if !ok {
		return nil, nil
	}
	return &fileDec{src: src, d: l.d}, root
}

// rawFile fetches a widget or screen file; Validate checks its content.
func (l *loader) rawFile(rel, field string) {
	l.fetchFile(rel, field)
}

func decodeServer(f *fileDec, n *yaml.Node, env *expr.Env, shared *Shared, pos Positions) *Server {
	fs, ok := f.fields(n, "server", "", "network", "secrets", "functions")
	if !ok {
		return nil
	}
	s := &Server{Pos: f.pos(n)}
	for _, k := range fs.order {
		pos["server."+k] = f.pos(fs.get(k))
	}
	if x := fs.get("network"); x != nil {
		var ps []diag.Pos
		s.Network, ps, _ = f.strList(x, "server.network", "")
		for i, p := range ps {
			pos[fmt.Sprintf("server.network[%d]", i)] = p
		}
	}
	if x := fs.get("secrets"); x != nil {
		s.Secrets, _, _ = f.strList(x, "server.secrets", "")
	}
	if x := fs.get("functions"); x != nil {
		ps, _ := f.mapping(x, "server.functions", "")
		for _, p := range ps {
			pos["server.functions."+p.key] = f.pos(p.k)
			t, tfs := decodeTool(f, p.key, p.v, env, shared, true)
			if t == nil {
				continue
			}
			sf := &ServerFunction{Tool: t, Access: "user"}
			if tfs != nil {
				if y := tfs.get("access"); y != nil {
					sf.Access, _ = f.str(y, "access", "")
				}
				if y := tfs.get("cache"); y != nil {
					sf.Cache, _ = f.duration(y, "cache", "")
				}
			}
			s.Functions = append(s.Functions, sf)
		}
	}
	return s
}

// ContentHash is the hash of a plugin's loaded files: "sha256:" and the hex SHA-256 of, for each
// file in path order, the path, a NUL, the length in decimal, a NUL and the bytes. The same files
// always give the same hash; renaming or changing any loaded file changes it (seed "Updates").
func ContentHash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(files[n]))))
		h.Write([]byte{0})
		h.Write(files[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// toolJob is one tool to parse and decode.
type toolJob struct {
	ref  *ToolRef
	name string // the tool file, "" for an inline tool
	text []byte
	node *yaml.Node
	f    *fileDec
	d    *diagList
	tool *Tool
}

// runParallel calls fn(0) … fn(n-1) on up to GOMAXPROCS goroutines and waits for them.
func runParallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
