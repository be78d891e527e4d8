package uie2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// post calls the HTTP JSON API as the reader and decodes the answer.
func (e *env) post(t *testing.T, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+readerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, buf.String())
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
}

// TestReceiptPage: a draft verified through the API (POST /v1/verify)
// opens at /ui/receipts/{id} with its signature holding, nothing changed,
// the quote and the fact marked in the draft and in the passage as read,
// the checks listed and the unchecked sentence named.
func TestReceiptPage(t *testing.T) {
	e := setup(t)
	var found struct {
		Results []struct{ Ref, File string }
	}
	e.post(t, "/v1/search", map[string]any{"query": "daily allowance for meals abroad", "layers": []string{layer}, "top_k": 1}, &found)
	if len(found.Results) != 1 || found.Results[0].File != "travel-policy.md" {
		t.Fatalf("search: %+v", found)
	}
	draft := `Abroad, "the daily allowance for meals" is 48 euros a day [S1]. Have a good trip.`
	var v struct {
		Status    string
		ReceiptID string `json:"receipt_id"`
	}
	e.post(t, "/v1/verify", map[string]any{"draft": draft, "passages": []string{found.Results[0].Ref}}, &v)
	if v.ReceiptID == "" {
		t.Fatalf("verify issued no receipt: %+v", v)
	}
	var got struct {
		seen
		Title, Signature, Changed, Draft string
		DraftMarks, PassageMarks         []string
		PassageLinks, Unchecked          []string
		Checks                           [][]string
		Narrow                           int
	}
	e.browse(t, "receipt", "/ui/receipts/"+v.ReceiptID, &got)
	got.check(t)
	if got.Title != "Receipt "+v.ReceiptID || got.Draft != draft {
		t.Errorf("title %q, draft %q", got.Title, got.Draft)
	}
	if !strings.HasPrefix(got.Signature, "signature holds") || !strings.HasPrefix(got.Changed, "unchanged") {
		t.Errorf("signature %q; changed %q", got.Signature, got.Changed)
	}
	for _, want := range []string{"hit quote: the daily allowance for meals", "hit fact: 48"} {
		if !slices.ContainsFunc(got.DraftMarks, func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Errorf("the draft's marks %q lack %q", got.DraftMarks, want)
		}
	}
	// In the passage the quote's match is marked in the document's own
	// case ("The daily allowance…"), and the amount within its sentence.
	if !slices.ContainsFunc(got.PassageMarks, func(m string) bool {
		return strings.HasPrefix(m, "hit quote: ") && strings.EqualFold(strings.TrimPrefix(m, "hit quote: "), "the daily allowance for meals")
	}) || !slices.ContainsFunc(got.PassageMarks, func(m string) bool { return strings.HasPrefix(m, "hit fact: 48") }) {
		t.Errorf("the passage's marks: %q", got.PassageMarks)
	}
	if len(got.PassageLinks) != 1 || !strings.HasPrefix(got.PassageLinks[0], "/ui/doc/") {
		t.Errorf("passage links %q", got.PassageLinks)
	}
	if len(got.Checks) < 2 || !slices.Equal(got.Unchecked, []string{"Have a good trip."}) {
		t.Errorf("checks %q; unchecked %q", got.Checks, got.Unchecked)
	}
	if got.Narrow > 320 {
		t.Errorf("at 320 px the page is %d px wide", got.Narrow)
	}
}
