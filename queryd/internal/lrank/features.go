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
	"regexp"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Candidate is what the reranker reads of one candidate passage.
type Candidate struct {
	Text       string
	ClausePath string
	File       string
	// DocumentID is its document's id (candidates of one document share
	// it; 0 is a document of its own).
	DocumentID int64
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
	// Unknown is the share of the question's words that no layer of the
	// knowledge base holds (the same for every candidate of a question).
	Unknown float64 `json:",omitempty"`
	// ClauseWords are the drafting words of the clause type a contract
	// question asks about, for a candidate of a contracts-preset layer.
	ClauseWords string `json:",omitempty"`
}

// FeatureNames name Features' columns, in order. None reads the BM25
// score's own scale, which differs between corpora and between the lexical
// channel's settings (the document evidence adds to it): the score is read
// over the list's best only.
var FeatureNames = []string{
	"bm25_rel",        // BM25 over the list's best BM25 (0 without one)
	"lex_rr",          // 1 / lexical rank
	"cosine",          // similarity to the question
	"cosine_gap",      // similarity less the list's best similarity
	"vec_rr",          // 1 / vector rank
	"fused_rr",        // 1 / fused rank
	"coverage",        // share of the question's content terms in the text
	"idf_coverage",    // the same, each term weighted by its rarity in the list
	"doc_coverage",    // idf_coverage counting terms in the file name or clause path too
	"proximity",       // how tightly the present terms cluster
	"heading_match",   // share of content terms in the clause path or file name
	"doc_share",       // share of the list's candidates from the same document
	"exact_terms",     // 1 when it holds an exact term the question names
	"clause_coverage", // idf_coverage of the terms its file name and clause path do not hold
	"coverage_gap",    // idf_coverage less the list's best
	"unknown_any",     // 1 when a question word is in no layer at all
	"unknown_share",   // share of the question's words in no layer
	"clause_words",    // share of the clause type's drafting words in the text
	"sentence_cover",  // idf_coverage of the passage's best single sentence
	"no_number",       // 1 when the question asks for a quantity and the best-covering sentence holds no number
}

// Features returns one row of FeatureNames per candidate.
func Features(question string, cands []Candidate) [][]float64 {
	qterms := uniq(terms(question))
	asksNumber := quantityQuestion.MatchString(strings.ToLower(question))
	bestLex, bestSim := 0.0, math.Inf(-1)
	docTerms := make([][]string, len(cands))
	df := map[string]int{}
	perDoc := map[int64]int{}
	for i, c := range cands {
		bestLex = math.Max(bestLex, c.LexScore)
		bestSim = math.Max(bestSim, c.Similarity)
		if c.DocumentID != 0 {
			perDoc[c.DocumentID]++
		}
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
		f[1] = rr(c.LexRank)
		f[2] = c.Similarity
		f[3] = c.Similarity - bestSim
		f[4] = rr(c.VecRank)
		f[5] = rr(c.FusedRank)
		present := map[string]bool{}
		for _, t := range docTerms[i] {
			present[t] = true
		}
		inHead := headingTerms(qterms, c.ClausePath, c.File)
		var have, wHave, wAll, wDoc, wRest, wRestHave float64
		heads := 0
		for _, t := range qterms {
			w := idf(t)
			wAll += w
			if present[t] {
				have++
				wHave += w
			}
			if inHead[t] {
				heads++
			}
			if present[t] || inHead[t] {
				wDoc += w
			}
			if !inHead[t] {
				wRest += w
				if present[t] {
					wRestHave += w
				}
			}
		}
		if len(qterms) > 0 {
			f[6] = have / float64(len(qterms))
			f[10] = float64(heads) / float64(len(qterms))
		}
		if wAll > 0 {
			f[7] = wHave / wAll
			f[8] = wDoc / wAll
		}
		f[9] = proximity(qterms, docTerms[i])
		if n > 0 {
			share := 1.0
			if c.DocumentID != 0 {
				share = float64(perDoc[c.DocumentID])
			}
			f[11] = share / n
		}
		if c.ExactTerms > 0 {
			f[12] = 1
		}
		if wRest > 0 {
			f[13] = wRestHave / wRest
		} else {
			f[13] = 1
		}
		out[i] = f
	}
	best := 0.0
	for _, f := range out {
		best = math.Max(best, f[7])
	}
	for i, f := range out {
		f[14] = f[7] - best
		c := cands[i]
		if c.Unknown > 0 {
			f[15] = 1
		}
		f[16] = c.Unknown
		f[17] = clauseWordShare(c.ClauseWords, docTerms[i])
		var sentence string
		f[18], sentence = sentenceCover(qterms, c.Text, idf)
		if asksNumber && !hasNumber(sentence) {
			f[19] = 1
		}
	}
	return out
}

