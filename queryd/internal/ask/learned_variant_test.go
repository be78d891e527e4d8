package ask

import (
	"context"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestLearnedVariantNeverLiftsTheStatus: passages are judged against the
// question as asked (issue 27, item 2). A variant (a learned rewrite that
// came from an unrelated follow-up, say) brings its document back and may
// put it first, but the status, the confidence, rerank_score and
// relevance_score are the question's own. Before, reranking kept each
// passage's best score over the variants, and the unrelated document's
// 1.0 against the variant made a not_found question found.
func TestLearnedVariantNeverLiftsTheStatus(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	root := writeFolder(t, "style", map[string]string{
		"pep-0008.md": "# Style Guide\n\nUse four spaces per indentation level.\n",
		"travel.md":   "# Travel\n\nTravel expenses are refunded within thirty days of the claim.\n",
	})
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "style", Root: root, ChunkSize: 400},
		ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	st, err := store.OpenCorpus(context.Background(), dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	const question, unrelated = "How wide should each indentation step be?", "travel expenses refunded claim"
	a := New(Options{Engine: retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1}), Docs: st,
		Reranker: Texts{overlap{}}, Rewriter: func(_ context.Context, q string, _ []store.Layer) ([]string, string) {
			if q == question {
				return []string{q, unrelated}, ""
			}
			return []string{q}, ""
		}})

	r := ask(t, a, Request{Question: question, Layers: []string{"style"}, ResponseFormat: FormatDetailed})
	if len(r.QueryVariants) != 2 {
		t.Fatalf("variants %q, want the question and the learned one", r.QueryVariants)
	}
	if r.AnswerStatus != string(NotFound) || r.Confidence != "low" {
		t.Errorf("status %s, confidence %s: want not_found and low, judged on the question as asked", r.AnswerStatus, r.Confidence)
	}
	var travel *RetrievedChunk
	for i, c := range r.RetrievedChunks {
		if c.File == "travel.md" {
			travel = &r.RetrievedChunks[i]
		}
	}
	if travel == nil || travel.RerankScore == nil {
		t.Fatalf("the variant's document did not come back with a rerank score: %+v", r.RetrievedChunks)
	}
	if *travel.RerankScore != 0 {
		t.Errorf("travel.md rerank_score %v, want 0: the question's own score, not the variant's 1", *travel.RerankScore)
	}
	// The variant orders: its document comes first.
	if r.RetrievedChunks[0].File != "travel.md" {
		t.Errorf("order %q, want travel.md first (its best score over the variants)", files(r))
	}
	for _, s := range r.Sources {
		if s.File == "travel.md" && s.RelevanceScore != 0 {
			t.Errorf("travel.md relevance_score %v, want 0", s.RelevanceScore)
		}
	}

	// The same words asked as the question earn the status themselves.
	if r := ask(t, a, Request{Question: unrelated, Layers: []string{"style"}, ResponseFormat: FormatDetailed}); r.AnswerStatus != string(Found) {
		t.Errorf("%q asked as the question: %s, want found", unrelated, r.AnswerStatus)
	}
}
