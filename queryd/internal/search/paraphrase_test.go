package search

import (
	"path/filepath"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
)

// paraphraseHandbook holds, for each paraphrase question below, one passage
// that answers it in other words, and beside it passages that share the
// question's words but do not answer it.
var paraphraseHandbook = map[string]string{
	"allowances.md": "# Allowances\n\nEmployees who work from home receive a monthly allowance for internet and electricity costs.\n",
	"animals.md":    "# Animals\n\nPets are welcome at the workplace on Fridays if they are house-trained.\n",
	"expenses.md":   "# Expenses\n\nCab fares are paid back when you submit the receipt through the expenses portal.\n",
	"office.md":     "# Opening hours\n\nThe office opens at eight and the front door is locked at seven in the evening. Bring your badge to the office.\n",
	"staff.md":      "# Rota\n\nThe rota lists which staff cover the reception desk, and remote cover is arranged by the team lead.\n",
	"ride.md":       "# Parking\n\nA ride to the car park shuttle leaves every ten minutes; bikes go in the covered racks.\n",
	"bill.md":       "# Invoices\n\nA supplier's bill is approved by the budget holder before finance pays it.\n",
}

// TestParaphraseReachesResultsUSELite is issue 12's class 2 on fixtures of
// our own: a question that shares no word with the passage answering it
// gets that passage among the first five results through the vector
// channel alone, with the local model and its measured search parameters
// (similarity floor 0.45, vector weight 0.15), while passages sharing the
// question's words hold the lexical channel. It fails if the floor, the
// weight or the fusion keeps vector-only passages out of the results.
func TestParaphraseReachesResultsUSELite(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "handbook")
	testenv.WriteFiles(t, root, paraphraseHandbook)
	s := useliteSearcher(t, "handbook", root, len(paraphraseHandbook))
	for _, tc := range []struct{ question, file string }{
		{"Do remote staff get money toward their broadband bill?", "allowances.md"},
		{"Can I bring my dog to the office?", "animals.md"},
		{"How do I get reimbursed for a taxi ride?", "expenses.md"},
	} {
		resp := mustSearch(t, s, Request{Query: tc.question, Layers: []string{"handbook"}, TopK: 5, Explain: true})
		var got *Result
		lexical := 0
		for i := range resp.Results {
			r := &resp.Results[i]
			if r.File == tc.file {
				got = r
			}
			if r.Explain != nil && r.Explain.Lexical != nil {
				lexical++
			}
		}
		if lexical == 0 {
			t.Errorf("%q: no result came through the lexical channel; the fixture must give it passages sharing the question's words", tc.question)
		}
		if got == nil {
			var files []string
			for _, r := range resp.Results {
				files = append(files, r.File)
			}
			t.Errorf("%q: %s is not among the first five results %v", tc.question, tc.file, files)
			continue
		}
		if got.Explain == nil || got.Explain.Vector == nil {
			t.Errorf("%q: %s came back without a vector rank: %+v", tc.question, tc.file, got.Explain)
		} else if got.Explain.Lexical != nil {
			t.Errorf("%q: %s shares a word with the question (lexical rank %d); the fixture is no paraphrase", tc.question, tc.file, got.Explain.Lexical.Rank)
		}
	}
}
