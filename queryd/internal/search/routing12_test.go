package search

import (
	"strings"
	"testing"

	"github.com/stratakb/stratakb/jobs"
)

// Fixtures for classes 4 and 8 of issue 12: a regulation and a contract
// that both have an Article 5, and a handbook, each layer with the
// description a user would give it.
var (
	regs = map[string]string{
		"regulation.md": "# Data Protection Regulation\n\n## Article 4 Definitions\n\nPersonal data means any information on an identified person.\n\n" +
			"## Article 5 Principles\n\nPersonal data shall be processed lawfully, fairly and in a transparent manner, collected for " +
			"specified purposes and kept no longer than necessary.\n\n## Article 6 Lawfulness\n\nProcessing is lawful only with consent or another legal basis.\n",
	}
	deals = map[string]string{
		"a-supply.md": "# Supply Agreement between Acme Ltd and Beta GmbH\n\n## Article 4 Delivery\n\nAcme delivers the goods to Beta's warehouse.\n\n" +
			"## Article 5 Payment\n\nBeta pays each invoice within thirty days of delivery; late invoices bear interest.\n\n" +
			"## Article 6 Termination\n\nEither party may end this agreement with ninety days' notice.\n",
	}
	staff = map[string]string{
		"leave.md": "# Leave\n\nEmployees may carry over up to five unused leave days into the next year. Holiday requests go to your manager.\n",
		"pay.md":   "# Payroll\n\nSalaries are paid on the last working day of the month. Unpaid leave lowers the month's salary.\n",
		"rota.md":  "# Rota\n\nThe holiday rota lists who is away on which days of the year, and who covers for whom.\n",
		"travel.md": "# Travel\n\nTravel expenses are reimbursed within thirty days. Book trains before flights; " +
			"a holiday taken during a business trip is not reimbursed.\n",
	}
)

func issue12Fixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "regs", Description: "EU regulation on the protection of personal data",
		RoutingPatterns: []string{"regulation"}}, regs)
	f.ingest(t, jobs.Layer{Name: "deals", Description: "Supply and distribution agreements with our suppliers"}, deals)
	f.ingest(t, jobs.Layer{Name: "staff", Description: "Employee handbook: annual leave, holidays, salaries, travel expenses",
		RoutingPatterns: []string{"go"}}, staff)
	return f
}

