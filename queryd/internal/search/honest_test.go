package search

import (
	"slices"
	"strings"
	"testing"
)

// TestSearchHonestNotes: strata_search says what issue 26's rules say in
// strata_ask: a named section the named document lacks is low confidence
// with a note on what it has, and a document the query names that comes
// first is named_document evidence.
func TestSearchHonestNotes(t *testing.T) {
	t.Parallel()
	f := issue12Fixture(t)
	f.open(t)
	s := f.searcher(t)

	resp := mustSearch(t, s, Request{Query: "What does Article 41 of the data protection regulation require?", TopK: 3})
	if resp.Confidence != "low" || !strings.Contains(resp.Note, "has no Article 41") || !strings.Contains(resp.Note, "articles are 4–6") {
		t.Errorf("missing article: confidence %s, note %q", resp.Confidence, resp.Note)
	}
	for _, r := range resp.Results {
		if r.Match == "exact" {
			t.Errorf("an exact result from %s", r.File)
		}
	}

	resp = mustSearch(t, s, Request{Query: "What does the Data Protection Regulation say about consent?", Layers: []string{"regs", "deals"}, TopK: 3})
	if len(resp.Results) == 0 || resp.Results[0].File != "regulation.md" || !slices.Contains(resp.Evidence, "named_document") ||
		resp.Confidence == "low" {
		t.Errorf("named document: first %v, confidence %s, evidence %v", files(resp), resp.Confidence, resp.Evidence)
	}
}
