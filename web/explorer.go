// Package web serves Headwater's browser pages that are built from web/ sources: the lineage explorer
// (web/explorer, docs/explorer.md), a static single-page app on the public GraphQL API. The built files
// (web/explorer/dist) are committed and embedded, so `go build` needs no Node; scripts/explorer.sh check fails when
// a rebuild from the sources gives other files. The pages hold no data: every answer comes from /graphql with the
// bearer the user pastes, so they are served without authentication.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed explorer/dist
var explorerFiles embed.FS

// ExplorerPath is where the explorer is served (with a trailing slash; the bare path redirects to it).
const ExplorerPath = "/explore/"

// explorerCSP allows the page its own scripts, styles and GraphQL calls only: no third-party origin, no inline
// script. Inline style attributes are allowed: the graph library positions its boxes with them.
const explorerCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Explorer serves the explorer's files under ExplorerPath: index.html at ExplorerPath, assets below it. The file
// names carry no content hash, so every response says no-cache and carries an ETag of the file's content
// (browsers revalidate and get 304 while the binary is the same).
func Explorer() http.Handler {
	dist, err := fs.Sub(explorerFiles, "explorer/dist")
	if err != nil { // cannot happen: the directory is embedded at build time
		return http.NotFoundHandler()
	}
	tags := etags(dist)
	files := http.StripPrefix(ExplorerPath, http.FileServerFS(dist))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		name := strings.TrimPrefix(r.URL.Path, ExplorerPath)
		if name == "" {
			name = "index.html"
		}
		if tag, ok := tags[name]; ok {
			h.Set("ETag", tag) // http.ServeContent answers If-None-Match with it
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", explorerCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}

// etags are the strong ETags of every embedded file by path (the first 16 bytes of its SHA-256).
func etags(dist fs.FS) map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(dist, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(dist, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[path] = `"` + hex.EncodeToString(sum[:16]) + `"`
		return nil
	})
	return out
}

// Register mounts the explorer on mux: GET ExplorerPath and below, and the bare path redirecting to it.
func Register(mux *http.ServeMux) {
	mux.Handle("GET "+ExplorerPath, Explorer())
	mux.Handle("GET "+strings.TrimSuffix(ExplorerPath, "/"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := ExplorerPath
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery // a shared view's URL keeps its view
		}
		http.Redirect(w, r, to, http.StatusMovedPermanently)
	}))
}
