// Package ui is the explorer: the read-only web pages that `queryd serve`
// shows under /ui/. The pages are HTML shells rendered once from embedded
// templates, plus our own small scripts that fetch their data from the JSON
// HTTP API with the caller's token, so a page can do nothing that an API
// client with the same token cannot. Document text is data: the scripts
// insert it only as text nodes, and every response carries a
// Content-Security-Policy that allows no inline script or style and nothing
// from another origin.
package ui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"strings"
)

//go:embed static
var files embed.FS

// ContentSecurityPolicy is sent with every response of the explorer: only
// this origin's scripts, styles and images (and data: images), no plugins,
// no <base>, and no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// Page is one page of the explorer: the route pattern it answers (a
// net/http ServeMux pattern), its template under static/ (NAME.html, which
// defines "title", "main" and optionally "scripts", rendered inside
// base.html), and the nav entry it marks as current. A page's script and
// styles sit beside it as NAME.js and NAME.css.
type Page struct {
	Pattern  string
	Template string
	Nav      string
}

// Pages are the explorer's pages. A new page adds a template and a line here.
var Pages = []Page{
	{Pattern: "GET /ui/{$}", Template: "layers.html", Nav: "Layers"},
	{Pattern: "GET /ui/doc/{id}", Template: "doc.html", Nav: ""},
	{Pattern: "GET /ui/ask", Template: "ask.html", Nav: "Ask"},
	{Pattern: "GET /ui/learning", Template: "learning.html", Nav: "Learning"},
	{Pattern: "GET /ui/receipts/{id}", Template: "receipt.html", Nav: ""},
}

// navLinks are the entries of every page's navigation bar, in order.
var navLinks = []struct{ Label, Href string }{
	{"Layers", "/ui/"},
	{"Ask", "/ui/ask"},
	{"Learning", "/ui/learning"},
}

type navItem struct {
	Label, Href string
	Current     bool
}

// Handler serves the explorer: its pages and /ui/static/. It does no
// access check of its own: the pages hold no data (their scripts fetch it
// through the API, which authenticates), and the server's guard, in front
// of everything it serves, keeps a server without tokens to loopback.
//
// The templates are embedded, so one that does not render is a defect of
// the build, which the package's tests catch: Handler panics on it.
func Handler() http.Handler {
	h, err := handler()
	if err != nil {
		panic(err)
	}
	return h
}

func handler() (http.Handler, error) {
	mux := http.NewServeMux()
	for _, p := range Pages {
		body, err := render(p)
		if err != nil {
			return nil, err
		}
		mux.Handle(p.Pattern, htmlPage(body))
	}
	static, err := fs.Sub(files, "static")
	if err != nil {
		return nil, fmt.Errorf("ui static files: %w", err)
	}
	mux.Handle("GET /ui/static/", assetsOnly(http.StripPrefix("/ui/static/", http.FileServerFS(static))))
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no page "+r.URL.Path+" (the explorer starts at /ui/)", http.StatusNotFound)
	})
	return secure(mux), nil
}

// render executes a page's template inside static/base.html once; the
// result does not change while the server runs.
func render(p Page) ([]byte, error) {
	t, err := template.ParseFS(files, "static/base.html", "static/"+p.Template)
	if err != nil {
		return nil, fmt.Errorf("ui template %s: %w", p.Template, err)
	}
	nav := make([]navItem, len(navLinks))
	for i, l := range navLinks {
		nav[i] = navItem{Label: l.Label, Href: l.Href, Current: l.Label == p.Nav}
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "base", map[string]any{"Nav": nav}); err != nil {
		return nil, fmt.Errorf("ui template %s: %w", p.Template, err)
	}
	return buf.Bytes(), nil
}

func htmlPage(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	})
}

// assetExts are the files /ui/static/ serves: scripts, styles and images.
// The pages' templates (.html) sit in the same folder but are served only
// rendered, at their pages' paths; folders are not listed.
var assetExts = []string{".js", ".css", ".svg", ".png"}

func assetsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.ContainsFunc(assetExts, func(ext string) bool { return strings.HasSuffix(r.URL.Path, ext) }) {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secure sets the security headers of every explorer response.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

// SetHeaders sets the explorer's security headers on h: the CSP, nosniff
// and no referrer (a document's id in the URL stays on this server).
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}