// TestIssue12Routing covers class 4 (exact lookup and routing) and class 8
// (routing by descriptions, short patterns, confidence whatever top_k).
func TestIssue12Routing(t *testing.T) {
	t.Parallel()
	f := issue12Fixture(t)
	f.open(t) // the store outlives the subtests

	t.Run("class 4: the document the question points to comes first", func(t *testing.T) {
		// The first question names the regulation by its title ("Data
		// Protection Regulation"), the second the agreement by its parties
		// (Acme and Beta, in its preamble): each one's Article 5 is looked
		// up there only (issue 26).
		for _, c := range []struct {
			q, first string
			want     int
		}{
			{"What does Article 5 of the data protection regulation require for personal data?", "regs/regulation.md", 1},
			{"What does Article 5 of the supply agreement between Acme and Beta say?", "deals/a-supply.md", 1},
		} {
			resp := mustSearch(t, f.searcher(t), Request{Query: c.q, Layers: []string{"deals", "regs"}, TopK: 3})
			var exact []string
			for _, r := range resp.Results {
				if r.Match == "exact" {
					exact = append(exact, r.Layer+"/"+r.File)
				}
			}
			if len(exact) != c.want || exact[0] != c.first {
				t.Errorf("%q: want %d Articles 5, %s first, got %v", c.q, c.want, c.first, exact)
			}
		}
		// With nothing else to go by, file path order stands.
		resp := mustSearch(t, f.searcher(t), Request{Query: "Article 5", Layers: []string{"deals", "regs"}, TopK: 3})
		if fs := files(resp); len(fs) < 2 || fs[0] != "deals/a-supply.md" || fs[1] != "regs/regulation.md" {
			t.Errorf("no other words: by path, got %v", fs)
		}
	})

	t.Run("class 4: an exact section in the routed layers is no low-confidence answer", func(t *testing.T) {
		f.setParams(t, `INSERT INTO strata.model_search_params (model, confidence_high, confidence_medium)
			VALUES ($1, 0.99, 0.98)`, f.emb.Model().Name)
		defer f.setParams(t, `DELETE FROM strata.model_search_params WHERE model = $1`, f.emb.Model().Name)
		resp := mustSearch(t, f.searcher(t), Request{Query: "What does Article 5 of the regulation say?", TopK: 1})
		if resp.RoutingFallback != nil || strings.Join(resp.SearchedLayers, ",") != "regs" {
			t.Fatalf("exact Article 5 found in the routed layer: no fallback, got %+v over %v (%v)",
				resp.RoutingFallback, resp.SearchedLayers, files(resp))
		}
		if len(resp.Results) == 0 || resp.Results[0].Match != "exact" || resp.Results[0].File != "regulation.md" {
			t.Errorf("the regulation's Article 5 comes first, got %v", files(resp))
		}
		// The same marks without an exact section do fall back.
		resp = mustSearch(t, f.searcher(t), Request{Query: "lawful processing under the regulation", TopK: 1})
		if resp.RoutingFallback == nil || resp.RoutingFallback.Reason != "low_confidence" {
			t.Errorf("no exact section, low confidence: want the fallback, got %+v", resp.RoutingFallback)
		}
	})

	t.Run("class 4: a fallback keeps the routed layer's section first", func(t *testing.T) {
		// top_k 10 is more than regs holds: the search falls back to all
		// layers, where the contract has an Article 5 too, first by path.
		// The question routes by "regulation" without saying whose
		// Article 5 it means.
		resp := mustSearch(t, f.searcher(t), Request{Query: "Under the regulation, what does Article 5 say?", TopK: 10})
		if resp.RoutingFallback == nil || resp.RoutingFallback.Reason != "insufficient_results" {
			t.Fatalf("want the insufficient_results fallback, got %+v", resp.RoutingFallback)
		}
		if fs := files(resp); len(fs) < 2 || fs[0] != "regs/regulation.md" || resp.Results[0].Match != "exact" ||
			resp.Results[1].Match != "exact" || !resp.Results[1].OutsideRouting {
			t.Errorf("the regulation's Article 5 first, then the contract's outside routing, got %v", fs)
		}
		// "Article 5 of the regulation" names the document it means (only
		// the regulation holds that word at its start): the contract's
		// Article 5 is no exact match for it.
		resp = mustSearch(t, f.searcher(t), Request{Query: "What does Article 5 of the regulation say?", TopK: 10})
		if len(resp.Results) == 0 || resp.Results[0].File != "regulation.md" || resp.Results[0].Match != "exact" {
			t.Fatalf("the regulation's Article 5 first, got %v", files(resp))
		}
		for _, r := range resp.Results[1:] {
			if r.Match == "exact" {
				t.Errorf("%s's %s is an exact match for the regulation's Article 5", r.File, r.ClausePath)
			}
		}
	})

	t.Run("class 8: descriptions route, and explain says why", func(t *testing.T) {
		for q, want := range map[string]string{
			"How many unused leave days can be carried over?": "staff",
			"Which suppliers have distribution agreements?":   "deals",
		} {
			resp := mustSearch(t, f.searcher(t), Request{Query: q, TopK: 1, Explain: true})
			if strings.Join(resp.SearchedLayers, ",") != want && resp.RoutingFallback == nil {
				t.Errorf("%q: routed to %v, want %s", q, resp.SearchedLayers, want)
			}
			ex := resp.Explain
			if ex == nil || len(ex.Routing) != 1 || ex.Routing[0].Layer != want || ex.Routing[0].By != "description" ||
				len(ex.Routing[0].Words) == 0 {
				t.Errorf("%q: explain should say %s was chosen by its description, got %+v", q, want, ex)
			}
		}
		// "go" is the handbook's pattern, but a short common word: it does
		// not pull a contract question into the handbook.
		resp := mustSearch(t, f.searcher(t), Request{Query: "Can Beta go to court when Acme ends the supply agreement?", TopK: 1, Explain: true})
		if ex := resp.Explain; ex == nil || len(ex.Routing) != 1 || ex.Routing[0].Layer != "deals" {
			t.Errorf("the contract question belongs to deals, got %+v", resp.Explain)
		}
	})

	t.Run("class 8: confidence does not change with top_k", func(t *testing.T) {
		// Find a question whose first result is less similar than a later
		// one: judging the returned results, top_k 1 and top_k 10 would
		// then fall on either side of a mark set between the two.
		var q string
		var first, later float64
		for _, cand := range []string{"holiday days of the year", "travel expenses reimbursed within thirty days",
			"unpaid leave salary", "who covers the holiday rota", "leave days into the next year"} {
			resp := mustSearch(t, f.searcher(t), Request{Query: cand, Layers: []string{"staff"}, TopK: 10})
			if len(resp.Results) < 2 {
				continue
			}
			best := 0.0
			for _, r := range resp.Results[1:] {
				best = max(best, r.Similarity)
			}
			if best > resp.Results[0].Similarity+0.01 {
				q, first, later = cand, resp.Results[0].Similarity, best
				break
			}
		}
		if q == "" {
			t.Fatal("no fixture question has a later result more similar than its first: the test cannot tell")
		}
		f.setParams(t, `INSERT INTO strata.model_search_params (model, confidence_high, confidence_medium)
			VALUES ($1, 0.999, $2)`, f.emb.Model().Name, (first+later)/2)
		defer f.setParams(t, `DELETE FROM strata.model_search_params WHERE model = $1`, f.emb.Model().Name)
		var levels []string
		for _, k := range []int{1, 2, 3, 5, 10} {
			resp := mustSearch(t, f.searcher(t), Request{Query: q, Layers: []string{"staff"}, TopK: k})
			levels = append(levels, resp.Confidence)
		}
		for _, l := range levels[1:] {
			if l != levels[0] {
				t.Fatalf("%q (first %.3f, a later result %.3f): confidence changes with top_k 1, 2, 3, 5, 10: %v",
					q, first, later, levels)
			}
		}
	})
}
