package ask

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// OfflineSentences scores sentences for the offline reranker, which reads
// channel features a sentence does not have. The offline model scores the
// passages (also with reranking off); a sentence's score is its passage's
// calibrated probability times the sentence's odds of holding the answer
// relative to the best sentence of the same passage, by the sentence model
// (SentenceModel: a logistic regression over the sentence's words and
// meaning against the question and, for a contract question, the drafting
// words of the clause it asks about, fitted on SciFact's evidence sentences
// and the answer set's train split by `make train-sentences`). So the best
// sentence of each passage keeps its passage's probability, and the status
// marks are the reranker's.
type OfflineSentences struct {
	Model lrank.Model
	// Embedder gives the cosine; nil (or failing) uses the sentence model
	// fitted without it.
	Embedder embed.Embedder
	// MinPassage skips the cosine for the sentences of passages the offline
	// model scores under it: a sentence never scores above its passage, so
	// under the medium mark none of them can be chosen, and embedding them
	// would cost most of an extractive answer's time. They are scored by
	// the sentence model without the cosine. 0 embeds every sentence; an
	// Asker sets its medium mark when it is 0.
	MinPassage float64
	// PassageScores, when it has one score per candidate, are the
	// passages' probabilities as the same model reranked them (the Asker
	// sets them): the best over the question's variants, each candidate
	// scored within the search it came from. Without them the candidates
	// are scored here, against the question as written, as one list.
	PassageScores []float64
	Logger        *slog.Logger
}

// Name is the model's version with the sentence model's.
func (o OfflineSentences) Name() string { return o.Model.Version + "+" + DefaultSentenceModel.Version }

// ScoreSentences scores the sentences.
func (o OfflineSentences) ScoreSentences(ctx context.Context, q string, sents []SentenceInput, cands []retrieve.Candidate) ([]float64, error) {
	pp := o.PassageProbs(q, cands)
	rows, withCos := o.Rows(ctx, q, sents, cands, pp)
	return CombineSentences(sents, pp, SentenceProbs(rows, withCos)), nil
}

// SentenceProbs are the sentence model's probabilities: the model with the
// cosine for the rows that have it, the lexical one for the others.
func SentenceProbs(rows [][]float64, withCos []bool) []float64 {
	out := make([]float64, len(rows))
	for i, f := range rows {
		m := DefaultSentenceModel.Lexical
		if withCos[i] {
			m = DefaultSentenceModel.WithCosine
		}
		out[i] = m.Prob(f)
	}
	return out
}

// PassageProbs are the offline model's probabilities of the candidates.
func (o OfflineSentences) PassageProbs(q string, cands []retrieve.Candidate) []float64 {
	if len(o.PassageScores) == len(cands) && len(cands) > 0 {
		return o.PassageScores
	}
	lc := make([]lrank.Candidate, len(cands))
	for i, c := range cands {
		lc[i] = lrank.FromRetrieve(c)
	}
	return o.Model.Score(q, lc)
}

// Rows are the sentences' features against the question
// (SentenceFeatures), with each passage's clause words (cands, by the
// sentence's Passage) and the local model's cosine for the sentences of
// the passages pp scores at MinPassage or more when it gives vectors
// (withCos says which).
func (o OfflineSentences) Rows(ctx context.Context, q string, sents []SentenceInput, cands []retrieve.Candidate, pp []float64) (rows [][]float64, withCos []bool) {
	texts := make([]string, len(sents))
	group := make([]int, len(sents))
	clause := make([]string, len(sents))
	withCos = make([]bool, len(sents))
	var embedIdx []int
	for i, s := range sents {
		texts[i] = s.Text
		group[i] = s.Passage
		if s.Passage >= 0 && s.Passage < len(cands) {
			clause[i] = cands[s.Passage].ClauseWords
		}
		p := 0.0
		if s.Passage >= 0 && s.Passage < len(pp) {
			p = pp[s.Passage]
		}
		if o.Embedder != nil && p >= o.MinPassage {
			embedIdx = append(embedIdx, i)
		}
	}
	var cos []float64
	if len(embedIdx) > 0 {
		in := make([]string, 0, len(embedIdx))
		for _, i := range embedIdx {
			in = append(in, texts[i])
		}
		vs, err := embedQueryAndPassages(ctx, o.Embedder, q, in)
		if err != nil || len(vs) != len(in)+1 {
			if o.Logger != nil {
				o.Logger.Warn("sentence_cosine_skipped", "err", errString(err))
			}
		} else {
			cos = make([]float64, len(texts))
			for i := range cos {
				cos[i] = math.NaN()
			}
			for k, i := range embedIdx {
				cos[i] = cosine(vs[0], vs[k+1])
				withCos[i] = true
			}
		}
	}
	return SentenceFeatures(q, texts, group, clause, cos), withCos
}

