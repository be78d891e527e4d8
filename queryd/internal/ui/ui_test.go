package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestPagesRender: every page answers with its HTML, the nav bar, the
// common script and the security headers.
func TestPagesRender(t *testing.T) {
	h := Handler()
	for _, path := range []string{"/ui/", "/ui/doc/42", "/ui/ask", "/ui/learning"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		for _, want := range []string{`<script src="/ui/static/common.js" defer></script>`, `href="/ui/static/style.css"`,
			`<nav aria-label="Explorer pages">`, `id="token-form"`, `<label for="token-input">`, `<main id="main"`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: the page lacks %s", path, want)
			}
		}
		checkHeaders(t, path, resp.Header)
	}
	_, body := get(t, h, "/ui/")
	if !strings.Contains(body, `<a href="/ui/" aria-current="page">Layers</a>`) || strings.Contains(body, `aria-current="page">Ask`) {
		t.Errorf("the Layers page does not mark itself, alone, as current:\n%s", body)
	}
}

func checkHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	if got := h.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
		t.Errorf("GET %s: Content-Security-Policy %q", path, got)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("GET %s: headers %v", path, h)
	}
}

// TestCSPIsStrict: the policy allows nothing inline and nothing from
// another origin.
func TestCSPIsStrict(t *testing.T) {
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'",
		"base-uri 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("the CSP lacks %s", want)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(ContentSecurityPolicy, bad) {
			t.Errorf("the CSP allows %s", bad)
		}
	}
}

// TestStaticAssets: scripts and styles are served with their types and the
// headers; templates are not served raw, folders are not listed, unknown
// pages are 404.
func TestStaticAssets(t *testing.T) {
	h := Handler()
	for path, ct := range map[string]string{"/ui/static/common.js": "text/javascript", "/ui/static/style.css": "text/css"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || body == "" {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		checkHeaders(t, path, resp.Header)
	}
	for _, path := range []string{"/ui/static/base.html", "/ui/static/", "/ui/static/nothing.js", "/ui/nothing", "/ui/doc/"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404\n%s", path, resp.StatusCode, body)
		}
		checkHeaders(t, path, resp.Header)
	}
}

var (
	inlineScript = regexp.MustCompile(`<script(?:\s[^>]*)?>`)
	inlineAttr   = regexp.MustCompile(`(?i)\s(on[a-z]+|style)\s*=`)
	htmlSinks    = regexp.MustCompile(`\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function`)
)

// TestNoInlineCodeAndNoHTMLSinks: the templates hold no inline script,
// style or event handler (the CSP would block them), and no script writes
// HTML from strings: document text reaches the page only as text.
func TestNoInlineCodeAndNoHTMLSinks(t *testing.T) {
	n := 0
	err := fs.WalkDir(files, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		text := string(b)
		switch {
		case strings.HasSuffix(path, ".html"):
			n++
			for _, tag := range inlineScript.FindAllString(text, -1) {
				if !strings.Contains(tag, `src="/ui/static/`) {
					t.Errorf("%s: a script without src: %s", path, tag)
				}
			}
			if m := inlineAttr.FindString(text); m != "" {
				t.Errorf("%s: an inline attribute %q", path, m)
			}
			if strings.Contains(text, "<style") {
				t.Errorf("%s: an inline <style>", path)
			}
		case strings.HasSuffix(path, ".js"):
			n++
			if m := htmlSinks.FindString(text); m != "" {
				t.Errorf("%s: uses %s", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("checked only %d files", n)
	}
}
