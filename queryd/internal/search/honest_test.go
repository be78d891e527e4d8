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

	// The document named first lifts a medium similarity to high (marks
	// set so that the best similarity is at the medium mark and under the
	// high one), and alone lifts nothing (marks above any similarity).
	const question = "What does the Data Protection Regulation say about consent?"
	for _, c := range []struct {
		high, medium float64
		want         string
		evidence     bool
	}{{0.99, 0.01, "high", true}, {0.99, 0.98, "low", false}} {
		f.setParams(t, `INSERT INTO strata.model_search_params (model, confidence_high, confidence_medium)
			VALUES ($1, $2, $3) ON CONFLICT (model) DO UPDATE SET confidence_high = $2, confidence_medium = $3`,
			f.emb.Model().Name, c.high, c.medium)
		resp = mustSearch(t, f.searcher(t), Request{Query: question, Layers: []string{"regs", "deals"}, TopK: 3})
		named := slices.Contains(resp.Evidence, "named_document")
		if len(resp.Results) == 0 || resp.Results[0].File != "regulation.md" || named != c.evidence ||
			resp.Confidence != c.want && !(c.want == "low" && slices.Contains(resp.Evidence, "phrase")) {
			t.Errorf("marks %.2f/%.2f: first %v, confidence %s, evidence %v; want %s", c.high, c.medium, files(resp),
				resp.Confidence, resp.Evidence, c.want)
		}
	}
	f.setParams(t, `DELETE FROM strata.model_search_params WHERE model = $1`, f.emb.Model().Name)
}
