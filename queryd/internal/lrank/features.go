// Package lrank is the offline reranker: a pointwise logistic regression
// over features each candidate already has or that are cheap to compute at
// query time (its place and score in each channel, the query terms it
// covers and how close together, whether its clause path or file names
// them). It is not a cross-encoder: it reads no model weights beyond a few
// coefficients, and it cannot see meaning the channels missed. Its
// probabilities are calibrated on judged questions (see docs/ask.md).
//
// There is deliberately no passage-length feature: with one, a model
// learns which documents were relevant instead of what makes a passage
// relevant.
package lrank

import (
	"math"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Candidate is what the reranker reads of one candidate passage.
type Candidate struct {
	Text       string
	ClausePath string
	File       string
	// LexRank and VecRank are its place in the lexical and vector channels
	// (0: that channel did not return it); LexScore its BM25 score.
	LexRank, VecRank int
	LexScore         float64
	// Similarity is its cosine to the question; FusedRank its place after
	// fusion (and merging of variants).
	Similarity float64
	FusedRank  int
	// ExactTerms counts the question's exact terms (codes, names) it holds
	// as written.
	ExactTerms int
}

// FeatureNames name Features' columns, in order.
var FeatureNames = []string{
	"bm25_rel",      // BM25 over the list's best BM25 (0 without one)
	"bm25_log",      // log(1 + BM25)
	"lex_rr",        // 1 / lexical rank
	"cosine",        // similarity to the question
	"vec_rr",        // 1 / vector rank
	"fused_rr",      // 1 / fused rank
	"coverage",      // share of the question's content terms present
	"idf_coverage",  // the same, each term weighted by its rarity in the list
	"proximity",     // how tightly the present terms cluster
	"heading_match", // share of content terms in the clause path or file name
	"exact_terms",   // 1 when it holds an exact term the question names
}

// Features returns one row of FeatureNames per candidate.
func Features(question string, cands []Candidate) [][]float64 {
	qterms := uniq(terms(question))
	bestLex := 0.0
	docTerms := make([][]string, len(cands))
	df := map[string]int{}
	for i, c := range cands {
		bestLex = math.Max(bestLex, c.LexScore)
		docTerms[i] = terms(c.Text)
		seen := map[string]bool{}
		for _, t := range docTerms[i] {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(cands))
	idf := func(t string) float64 { return math.Log(1 + (n+1)/float64(df[t]+1)) }
	out := make([][]float64, len(cands))
	for i, c := range cands {
		f := make([]float64, len(FeatureNames))
		if bestLex > 0 {
			f[0] = c.LexScore / bestLex
		}
		f[1] = math.Log1p(c.LexScore)
		f[2] = rr(c.LexRank)
		f[3] = c.Similarity
		f[4] = rr(c.VecRank)
		f[5] = rr(c.FusedRank)
		present := map[string]bool{}
		for _, t := range docTerms[i] {
			present[t] = true
		}
		var have, wHave, wAll float64
		for _, t := range qterms {
			w := idf(t)
			wAll += w
			if present[t] {
				have++
				wHave += w
			}
		}
		if len(qterms) > 0 {
			f[6] = have / float64(len(qterms))
		}
		if wAll > 0 {
			f[7] = wHave / wAll
		}
		f[8] = proximity(qterms, docTerms[i])
		head := map[string]bool{}
		for _, t := range terms(c.ClausePath + " " + c.File) {
			head[t] = true
		}
		hits := 0
		for _, t := range qterms {
			if head[t] {
				hits++
			}
		}
		if len(qterms) > 0 {
			f[9] = float64(hits) / float64(len(qterms))
		}
		if c.ExactTerms > 0 {
			f[10] = 1
		}
		out[i] = f
	}
	return out
}

func rr(rank int) float64 {
	if rank <= 0 {
		return 0
	}
	return 1 / float64(rank)
}

// proximity is k/w for the smallest window of w terms holding the k
// distinct question terms the passage has (1 when they are adjacent), 0
// when it holds fewer than two.
func proximity(qterms, doc []string) float64 {
	want := map[string]bool{}
	for _, t := range qterms {
		want[t] = true
	}
	inDoc := map[string]bool{}
	for _, t := range doc {
		if want[t] {
			inDoc[t] = true
		}
	}
	k := len(inDoc)
	if k < 2 {
		return 0
	}
	count := map[string]int{}
	have, best, lo := 0, len(doc)+1, 0
	for hi, t := range doc {
		if !inDoc[t] {
			continue
		}
		if count[t] == 0 {
			have++
		}
		count[t]++
		for have == k {
			if w := hi - lo + 1; w < best {
				best = w
			}
			if u := doc[lo]; inDoc[u] {
				count[u]--
				if count[u] == 0 {
					have--
				}
			}
			lo++
		}
	}
	return float64(k) / float64(best)
}

// terms are the stemmed content words of s: lower case, stopwords out.
func terms(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := make([]string, 0, len(words))
	for _, w := range words {
		if len(w) < 2 || english.IsStopWord(w) {
			continue
		}
		out = append(out, english.Stem(w, false))
	}
	return out
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
