package server

import (
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// viewerCSP is the Content-Security-Policy of every viewer page and asset (seed 003 “GET
// /w/{plugin}/{page}”): scripts, styles and connections to this origin only, nothing inline, no
// frames, no forms, no plugins.
const viewerCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// listPages finds {plugin}/{page}/index.html in pages, for GET /v1/meta.
func listPages(pages fs.FS) ([]protocol.MetaPage, error) {
	if pages == nil {
		return nil, nil
	}
	plugins, err := fs.ReadDir(pages, ".")
	if err != nil {
		return nil, err
	}
	var out []protocol.MetaPage
	for _, p := range plugins {
		if !p.IsDir() || !protocol.ValidPluginID(p.Name()) {
			continue
		}
		ents, err := fs.ReadDir(pages, p.Name())
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() || !protocol.ValidPageName(e.Name()) {
				continue
			}
			if _, err := fs.Stat(pages, path.Join(p.Name(), e.Name(), "index.html")); err == nil {
				out = append(out, protocol.MetaPage{Plugin: p.Name(), Page: e.Name()})
			}
		}
	}
	return out, nil
}

// shareRedirect answers GET /s/{id}: 302 to the viewer page the channel was opened with,
// /w/{plugin}/{page}?c={id}. The browser keeps the `#k=` fragment; the server never sees it.
func (s *Server) shareRedirect(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !protocol.ValidID(id) {
			return errf(protocol.CodeNotFound, "no channel %q", id)
		}
		ch, err := s.st.Channel(r.Context(), id)
		if errors.Is(err, ErrNotFound) {
			return errf(protocol.CodeNotFound, "no channel %q", id)
		} else if err != nil {
			return err
		}
		if ch.Page == "" {
			return errf(protocol.CodeNotFound, "the channel has no viewer page")
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, "/w/"+ch.Plugin+"/"+ch.Page+"?c="+url.QueryEscape(id), http.StatusFound)
		return nil
	}
}

// viewerPage answers GET /w/{plugin}/{page} (index.html) and /w/{plugin}/{page}/{asset}
// from Config.Pages with the strict CSP.
func (s *Server) viewerPage(plugin, page, asset string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Pages == nil || !protocol.ValidPluginID(plugin) || !protocol.ValidPageName(page) {
			return errf(protocol.CodeNotFound, "no viewer page /w/%s/%s", plugin, page)
		}
		name := "index.html"
		if asset != "" {
			if !validAsset(asset) {
				return errf(protocol.CodeNotFound, "no asset %q", asset)
			}
			name = asset
		}
		b, err := fs.ReadFile(s.cfg.Pages, path.Join(plugin, page, name))
		if err != nil {
			return errf(protocol.CodeNotFound, "no viewer page /w/%s/%s/%s", plugin, page, asset)
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h := w.Header()
		h.Set("Content-Type", ct)
		h.Set("Content-Security-Policy", viewerCSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(b)
		}
		return nil
	}
}

// validAsset accepts a plain file name: letters, digits, '.', '_', '-', not starting with '.'.
func validAsset(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
