package ask

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// The offline sentence scorer's mix of a sentence's words and meaning: its
// BM25 over the candidate sentences (relative to the best) and its cosine
// to the question (relative to the best), when the model gives vectors.
const (
	sentenceBM25Weight   = 0.6
	sentenceCosineWeight = 0.4
	// sentenceFloor is the share of its passage's probability the weakest
	// sentence of a passage keeps; the passage's best sentence keeps all.
	sentenceFloor = 0.5
)

// OfflineSentences scores sentences for the offline reranker, which reads
// channel features a sentence does not have: a sentence's probability is
// its passage's calibrated probability (the offline model scores the
// passages, also with reranking off), scaled from sentenceFloor for the
// passage's weakest sentence to 1 for its best, ranked by a mix of BM25
// over the candidate sentences (idf counted over the sentences) and the
// local embedding model's cosine. So the best sentence of a found passage
// is found, and the status marks are the reranker's.
type OfflineSentences struct {
	Model lrank.Model
	// Embedder gives the cosine; nil (or failing) leaves BM25 alone.
	Embedder embed.Embedder
	Logger   *slog.Logger
}

// Name is the model's version.
func (o OfflineSentences) Name() string { return o.Model.Version }

// ScoreSentences scores the sentences.
func (o OfflineSentences) ScoreSentences(ctx context.Context, q string, sents []SentenceInput, cands []retrieve.Candidate) ([]float64, error) {
	lc := make([]lrank.Candidate, len(cands))
	for i, c := range cands {
		lc[i] = lrank.FromRetrieve(c)
	}
	pp := o.Model.Score(q, lc)
	texts := make([]string, len(sents))
	for i, s := range sents {
		texts[i] = s.Text
	}
	mix := SentenceBM25(q, texts)
	relMax(mix)
	if o.Embedder != nil && len(sents) > 0 {
		vs, err := o.Embedder.Embed(ctx, append([]string{q}, texts...))
		if err != nil || len(vs) != len(texts)+1 {
			if o.Logger != nil {
				o.Logger.Warn("sentence_cosine_skipped", "err", errString(err))
			}
		} else {
			cos := make([]float64, len(texts))
			for i := range texts {
				cos[i] = math.Max(0, cosine(vs[0], vs[i+1]))
			}
			relMax(cos)
			for i := range mix {
				mix[i] = sentenceBM25Weight*mix[i] + sentenceCosineWeight*cos[i]
			}
		}
	}
	// Within each passage, the best sentence keeps the passage's
	// probability.
	bestIn := map[int]float64{}
	for i, s := range sents {
		bestIn[s.Passage] = math.Max(bestIn[s.Passage], mix[i])
	}
	out := make([]float64, len(sents))
	for i, s := range sents {
		p := 0.0
		if s.Passage >= 0 && s.Passage < len(pp) {
			p = pp[s.Passage]
		}
		share := sentenceFloor
		if b := bestIn[s.Passage]; b > 0 {
			share += (1 - sentenceFloor) * mix[i] / b
		}
		out[i] = p * share
	}
	return out, nil
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

// relMax divides xs by their maximum (when positive).
func relMax(xs []float64) {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, x)
	}
	if m <= 0 {
		return
	}
	for i := range xs {
		xs[i] /= m
	}
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
