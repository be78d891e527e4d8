package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/jobs"
)

// TestRoutingByLayerWords: a question routing neither patterns nor
// descriptions can place goes to the layer whose own chunks hold its words
// (route.DecideWith), and when that small layer has fewer passages than
// top_k, the fallback over every layer keeps its passages first. Over all
// layers at once the long layer's chunks, which share "fee", "delivery"
// and "city" with the question, take every place.
func TestRoutingByLayerWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A long layer: 240 agreements' clauses that use the question's words
	// here and there among others.
	long := map[string]string{}
	topics := []string{"delivery", "payment", "notice", "warranty", "fee", "city", "renewal", "audit"}
	for i := range 240 {
		a, b := topics[i%len(topics)], topics[(i/len(topics))%len(topics)]
		long[fmt.Sprintf("clause-%03d.md", i)] = fmt.Sprintf("# Clause %d\n\nThe %s terms and the %s terms of agreement %d apply "+
			"to the supplier's delivery of goods to the buyer's city depot, and each fee is invoiced monthly.\n", i, a, b, i)
	}
	f.ingest(t, jobs.Layer{Name: "agreements", Description: "Supplier agreements"}, long)
	f.ingest(t, jobs.Layer{Name: "tariffs", Description: "Price lists"}, map[string]string{
		"zones.csv": "zone,region,base_fee_eur\nZ1,Same city,4.20\nZ2,Same country,5.90\nZ3,Neighbouring countries,9.80\n",
	})
	q := "What is the base fee for a delivery within the same city?"

	resp := mustSearch(t, f.searcher(t), Request{Query: q, TopK: 5, Explain: true})
	ex := resp.Explain
	if ex == nil || len(ex.Routing) != 1 || ex.Routing[0].Layer != "tariffs" || ex.Routing[0].By != "content" {
		t.Fatalf("want the question routed to tariffs by its words, got %+v", ex)
	}
	if resp.RoutingFallback == nil || resp.RoutingFallback.Reason != "insufficient_results" {
		t.Fatalf("the tariff list has fewer passages than top_k: want the insufficient_results fallback, got %+v", resp.RoutingFallback)
	}
	if len(resp.Results) < 2 || resp.Results[0].Layer != "tariffs" || !strings.Contains(resp.Results[0].Text, "Same city") {
		t.Fatalf("the routed layer's row comes first, got %v", files(resp))
	}
	for i, r := range resp.Results {
		if r.Layer == "tariffs" && r.OutsideRouting || r.Layer != "tariffs" && !r.OutsideRouting {
			t.Errorf("result %d (%s) outside_routing %v", i, r.Layer, r.OutsideRouting)
		}
		if i > 0 && r.Score > resp.Results[i-1].Score {
			t.Errorf("scores must fall down the list: %d has %v after %v", i, r.Score, resp.Results[i-1].Score)
		}
	}
	if n := len(resp.Results); n > 5 {
		t.Errorf("top_k 5: got %d results", n)
	}

	// Named layers are never broadened, and over both layers named the
	// long layer keeps the places it wins.
	both := mustSearch(t, f.searcher(t), Request{Query: q, TopK: 5, Layers: []string{"agreements", "tariffs"}})
	if both.RoutingFallback != nil || len(both.Results) == 0 || both.Results[0].Layer != "agreements" {
		t.Errorf("both layers named: want the joint order, agreements first, got %v (fallback %+v)", files(both), both.RoutingFallback)
	}
}
