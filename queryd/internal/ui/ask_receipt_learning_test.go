package ui

import (
	"net/http"
	"strings"
	"testing"
)

// TestAskReceiptLearningPages: the Ask, Receipt and Learning pages answer
// with their own script and stylesheet (beside them in static/, served),
// labelled controls, and the security headers; a receipt's page answers
// for any id (the API judges it), under /ui/receipts/ only.
func TestAskReceiptLearningPages(t *testing.T) {
	h := Handler()
	for path, want := range map[string][]string{
		"/ui/ask": {`src="/ui/static/ask.js"`, `href="/ui/static/ask.css"`, `<label for="ask-q">`, `<label for="ask-topk">`,
			`<label for="mode-ask"`, `<label for="mode-search"`, `<label for="ask-layers-text">`, `id="ask-out"`},
		"/ui/receipts/rcpt_0123456789abcdef0123456789abcdef": {`src="/ui/static/receipt.js"`, `href="/ui/static/receipt.css"`, `id="receipt"`},
		"/ui/receipts/not-an-id":                             {`src="/ui/static/receipt.js"`},
		"/ui/learning": {`src="/ui/static/learning.js"`, `href="/ui/static/learning.css"`, `<label for="learning-layer">`,
			`<label for="reset-layer">`, `<label for="reset-scope-all"`, `<dialog id="reset-confirm"`, `id="reset" class="panel danger" hidden`},
	} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
			continue
		}
		checkHeaders(t, path, resp.Header)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: the page lacks %s", path, w)
			}
		}
	}
	for _, asset := range []string{"ask.js", "ask.css", "receipt.js", "receipt.css", "learning.js", "learning.css"} {
		if resp, body := get(t, h, "/ui/static/"+asset); resp.StatusCode != http.StatusOK || body == "" {
			t.Errorf("GET /ui/static/%s: %d", asset, resp.StatusCode)
		}
	}
	for _, path := range []string{"/ui/receipts/", "/ui/receipts/a/b"} {
		if resp, _ := get(t, h, path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}
