// Package web is the PKU harness web app (seed 003: the app's chat, dashboard, plugin screens,
// settings and review sheets), served by `harness serve` on the API's own origin.
//
// The sources are src/ (TypeScript with Preact and @preact/signals; Markdown through marked and
// DOMPurify; QR code images read by jsQR, in a chunk of its own loaded only when an image is
// opened); `npm ci && npm run build` bundles them with esbuild into dist/, which is committed
// and embedded here, so building the harness binary needs no npm. Handler serves dist/ for the
// app's routes (/, /chat, /p/<plugin>/<screen>, /m/…, /plugins, /plugins/<id>, /settings) under a
// strict Content-Security-Policy: no inline script or style, nothing from another origin. The
// page talks to the API with same-origin fetches that send Content-Type: application/json, so
// the API's cross-site guard stays as it is.
//
// Routes adds the API routes the app needs besides the host's: POST /v1/ui/draw, which loads
// a widget's or screen's data through the host (its data-source cache, Host.Call as the user)
// and evaluates the genui document for the viewer (genui.Draw), so templates run in Go with the
// plugin expression language and the browser only draws the resolved tree; and the dashboard's
// event stream, POST /v1/ui/dashboard/events, through which the host owns the cards' refresh
// (Dashboard: it refreshes their data sources at their `refresh` intervals and tells the page
// which card to draw again, so the page never polls).
package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed dist
var dist embed.FS

// CSP is the Content-Security-Policy of every page and asset: only this origin's scripts,
// styles, images (and data: images for QR codes the API renders) and connections.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// FS returns the built app rooted at dist/: index.html and assets/.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("web: " + err.Error()) // "dist" is a valid path: unreachable
	}
	return sub
}

// AppRoutes are the GET patterns the app's page answers (its client-side routes) besides its
// assets under /assets/.
var AppRoutes = []string{"GET /{$}", "GET /chat", "GET /chat/{id}", "GET /p/{plugin}/{screen}", "GET /m/{plugin}/{screen}",
	"GET /plugins", "GET /plugins/{id}", "GET /settings", "GET /settings/{page}", "GET /install"}

type asset struct {
	body, gz []byte
	ctype    string
}

var (
	assetsOnce sync.Once
	assets     map[string]*asset
)

func loadAssets() {
	assets = map[string]*asset{}
	_ = fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), p)
		if err != nil {
			return err
		}
		a := &asset{body: b, ctype: contentType(p)}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		if buf.Len() < len(b) {
			a.gz = buf.Bytes()
		}
		assets["/"+p] = a
		return nil
	})
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

// Handler serves the app: index.html for every AppRoutes path and the files under /assets/,
// gzip-compressed when the client accepts it, with CSP, nosniff and no-referrer headers. The
// assets' names carry no hash, so they are served with Cache-Control: no-cache (revalidated by
// ETag on every load).
func Handler() http.Handler {
	assetsOnce.Do(loadAssets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if !strings.HasPrefix(p, "/assets/") {
			p = "/index.html"
		}
		a := assets[p]
		if a == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Type", a.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("Vary", "Accept-Encoding")
		body := a.body
		if a.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			body = a.gz
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}
