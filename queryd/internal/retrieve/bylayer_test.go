package retrieve

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestLexicalByLayer (issue 12, class 4 and 8): a search over several
// layers ranks one layer's chunks among themselves as a search of that
// layer alone does, so a routing fallback over every layer keeps the order
// of the contract the question names. The other layer here is a handbook
// that uses the contract's clause words ("governed", "laws", "notice")
// often, which changes their rarity across both layers; scored as one
// collection (LexicalByLayer off) the contract's chunks come back in
// another order, so the fixture shows the issue.
func TestLexicalByLayer(t *testing.T) {
	t.Parallel()
	contracts := map[string]string{
		"halvorsen-lakeside.txt": fixtureContract("Sponsorship", "Halvorsen", "Lakeside", "Sponsor", "Club", "Oregon", "Portland"),
		"quillon-marrowby.txt":   fixtureContract("Distribution", "Quillon", "Marrowby", "Supplier", "Distributor", "Texas", "Austin"),
		"ostrava-pellam.txt":     fixtureContract("Promotion", "Ostrava", "Pellam", "Company", "Agency", "Ohio", "Columbus"),
	}
	var hb strings.Builder
	for i := 0; i < 30; i++ {
		hb.WriteString("Our travel policy is governed by the laws of each country we visit; give notice of a trip in writing, and the state of your booking is shown in the portal. Fees for the portal are invoiced each month and paid within thirty days.\n\n")
	}
	handbook := map[string]string{"policy.txt": hb.String()}
	st, layers, contractLayer := ingestTwoLayers(t, map[string]map[string]string{"contracts": contracts, "handbook": handbook}, 400)
	ctx := context.Background()
	eng := New(st, Options{Embedder: bow{}})
	inContracts := func(c Candidate) bool { return c.Layer == "contracts" }
	order := func(q string, ls []store.Layer, byLayer bool) ([]int64, map[int64]float64) {
		p := DefaultParams()
		p.LexicalByLayer = byLayer
		p.NoVector = true // the lexical channel alone, so the order is its own
		o, err := eng.Query(Query{Text: q, TopK: 8, Params: &p}).Search(ctx, ls)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		score := map[int64]float64{}
		for _, c := range o.Candidates {
			if inContracts(c) {
				ids = append(ids, c.ChunkID)
				score[c.ChunkID] = c.Lexical.Score
			}
		}
		return ids, score
	}
	// Chunks of the contracts that score the same alone (the same clause
	// in two contracts) may come in either order: their sums differ only
	// by rounding, which the order of the terms' addition decides. Such
	// runs are put in chunk order.
	ties := func(ids []int64, score map[int64]float64) []int64 {
		out := slices.Clone(ids)
		for a := 0; a < len(out); {
			b := a + 1
			for b < len(out) && math.Abs(score[out[b]]-score[out[a]]) <= 1e-9 {
				b++
			}
			slices.Sort(out[a:b])
			a = b
		}
		return out
	}
	differs := false
	for _, q := range []string{
		"Which law governs the sponsorship agreement between Halvorsen and Lakeside?",
		"How much notice must Quillon give Marrowby, and what are the fees?",
		"Under the Ostrava and Pellam promotion agreement, which state's laws apply?",
	} {
		alone, score := order(q, []store.Layer{contractLayer}, true)
		both, _ := order(q, layers, true)
		// A chunk found over both layers and not alone (past the top_k)
		// scores nothing here, which no tie of the chunks alone matches.
		if len(both) == 0 || !slices.Equal(ties(both, score), ties(alone, score)[:min(len(alone), len(both))]) {
			t.Errorf("%q: contract chunks over both layers %v, alone %v", q, both, alone)
		}
		one, _ := order(q, layers, false)
		if !slices.Equal(ties(one, score), ties(alone, score)[:min(len(alone), len(one))]) {
			differs = true
		}
	}
	if !differs {
		t.Errorf("scored as one collection the contract chunks kept their order in every question: the fixture does not show the issue")
	}
}
