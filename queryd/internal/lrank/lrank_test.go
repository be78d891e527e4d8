package lrank

import (
	"math"
	"testing"
)

func TestFeatures(t *testing.T) {
	t.Parallel()
	cands := []Candidate{
		{Text: "The notice period is ninety days for termination.", LexRank: 1, LexScore: 8, VecRank: 2, Similarity: 0.5, FusedRank: 1, ClausePath: "7 Termination"},
		{Text: "Payment is due within thirty days.", VecRank: 1, Similarity: 0.6, FusedRank: 2},
	}
	f := Features("What notice period for termination?", cands)
	col := func(name string) int {
		for i, n := range FeatureNames {
			if n == name {
				return i
			}
		}
		t.Fatalf("no feature %s", name)
		return -1
	}
	if got := f[0][col("coverage")]; got != 1 {
		t.Errorf("coverage of the passage holding notice, period, termination: %v", got)
	}
	if got := f[1][col("coverage")]; got != 0 {
		t.Errorf("coverage of the unrelated passage: %v", got)
	}
	if f[0][col("bm25_rel")] != 1 || f[1][col("bm25_rel")] != 0 || f[1][col("lex_rr")] != 0 || f[1][col("vec_rr")] != 1 {
		t.Errorf("channel features: %v / %v", f[0], f[1])
	}
	if got := f[0][col("heading_match")]; math.Abs(got-1.0/3) > 1e-9 {
		t.Errorf("heading match (termination of 3 terms): %v", got)
	}
	// "notice period" adjacent, "termination" 3 terms later (stopwords
	// out): 3 terms in a window of 5.
	if got := f[0][col("proximity")]; math.Abs(got-0.6) > 1e-9 {
		t.Errorf("proximity %v, want 0.6", got)
	}
	for _, row := range f {
		if len(row) != len(FeatureNames) {
			t.Fatalf("row of %d features", len(row))
		}
	}
}

func TestFitSeparates(t *testing.T) {
	t.Parallel()
	var ex []Example
	for i := range 200 {
		f := make([]float64, len(FeatureNames))
		rel := i%4 == 0
		f[6] = 0.2
		if rel {
			f[6] = 0.9
		}
		f[3] = float64(i%7) / 10 // noise
		ex = append(ex, Example{F: f, Rel: rel, Group: i})
	}
	m := Fit(ex, 0.01, "test")
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	hi := make([]float64, len(FeatureNames))
	lo := make([]float64, len(FeatureNames))
	hi[6], lo[6] = 0.9, 0.2
	if m.Prob(hi) < 0.8 || m.Prob(lo) > 0.2 {
		t.Errorf("p(relevant)=%.3f p(not)=%.3f", m.Prob(hi), m.Prob(lo))
	}
}

func TestGroupsAndFolds(t *testing.T) {
	t.Parallel()
	g := Groups(map[string][]string{"q1": {"d1"}, "q2": {"d2"}, "q3": {"d1", "d3"}, "q4": {"d3"}, "q5": {"d9"}})
	if g["q1"] != g["q3"] || g["q3"] != g["q4"] || g["q1"] == g["q2"] || g["q5"] == g["q1"] {
		t.Errorf("groups %v", g)
	}
	var ex []Example
	for q, id := range g {
		ex = append(ex, Example{Query: q, Group: id}, Example{Query: q, Group: id})
	}
	folds := Folds(ex, 2)
	where := map[int]int{}
	for k, idx := range folds {
		for _, i := range idx {
			if f, ok := where[ex[i].Group]; ok && f != k {
				t.Errorf("group %d split across folds", ex[i].Group)
			}
			where[ex[i].Group] = k
		}
	}
}

// TestDefaultModel: the shipped model matches the features, and ranks a
// passage that holds the question's terms, found by both channels, above
// one that holds none of them.
func TestDefaultModel(t *testing.T) {
	t.Parallel()
	if err := Default.Check(); err != nil {
		t.Fatal(err)
	}
	cands := []Candidate{
		{Text: "Vitamin D deficiency raises the risk of fractures in older adults.", LexRank: 1, LexScore: 12, VecRank: 1, Similarity: 0.7, FusedRank: 1},
		{Text: "The weather was mild in the spring of that year.", LexRank: 0, VecRank: 9, Similarity: 0.2, FusedRank: 2},
	}
	p := Default.Score("Does vitamin D deficiency raise fracture risk?", cands)
	if p[0] <= p[1] || p[0] < 0.5 || p[1] > 0.3 {
		t.Errorf("probabilities %v", p)
	}
}
