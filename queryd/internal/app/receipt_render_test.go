package app

import (
	"bytes"
	"strings"
	"testing"

	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/verify"
)

// TestRenderExtractiveReceipt (issue 27, item 8): an extractive answer's
// receipt shows the question as the question and the sentences it quoted,
// not a draft with "quotes and facts checked"; a verify receipt keeps its
// wording.
func TestRenderExtractiveReceipt(t *testing.T) {
	sentence := "Either party may end this agreement with ninety days' written notice."
	r := &verify.ReceiptResponse{ReceiptID: "rcpt_x", CreatedAt: "2026-12-06T08:00:00Z", Tool: "strata_ask", Status: "found",
		Draft: "How can either party end the agreement?", Checked: 1,
		Passages: []verify.ReceiptPassageNow{{ID: "S1", Ref: "doc:1:0-70", Layer: "clauses", File: "msa.md", Text: sentence, Unchanged: true}},
		Checks:   []verify.ReceiptCheck{{Kind: askpkg.ReceiptSentence, Text: sentence, Sentence: 1, Passage: "S1", End: len(sentence), Matched: sentence}}}
	var b bytes.Buffer
	renderReceipt(&b, r)
	out := b.String()
	for _, want := range []string{"Answer: found, 1 sentences quoted word for word", "Question:\n    How can either party end", "[S1] clauses/msa.md", sentence} {
		if !strings.Contains(out, want) {
			t.Errorf("extractive receipt lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"Draft:", "quotes and facts checked", ">>>"} {
		if strings.Contains(out, bad) {
			t.Errorf("extractive receipt shows %q:\n%s", bad, out)
		}
	}
	r.Tool, r.Checks = "strata_verify", []verify.ReceiptCheck{{Kind: "quote", Text: "ninety days", Passage: "S1", Matched: "ninety days"}}
	b.Reset()
	renderReceipt(&b, r)
	if out := b.String(); !strings.Contains(out, "Draft:") || !strings.Contains(out, "1 quotes and facts checked") {
		t.Errorf("verify receipt:\n%s", out)
	}
}