// quantityQuestion matches a question that asks for a quantity, a number
// or a date ("how many", "what percentage", "which port", "maximum").
var quantityQuestion = regexp.MustCompile(`\b(how (many|much|long|often|old|large|big|far|soon)|what (percentage|percent|share|proportion|number|year|date|port|size|length|rate|fee|amount)|which (port|year|number)|maximum|minimum|limit|at most|at least|deadline)\b`)

// numberWord matches a number or a frequency written out.
var numberWord = regexp.MustCompile(`\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|hundred|thousand|million|percent|half|quarter|once|twice|daily|weekly|monthly|annually|yearly)\b`)

// hasNumber reports whether s holds a digit or a number written out.
func hasNumber(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return numberWord.MatchString(strings.ToLower(s))
}

// sentenceCover is the best idf-weighted share of the question's terms
// that one sentence of text holds (a claim is usually borne out by one
// sentence, not by words spread over a whole abstract), and that sentence
// (the first of the best; the whole text when the question has no terms).
func sentenceCover(qterms []string, text string, idf func(string) float64) (float64, string) {
	all := 0.0
	for _, t := range qterms {
		all += idf(t)
	}
	if all == 0 {
		return 0, text
	}
	best, bestS := -1.0, text
	for _, s := range roughSentences(text) {
		have := map[string]bool{}
		for _, t := range terms(s) {
			have[t] = true
		}
		w := 0.0
		for _, t := range qterms {
			if have[t] {
				w += idf(t)
			}
		}
		if w/all > best {
			best, bestS = w/all, s
		}
	}
	return max(best, 0), bestS
}

// roughSentences splits text after '.', '!' or '?' followed by white space,
// and at blank lines; it need not be exact, only cheap.
func roughSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?':
			if i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\n') {
				out = append(out, text[start:i+1])
				start = i + 1
			}
		case '\n':
			if i+1 < len(text) && text[i+1] == '\n' {
				out = append(out, text[start:i])
				start = i + 1
			}
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// clauseWordShare is the share of the drafting words (stemmed, each once)
// that the passage's terms hold; 0 without any.
func clauseWordShare(words string, doc []string) float64 {
	if words == "" {
		return 0
	}
	want := uniq(terms(words))
	if len(want) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, t := range doc {
		have[t] = true
	}
	n := 0
	for _, t := range want {
		if have[t] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// headingTerms are the question's terms that its clause path holds as a
// term, or its file name holds anywhere in its letters and digits (file
// names run words together: "MERCATAINC_...SPONSORSHIP AGREEMENT.txt"
// holds mercata and sponsorship). A term under 4 characters must be a
// whole term of either.
func headingTerms(qterms []string, clausePath, file string) map[string]bool {
	out := map[string]bool{}
	whole := map[string]bool{}
	for _, t := range terms(clausePath + " " + file) {
		whole[t] = true
	}
	squashed := squash(file)
	for _, t := range qterms {
		if whole[t] || (len(t) >= 4 && strings.Contains(squashed, t)) {
			out[t] = true
		}
	}
	return out
}

// squash is s in lower case with only its letters and digits.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
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
