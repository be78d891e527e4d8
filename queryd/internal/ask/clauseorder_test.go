package ask

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// twoAgreements both have a clause 7.2 and a clause 9.1; the supply
// agreement is the one the words of the question below point to.
var twoAgreements = map[string]string{
	"alpha-lease.md": "# Alpha lease\n\n## 7 Term\n\n### 7.2 Renewal\n\nThe lease renews each year unless ended.\n\n" +
		"## 9 Rent\n\n### 9.1 Rent due\n\nRent is paid on the first day of each month.\n",
	"beta-supply.md": "# Beta supply agreement\n\n## 7 Delivery\n\n### 7.2 Supplier notice\n\nThe supplier gives notice of a late delivery at once.\n\n" +
		"## 9 Ending\n\n### 9.1 Notice period\n\nThe supplier may end the supply agreement with ninety days' notice.\n",
}

// clauseNumber is the number of the twoAgreements clause text holds.
func clauseNumber(text string) string {
	for _, c := range []struct{ n, words string }{
		{"7.2", "renews"}, {"7.2", "late delivery"}, {"9.1", "Rent is paid"}, {"9.1", "ninety days"},
	} {
		if strings.Contains(text, c.words) {
			return c.n
		}
	}
	return "?"
}

// TestAskClausesInReferenceOrder: the named clauses are read in the order
// of the references and then by file path (the document the rest of the
// question points to first), never grouped by document, so under any
// budget a later reference's clause is kept only when every clause of the
// earlier references is (issue 27, item 3).
func TestAskClausesInReferenceOrder(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	root := writeFolder(t, "agreements", twoAgreements)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "agreements", Root: root, ChunkSize: 400},
		ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	st, err := store.OpenCorpus(context.Background(), dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	eng := retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1})
	const question = "What do clause 9.1 and clause 7.2 say about the supplier's notice in the supply agreement?"
	req := Request{Question: question, Layers: []string{"agreements"}}

	exact := func(r *Response) (nums, paths []string) {
		for _, p := range r.Passages {
			if p.Match == "exact" {
				nums = append(nums, clauseNumber(p.Text))
				paths = append(paths, p.Citation.File)
			}
		}
		return nums, paths
	}
	full := ask(t, New(Options{Engine: eng, Docs: st, Reranker: Texts{overlap{}}}), req)
	nums, fs := exact(full)
	if want := []string{"9.1", "9.1", "7.2", "7.2"}; !slices.Equal(nums, want) {
		t.Fatalf("named clauses %v of %v, want %v", nums, fs, want)
	}
	if fs[0] != "beta-supply.md" || fs[2] != "beta-supply.md" {
		t.Errorf("within a reference, the document the question points to comes first: %v", fs)
	}

	leftOut := false
	for budget := 20; budget <= 200; budget += 5 {
		r := ask(t, New(Options{Engine: eng, Docs: st, Reranker: Texts{overlap{}}, Budget: budget}), req)
		got, gotFiles := exact(r)
		if !slices.Equal(got, nums[:len(got)]) || !slices.Equal(gotFiles, fs[:len(got)]) {
			t.Errorf("budget %d: kept %v of %v, want the first %d of %v of %v", budget, got, gotFiles, len(got), nums, fs)
		}
		if len(got) > 0 && len(got) < len(nums) {
			leftOut = true
		}
	}
	if !leftOut {
		t.Error("no budget left a clause out: the test does not test the budget")
	}
}
