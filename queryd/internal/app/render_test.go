package app

import (
	"strings"
	"testing"

	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
)

// TestRenderExtractiveAnswerFirst: on a terminal an extractive answer's
// sentences come before the passages they were taken from, and every
// citation part is written out.
func TestRenderExtractiveAnswerFirst(t *testing.T) {
	page := 3
	cit := askpkg.Citation{Layer: "contracts", File: "msa.txt", Page: &page, Lines: "40-44", ClausePath: "12 Governing law"}
	r := &askpkg.Response{Status: "found", Mode: "extractive",
		Answer:    []askpkg.AnswerSentence{{Text: "This agreement is governed by the laws of Delaware.", Passage: "S1", Citation: cit}},
		Passages:  []askpkg.Passage{{ID: "S1", Text: "12 Governing law\nThis agreement is governed by the laws of Delaware.", Citation: cit}},
		ReceiptID: "rcpt_x"}
	var b strings.Builder
	render(&b, r)
	out := b.String()
	ans := strings.Index(out, "Answer, in the documents' own words:")
	from := strings.Index(out, "The passages they come from:")
	pass := strings.Index(out, "[S1] contracts/msa.txt, page 3, lines 40-44, 12 Governing law")
	if ans < 0 || from < 0 || pass < 0 || !(ans < from && from < pass) {
		t.Fatalf("want the answer, then the passages with their citation; got:\n%s", out)
	}
	if !strings.HasPrefix(out, "found (extractive answer)") || !strings.Contains(out, "Receipt: rcpt_x") {
		t.Errorf("status line or receipt missing:\n%s", out)
	}
}