// CombineSentences gives each sentence its passage's probability (pp, by
// the sentence's Passage) times its sentence probability over the best of
// the same passage's, so the best sentence of each passage keeps its
// passage's probability.
func CombineSentences(sents []SentenceInput, pp, probs []float64) []float64 {
	bestIn := map[int]float64{}
	for i, s := range sents {
		bestIn[s.Passage] = math.Max(bestIn[s.Passage], probs[i])
	}
	out := make([]float64, len(sents))
	for i, s := range sents {
		p := 0.0
		if s.Passage >= 0 && s.Passage < len(pp) {
			p = pp[s.Passage]
		}
		if b := bestIn[s.Passage]; b > 0 {
			out[i] = p * probs[i] / b
		}
	}
	return out
}

// SentenceFeatureNames name the sentence model's features, in order:
// the sentence's BM25 against the question with the idf counted over the
// candidate sentences (relative to the best of its passage, and as a
// logarithm), the share of the question's content terms it holds weighted
// by their idf, the local model's cosine to the question (relative to the
// best of its passage, and as is), its length (the logarithm of its
// content terms), and its place among the sentences of its passage (first,
// and from 0 at the start to 1 at the end), and the share of its passage's
// clause words it holds (retrieve.Candidate.ClauseWords: how agreements
// word the clause type a contract question asks about, which the
// question's own words rarely share).
var SentenceFeatureNames = []string{"bm25_rel", "bm25_log", "coverage", "cos_rel", "cos", "len_log", "first", "position", "clause_words"}

// SentenceFeatures computes each sentence's features against the question.
// group gives each sentence's passage (the sentences of one passage in
// document order); clause each sentence's passage's clause words (nil or
// "" for none: the feature is then 0); cos is each sentence's cosine to
// the question, nil when there is no vector and NaN for a sentence without
// one (its cosine features are then 0).
func SentenceFeatures(q string, sents []string, group []int, clause []string, cos []float64) [][]float64 {
	bm := SentenceBM25(q, sents)
	hasCos := func(i int) bool { return cos != nil && !math.IsNaN(cos[i]) }
	bestBM, bestCos := map[int]float64{}, map[int]float64{}
	count := map[int]int{}
	for i, g := range group {
		count[g]++
		bestBM[g] = math.Max(bestBM[g], bm[i])
		if hasCos(i) {
			bestCos[g] = math.Max(bestCos[g], cos[i])
		}
	}
	at := map[int]int{}
	wanted := map[string]map[string]bool{} // each clause words' terms
	out := make([][]float64, len(sents))
	for i, s := range sents {
		f := make([]float64, len(SentenceFeatureNames))
		g := group[i]
		if b := bestBM[g]; b > 0 {
			f[0] = bm[i] / b
		}
		f[1] = math.Log1p(bm[i])
		if hasCos(i) {
			if b := bestCos[g]; b > 0 {
				f[3] = math.Max(0, cos[i]) / b
			}
			f[4] = cos[i]
		}
		f[5] = math.Log1p(float64(len(sentenceTerms(s))))
		if at[g] == 0 {
			f[6] = 1
		}
		if n := count[g]; n > 1 {
			f[7] = float64(at[g]) / float64(n-1)
		}
		if clause != nil && clause[i] != "" {
			want, ok := wanted[clause[i]]
			if !ok {
				want = map[string]bool{}
				for _, t := range sentenceTerms(clause[i]) {
					want[t] = true
				}
				wanted[clause[i]] = want
			}
			f[8] = clauseWordShare(want, s)
		}
		at[g]++
		out[i] = f
	}
	cov := sentenceCoverage(q, sents)
	for i := range out {
		out[i][2] = cov[i]
	}
	return out
}

