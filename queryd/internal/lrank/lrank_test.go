package lrank

import (
	"math"
	"os"
	"strconv"
	"testing"
)

func TestFeatures(t *testing.T) {
	t.Parallel()
	cands := []Candidate{
		{Text: "The notice period is ninety days for termination.", LexRank: 1, LexScore: 8, VecRank: 2, Similarity: 0.5, FusedRank: 1, ClausePath: "7 Termination"},
		{Text: "Payment is due within thirty days.", VecRank: 1, Similarity: 0.6, FusedRank: 2},
	}
	f := Features("What notice period for termination?", cands)
	col := func(name string) int { return col(t, name) }
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
	if got := f[1][col("cosine_gap")]; got != 0 {
		t.Errorf("cosine gap of the most similar passage: %v", got)
	}
	if got := f[0][col("cosine_gap")]; math.Abs(got+0.1) > 1e-9 {
		t.Errorf("cosine gap 0.5 under 0.6: %v", got)
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
		f[col(t, "coverage")] = 0.2
		if rel {
			f[col(t, "coverage")] = 0.9
		}
		f[col(t, "cosine")] = float64(i%7) / 10 // noise
		ex = append(ex, Example{F: f, Rel: rel, Group: i})
	}
	m := Fit(ex, 0.01, "test")
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	hi := make([]float64, len(FeatureNames))
	lo := make([]float64, len(FeatureNames))
	hi[col(t, "coverage")], lo[col(t, "coverage")] = 0.9, 0.2
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

func col(t *testing.T, name string) int {
	t.Helper()
	for i, n := range FeatureNames {
		if n == name {
			return i
		}
	}
	t.Fatalf("no feature %s", name)
	return -1
}

// TestDocumentFeatures: a file name that runs the question's names
// together counts them (the heading match and the document coverage), and
// the share of the list from one document.
func TestDocumentFeatures(t *testing.T) {
	t.Parallel()
	cands := []Candidate{
		{DocumentID: 7, File: "MERCATAINC_03_09_2000-EX-10.21-SPONSORSHIP AGREEMENT.txt",
			Text: "This Agreement shall be governed by the laws of the State of Washington."},
		{DocumentID: 7, File: "MERCATAINC_03_09_2000-EX-10.21-SPONSORSHIP AGREEMENT.txt",
			Text: "Mercata shall pay the sponsorship fee each quarter."},
		{DocumentID: 9, File: "other.txt", Text: "The weather in Washington."},
	}
	f := Features("Which law governs the Mercata sponsorship agreement?", cands)
	// Content terms: law, govern, mercata, sponsorship, agreement.
	if got := f[0][col(t, "heading_match")]; math.Abs(got-3.0/5) > 1e-9 {
		t.Errorf("heading match of mercata, sponsorship, agreement in the file name: %v", got)
	}
	if got := f[0][col(t, "coverage")]; math.Abs(got-3.0/5) > 1e-9 {
		t.Errorf("text coverage (law, govern, agreement): %v", got)
	}
	if got := f[0][col(t, "doc_coverage")]; math.Abs(got-1) > 1e-9 {
		t.Errorf("text or file coverage: %v", got)
	}
	if got := f[2][col(t, "doc_coverage")]; got != 0 {
		t.Errorf("doc coverage of the unrelated passage: %v", got)
	}
	if got, want := f[1][col(t, "doc_share")], 2.0/3; math.Abs(got-want) > 1e-9 {
		t.Errorf("doc share %v, want %v", got, want)
	}
	if got, want := f[2][col(t, "doc_share")], 1.0/3; math.Abs(got-want) > 1e-9 {
		t.Errorf("doc share %v, want %v", got, want)
	}
	// A short term must be a whole term of the file name.
	if h := headingTerms([]string{"ex", "agreement"}, "", "MERCATAINC-EXHIBIT.txt"); h["ex"] || h["agreement"] {
		t.Errorf("heading terms %v", h)
	}
}

// TestFitWeights: a weight counts as that many copies of an example, and
// the fit is deterministic.
func TestFitWeights(t *testing.T) {
	t.Parallel()
	c := col(t, "coverage")
	row := func(x float64) []float64 {
		f := make([]float64, len(FeatureNames))
		f[c] = x
		return f
	}
	var weighted, copied []Example
	for i := range 40 {
		x := float64(i%10) / 10
		rel := i%3 == 0 && x > 0.3
		w := float64(1 + i%3)
		weighted = append(weighted, Example{F: row(x), Rel: rel, W: w})
		for range int(w) {
			copied = append(copied, Example{F: row(x), Rel: rel})
		}
	}
	a, b := Fit(weighted, 0.01, "w"), Fit(copied, 0.01, "c")
	for _, x := range []float64{0, 0.5, 0.9} {
		if pa, pb := a.Prob(row(x)), b.Prob(row(x)); math.Abs(pa-pb) > 1e-6 {
			t.Errorf("at %v: weighted %v, copied %v", x, pa, pb)
		}
	}
	if again := Fit(weighted, 0.01, "w"); again.Bias != a.Bias || again.Weights[c] != a.Weights[c] {
		t.Errorf("two fits differ: %v / %v", a, again)
	}
}

// TestEvaluate: nDCG counts a document once, at its best candidate, and
// the answer set's gold-first share and separation.
func TestEvaluate(t *testing.T) {
	t.Parallel()
	js := []Judged{
		{Set: SetSciFact, Cands: make([]Candidate, 3), Docs: []string{"a", "a", "b"}, Rel: []bool{false, false, true}, Relevant: []string{"b"}},
		{Set: SetAnswers, Kind: "code", Cands: make([]Candidate, 2), Docs: []string{"x", "y"}, Rel: []bool{false, true}, Relevant: []string{"y"}},
		{Set: SetAnswers, Kind: "unanswerable", Cands: make([]Candidate, 2), Docs: []string{"x", "y"}, Rel: []bool{false, false}},
	}
	e := Evaluate(js, [][]float64{{0.9, 0.8, 0.1}, {0.2, 0.7}, {0.3, 0.1}})
	// b is the second document: 1/log2(3).
	if want := 1 / math.Log2(3); math.Abs(e.NDCG-want) > 1e-9 || math.Abs(e.NDCGFusion-want) > 1e-9 {
		t.Errorf("nDCG %v (fusion %v), want %v", e.NDCG, e.NDCGFusion, want)
	}
	if e.GoldFirst != 1 || e.GoldFirstFusion != 0 || e.AUC != 1 {
		t.Errorf("answer set: %+v", e)
	}
}

// TestTrainJudged (STRATA_RERANK_JUDGED=PATH, written by `make
// train-reranker`) repeats the fit and report on kept judged lists,
// without the databases.
func TestTrainJudged(t *testing.T) {
	path := os.Getenv("STRATA_RERANK_JUDGED")
	if path == "" {
		t.Skip("set STRATA_RERANK_JUDGED to the judged lists make train-reranker keeps")
	}
	js, err := ReadJudged(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := Train(js, TrainConfig{L2s: []float64{0.001, 0.003, 0.01, 0.03, 0.1}, Folds: 5, AnswersShare: share(), Version: "judged-%g", Pair: pair()})
	t.Log("\n" + tr.Report)
}

func pair() float64 {
	if s, err := strconv.ParseFloat(os.Getenv("STRATA_RERANK_PAIR"), 64); err == nil {
		return s
	}
	return 0
}

func share() float64 {
	if s, err := strconv.ParseFloat(os.Getenv("STRATA_RERANK_SHARE"), 64); err == nil {
		return s
	}
	return 0.5
}

// BenchmarkScore: the offline reranker's cost for one question and ten
// candidates of about 1,500 characters (strata_ask's rerank stage without
// the channels).
func BenchmarkScore(b *testing.B) {
	para := "The Supplier shall indemnify the Customer against all losses arising from any breach of clause 7.2, " +
		"and this Agreement shall be governed by the laws of the State of New York without regard to its conflict of laws rules. "
	cands := make([]Candidate, 10)
	for i := range cands {
		text := ""
		for len(text) < 1500 {
			text += para
		}
		cands[i] = Candidate{Text: text, File: "ACME_2020-EX-10.1-SUPPLY AGREEMENT.txt", ClausePath: "7 Liability > 7.2",
			DocumentID: int64(1 + i%3), LexRank: i + 1, LexScore: 20 - float64(i), VecRank: 10 - i, Similarity: 0.4 + float64(i)/50, FusedRank: i + 1}
	}
	q := "Which law governs the ACME supply agreement, and is there a cap on liability?"
	b.ResetTimer()
	for range b.N {
		Default.Score(q, cands)
	}
}

// TestQuestionKnowledgeFeatures: the unknown words share the retrieval
// computed reaches every candidate alike; the clause words count the
// drafting words a passage holds, and nothing without them.
func TestQuestionKnowledgeFeatures(t *testing.T) {
	t.Parallel()
	words := "governed construed accordance laws state"
	cands := []Candidate{
		{Text: "This Agreement shall be governed by and construed in accordance with the laws of the State of Oregon.", Unknown: 0.25, ClauseWords: words},
		{Text: "The Supplier shall deliver the goods within thirty days.", Unknown: 0.25, ClauseWords: words},
		{Text: "This Agreement shall be governed by the laws of Oregon.", Unknown: 0.25},
	}
	f := Features("May the supplier be paid in cryptocurrency?", cands)
	for i := range f {
		if f[i][col(t, "unknown_any")] != 1 || f[i][col(t, "unknown_share")] != 0.25 {
			t.Errorf("candidate %d: unknown %v / %v", i, f[i][col(t, "unknown_any")], f[i][col(t, "unknown_share")])
		}
	}
	if got := f[0][col(t, "clause_words")]; got != 1 {
		t.Errorf("the governing-law clause holds every drafting word: %v", got)
	}
	if got := f[1][col(t, "clause_words")]; got != 0 {
		t.Errorf("the delivery clause holds none: %v", got)
	}
	if got := f[2][col(t, "clause_words")]; got != 0 {
		t.Errorf("a candidate without clause words: %v", got)
	}
	known := Features("May the supplier be paid?", []Candidate{{Text: "The Supplier is paid monthly."}})
	if known[0][col(t, "unknown_any")] != 0 || known[0][col(t, "unknown_share")] != 0 {
		t.Errorf("no unknown words: %v", known[0])
	}
}

// TestSentenceCover: the question's terms in one sentence score more than
// the same terms spread over several.
func TestSentenceCover(t *testing.T) {
	t.Parallel()
	f := Features("Does vitamin D lower fracture risk?", []Candidate{
		{Text: "We studied older adults. Vitamin D lowered the fracture risk by a third."},
		{Text: "Vitamin D was measured. Risk factors were noted. A fracture was rare."},
	})
	c := col(t, "sentence_cover")
	if f[0][c] != 1 {
		t.Errorf("all terms in one sentence: %v", f[0][c])
	}
	if f[1][c] >= f[0][c] || f[1][c] <= 0 {
		t.Errorf("terms spread over three sentences: %v (one sentence: %v)", f[1][c], f[0][c])
	}
}
