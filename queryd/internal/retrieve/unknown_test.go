package retrieve

import (
	"context"
	"slices"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestUnknownWords: a query word that no layer of the knowledge base holds
// is unknown, and every candidate carries the share of such words; a word
// only another layer holds is not unknown, nor is a compound whose parts
// are known. A contracts-preset layer's candidates carry the clause words
// of the clause type the query asks about; other layers' do not.
func TestUnknownWords(t *testing.T) {
	t.Parallel()
	st, layers, contracts := ingestTwoLayers(t, map[string]map[string]string{
		"contracts": {"a.txt": "The Supplier shall deliver the goods within thirty days. This Agreement shall be governed by the laws of the State of Oregon.\n"},
		"handbook":  {"b.txt": "Our support team answers tickets about invoices and the carbon footprint of shipping.\n"},
	}, 0)
	ctx := context.Background()
	eng := New(st, Options{Embedder: bow{}})
	snap, err := eng.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		q       string
		unknown []string
	}{
		// "cryptocurrency" is in no layer; "carbon" and "shipping" only in
		// the handbook, which was not searched; "carbon-neutral" is a
		// compound of known and unknown parts, so only "neutral" counts.
		{"Which law governs the supplier agreement?", nil},
		{"Shall the supplier deliver the goods for cryptocurrency?", []string{"cryptocurr"}},
		{"Shall the supplier deliver the goods with carbon-neutral shipping?", []string{"neutral"}},
	}
	for _, c := range cases {
		o, err := snap.Query(Query{Text: c.q, TopK: 5}).Search(ctx, []store.Layer{contracts})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(o.Unknown, c.unknown) {
			t.Errorf("%q: unknown words %v, want %v (words %v)", c.q, o.Unknown, c.unknown, o.Words)
		}
		if len(o.Candidates) == 0 {
			t.Fatalf("%q: no candidates", c.q)
		}
		want := float64(len(c.unknown)) / float64(len(o.Words))
		for _, cand := range o.Candidates {
			if cand.Unknown != want {
				t.Errorf("%q: candidate unknown share %v, want %v", c.q, cand.Unknown, want)
			}
		}
	}
	o, err := snap.Query(Query{Text: "Which law governs the agreement?", TopK: 5}).Search(ctx, layers)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range o.Candidates {
		if got := c.ClauseWords != ""; got != (c.Layer == "contracts") {
			t.Errorf("%s candidate: clause words %q", c.Layer, c.ClauseWords)
		}
	}
}

// ingestTwoLayers ingests a "contracts" layer of the contracts preset and a
// "handbook" layer from the files given (chunkSize 0: the default) into a
// database of their own, and returns the corpus, both layers and the
// contracts layer.
func ingestTwoLayers(t *testing.T, files map[string]map[string]string, chunkSize int) (*store.Corpus, []store.Layer, store.Layer) {
	t.Helper()
	st, layers := ingestLayers(t, map[string]map[string]string{"contracts": files["contracts"], "handbook": files["handbook"]}, chunkSize)
	for _, l := range layers {
		if l.Name == "contracts" {
			return st, layers, l
		}
	}
	t.Fatal("no contracts layer")
	return nil, nil, store.Layer{}
}