// clauseWordShare is the share of the terms of want (stemmed clause words)
// that the sentence holds; 0 when want is empty.
func clauseWordShare(want map[string]bool, sent string) float64 {
	if len(want) == 0 {
		return 0
	}
	n := 0
	seen := map[string]bool{}
	for _, t := range sentenceTerms(sent) {
		if want[t] && !seen[t] {
			seen[t] = true
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// sentenceCoverage is, for each sentence, the share of the question's
// distinct content terms it holds, each weighted by its idf over the
// sentences.
func sentenceCoverage(q string, sents []string) []float64 {
	uq := map[string]bool{}
	for _, t := range sentenceTerms(q) {
		uq[t] = true
	}
	has := make([]map[string]bool, len(sents))
	df := map[string]int{}
	for i, s := range sents {
		has[i] = map[string]bool{}
		for _, t := range sentenceTerms(s) {
			if uq[t] && !has[i][t] {
				has[i][t] = true
				df[t]++
			}
		}
	}
	n := float64(len(sents))
	idf := func(t string) float64 {
		return math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
	}
	total := 0.0
	for t := range uq {
		total += idf(t)
	}
	out := make([]float64, len(sents))
	if total == 0 {
		return out
	}
	for i := range sents {
		for t := range has[i] {
			out[i] += idf(t)
		}
		out[i] /= total
	}
	return out
}

// SentenceModel is a logistic regression over standardised sentence
// features (SentenceFeatureNames): the probability that a sentence of a
// relevant passage holds the answer.
type SentenceModel struct {
	Mean, Scale, Weights []float64
	Bias                 float64
}

// Prob is the model's probability for one feature row.
func (m SentenceModel) Prob(f []float64) float64 {
	z := m.Bias
	for i, x := range f {
		if i >= len(m.Weights) || i >= len(m.Mean) || i >= len(m.Scale) {
			break
		}
		s := m.Scale[i]
		if s == 0 {
			s = 1
		}
		z += m.Weights[i] * (x - m.Mean[i]) / s
	}
	return 1 / (1 + math.Exp(-z))
}

// Check reports a model whose sizes do not match the features.
func (m SentenceModel) Check() error {
	n := len(SentenceFeatureNames)
	if len(m.Mean) != n || len(m.Scale) != n || len(m.Weights) != n {
		return fmt.Errorf("sentence model has %d/%d/%d coefficients for %d features", len(m.Mean), len(m.Scale), len(m.Weights), n)
	}
	return nil
}

// Probs is Prob for each row.
func (m SentenceModel) Probs(fs [][]float64) []float64 {
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = m.Prob(f)
	}
	return out
}

// SentenceModels are the two fitted sentence models: with the cosine, and
// for when the local model gives no vectors, without it.
type SentenceModels struct {
	Version    string
	WithCosine SentenceModel
	Lexical    SentenceModel
}

// SentenceBM25 scores each sentence against the question by BM25 with the
// idf counted over the sentences themselves (k1 1.2, b 0.75), over stemmed
// content words.
func SentenceBM25(q string, sents []string) []float64 {
	const k1, b = 1.2, 0.75
	qt := sentenceTerms(q)
	docs := make([][]string, len(sents))
	df := map[string]int{}
	total := 0
	for i, s := range sents {
		docs[i] = sentenceTerms(s)
		total += len(docs[i])
		seen := map[string]bool{}
		for _, t := range docs[i] {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	out := make([]float64, len(sents))
	if len(sents) == 0 {
		return out
	}
	avg := math.Max(float64(total)/float64(len(sents)), 1)
	n := float64(len(sents))
	uq := map[string]bool{}
	for _, t := range qt {
		uq[t] = true
	}
	for i, d := range docs {
		tf := map[string]int{}
		for _, t := range d {
			tf[t]++
		}
		for t := range uq {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			out[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(len(d))/avg))
		}
	}
	return out
}

// sentenceTerms are the stemmed content words of s.
func sentenceTerms(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := make([]string, 0, len(words))
	for _, w := range words {
		if len([]rune(w)) < 2 || english.IsStopWord(w) {
			continue
		}
		out = append(out, english.Stem(w, false))
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		if i >= len(b) {
			break
		}
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func errString(err error) string {
	if err == nil {
		return "wrong number of vectors"
	}
	return err.Error()
}

// passageEmbedder is a model that embeds passages apart from queries (a
// model trained with a query instruction or "passage: " prefix).
type passageEmbedder interface {
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
}

// embedQueryAndPassages returns the question's vector followed by the
// sentences', each embedded as the model wants its side embedded.
func embedQueryAndPassages(ctx context.Context, e embed.Embedder, q string, sents []string) ([][]float32, error) {
	p, ok := e.(passageEmbedder)
	if !ok {
		return e.Embed(ctx, append([]string{q}, sents...))
	}
	qv, err := e.Embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	sv, err := p.EmbedPassages(ctx, sents)
	if err != nil {
		return nil, err
	}
	return append(qv, sv...), nil
}
