package ask

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestFallbackKeepsTheRoutedResults: a question routed by a layer's
// pattern to a layer smaller than top_k always falls back to every layer
// (too few results). The routed layer's passage then stays first, as in
// strata_search, although a larger layer has twenty passages that share
// more of the question's words; those follow, marked as outside routing.
// Before, the search over every layer replaced the routed results and the
// tariff came after the notices (on the answer set, past the ten the
// answer reads, so the answer was not_found). The tariff's title is not
// what the question calls it, so it is not a document the question names
// (named.go), which would bring it first on its own.
func TestFallbackKeepsTheRoutedResults(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	tariffs := writeFolder(t, "tariffs", map[string]string{
		"parcel-tariff.md": "# Parcel tariff 2026\n\nZone Z1, same city: 4.20 EUR. Zone Z2, same country: 6.90 EUR.\n",
	})
	notices := map[string]string{}
	for i := range 20 {
		notices[fmt.Sprintf("notice-%02d.md", i)] = fmt.Sprintf("# Notice %d\n\nThe base fee for a delivery within the same city "+
			"is agreed per delivery; the base fee for a delivery within the city is invoiced monthly (notice %d). ", i, i) +
			strings.Repeat("The carrier keeps the records of each delivery for the period the contract sets. ", 10) + "\n"
	}
	deals := writeFolder(t, "deals", notices)
	opt := ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})}
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "tariffs", Root: tariffs, RoutingPatterns: []string{"tariff"}}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "deals", Root: deals}, opt)
	ctx := context.Background()
	st, err := store.OpenCorpus(ctx, dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	a := New(Options{Engine: retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1}), Docs: st,
		Reranker: Texts{overlap{}}})

	const question = "What is the base fee in the parcel tariff for a delivery within the same city?"
	r := ask(t, a, Request{Question: question, TopK: 10, ResponseFormat: FormatDetailed})
	if r.RoutingFallback == nil || r.RoutingFallback.Reason != "insufficient_results" {
		t.Fatalf("want the insufficient_results fallback, got %+v over %v", r.RoutingFallback, r.SearchedLayers)
	}
	if len(r.Passages) < 2 || r.Passages[0].Citation.Layer != "tariffs" || r.Passages[0].OutsideRouting {
		t.Fatalf("the routed layer's tariff first, got %q", files(r))
	}
	var explained bool
	for _, c := range r.RetrievedChunks {
		if c.Layer == "tariffs" {
			explained = strings.Contains(c.Explain, "kept ahead of the other layers' results")
		}
	}
	if !explained {
		t.Errorf("the tariff's explain does not say why it is first: %+v", r.RetrievedChunks)
	}
	for _, p := range r.Passages[1:] {
		if p.Citation.Layer != "deals" || !p.OutsideRouting {
			t.Errorf("%s (%s): want a deals passage marked outside routing", p.ID, p.Citation.File)
		}
	}
	// The notices do share more of the question's words: over every layer
	// alone, they come before the tariff.
	wide := ask(t, a, Request{Question: question, Layers: []string{"tariffs", "deals"}, TopK: 10})
	if len(wide.Passages) == 0 || wide.Passages[0].Citation.Layer == "tariffs" {
		t.Fatalf("the fixture does not show the fallback's problem: over every layer the tariff comes first (%q)", strings.Join(files(wide), ", "))
	}
}
