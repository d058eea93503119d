// Package viewer embeds the PKU harness Cloud viewer pages (seed 003 “# 分享链接与页面”): static
// pages a share link redirects to, which decrypt a channel's frames in the browser.
//
// The sources are src/ (plain JavaScript using the audited @noble/ciphers, @noble/curves and
// @noble/hashes); `npm ci && npm run build` bundles them with esbuild into dist/, which is
// committed, so building the harness binary needs no npm. FS serves dist/ laid out as
// {plugin}/{page}/index.html plus that page's assets, e.g. demo/view/index.html,
// demo/view/view.js and demo/view/view.css for /w/demo/view. The pages load no inline script or
// style, so they run under the server's strict Content-Security-Policy.
//
// The pages: demo/view shows every frame it decrypts; card-share/view is the card-share
// built-in's (seed 003 “# 插件指南”): the campus card payment code as a QR code, refreshed as
// the owner sends fresh codes, with the share's countdown, removed when the share ends.
package viewer

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// FS returns the built pages rooted at dist/: {plugin}/{page}/index.html and its assets.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("viewer: " + err.Error()) // "dist" is a valid path: unreachable
	}
	return sub
}

// Pages lists the (plugin, page) pairs FS holds, in lexical order: every directory two levels
// down that has an index.html.
func Pages() [][2]string {
	var out [][2]string
	fsys := FS()
	plugins, _ := fs.ReadDir(fsys, ".")
	for _, p := range plugins {
		if !p.IsDir() {
			continue
		}
		pages, _ := fs.ReadDir(fsys, p.Name())
		for _, pg := range pages {
			if _, err := fs.Stat(fsys, p.Name()+"/"+pg.Name()+"/index.html"); err == nil {
				out = append(out, [2]string{p.Name(), pg.Name()})
			}
		}
	}
	return out
}
