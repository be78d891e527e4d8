package search

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Exact terms: the query's words that must match as written, not only after
// stemming. Codes and names joined by dots, hyphens, slashes or underscores
// (pacs.008, Cache-Control, AT-44), words mixing letters and digits (AC04,
// p53), and a capitalised name followed by a number (PEP 8, RFC 2119).
var (
	joinedRe   = regexp.MustCompile(`[A-Za-z0-9]+(?:[._/-][A-Za-z0-9]+)+`)
	mixedRe    = regexp.MustCompile(`\b(?:[A-Za-z]+[0-9]|[0-9]+[A-Za-z])[A-Za-z0-9]*\b`)
	numberedRe = regexp.MustCompile(`\b[A-Z]{2,}\s+[0-9]+(?:\.[0-9]+)*\b`)
)

// ExactTerms returns the query's exact terms in the order they are written,
// each once, an overlapping shorter term dropped.
func ExactTerms(q string) []string {
	type span struct{ a, b int }
	var spans []span
	for _, re := range []*regexp.Regexp{numberedRe, joinedRe, mixedRe} {
		for _, m := range re.FindAllStringIndex(q, -1) {
			overlap := false
			for _, s := range spans {
				if m[0] < s.b && m[1] > s.a {
					overlap = true
					break
				}
			}
			if !overlap {
				spans = append(spans, span{m[0], m[1]})
			}
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].a < spans[j].a })
	var out []string
	seen := map[string]bool{}
	for _, s := range spans {
		t := q[s.a:s.b]
		// A trailing full stop ends the sentence, not the code.
		t = strings.TrimRight(t, ".")
		if k := strings.ToLower(t); !seen[k] && t != "" {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// A chunk holding an exact term as written gets, on top of its BM25 score,
// phraseBoost times the idf of the term's lexemes: as if the term occurred
// once more, as one unit. exactFirst instead ranks chunks holding more
// exact terms first. Variables so that the evaluation can compare them;
// docs/retrieval.md gives the figures behind the defaults.
var (
	exactFirst  = false
	phraseBoost = 0.5
)

// candidateBudget bounds the candidates the lexical channel scores: the
// query's lexemes select candidates rarest first while the sum of their
// document frequencies stays within it (the rarest always selects, and so
// do exact terms); the others still score. 0 turns the bound off.
var candidateBudget int64 = 0

// The impact-ordered path (strata.postings, migration 0006) serves every
// search first: impactPerTerm postings per query lexeme
// and layer, best impact first; the impactCandidates chunks (at least 4 x
// the channel's depth) with the highest sum of idf x impact are scored
// exactly; impactPhraseLimit bounds the chunks the GIN index adds for exact
// terms made only of common words. When a metadata_filter leaves fewer
// than the channel's depth of those candidates, the search scores every
// chunk the GIN index selects instead, so the filter never hides a match
// the postings did not reach. impactPerTerm 0 turns the impact path off.
// Variables so that the evaluation can compare; docs/retrieval.md has the
// figures.
var (
	impactPerTerm     = 2000
	impactCandidates  = 300
	impactPhraseLimit = 1000
)

// tsLiteral quotes a lexeme for a tsquery.
func tsLiteral(l string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(l) + "'"
}

// lexical runs the BM25 channel over the layers and returns its hits, best
// first, and the exact terms it looked for.
func (st *state) lexical(ctx context.Context, ids []int64, depth int) ([]store.LexHit, []string, error) {
	s := st.s.store
	exactTerms := ExactTerms(st.req.Query)
	prep, err := s.PrepareLexical(ctx, st.req.Query, exactTerms, ids)
	if err != nil || len(prep.Lexemes) == 0 {
		return nil, nil, err
	}
	lexemes, stats := prep.Lexemes, prep.Stats
	if stats.Chunks == 0 {
		return nil, nil, nil
	}
	n := float64(stats.Chunks)
	avg := float64(stats.TotalLen) / n
	if avg <= 0 {
		avg = 1
	}
	idf := func(l string) float64 {
		df := float64(stats.DF[l])
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	var phrases, terms []string
	var boosts []float64
	var rarestDF []int64 // per phrase: the df of its rarest lexeme
	phraseLexemes := map[string]bool{}
	for i, t := range exactTerms {
		if i >= len(prep.Phrases) || prep.Phrases[i] == "" {
			continue
		}
		phrases = append(phrases, prep.Phrases[i])
		terms = append(terms, t)
		// A chunk holding the phrase holds all its lexemes: the rarest one
		// selecting candidates is enough to find every such chunk.
		b, rarest := 0.0, ""
		for _, l := range prep.PhraseLexemes[i] {
			b += idf(l)
			if df := stats.DF[l]; df > 0 && (rarest == "" || df < stats.DF[rarest]) {
				rarest = l
			}
		}
		if rarest != "" {
			phraseLexemes[rarest] = true
		}
		rarestDF = append(rarestDF, stats.DF[rarest])
		boosts = append(boosts, phraseBoost*b)
	}
	q := store.BM25Query{LayerIDs: ids, Filter: st.req.MetadataFilter, K1: bm25K1, B: bm25B, AvgLen: avg,
		Limit: depth, Phrases: phrases, ExactFirst: exactFirst}
	q.PhraseBoosts = boosts
	type sel struct {
		lit string
		df  int64
	}
	var match, common []sel
	for _, l := range lexemes {
		df := float64(stats.DF[l])
		if df == 0 {
			continue // in no chunk of these layers
		}
		q.Terms = append(q.Terms, l)
		q.IDF = append(q.IDF, idf(l))
		x := sel{tsLiteral(l), stats.DF[l]}
		switch {
		case phraseLexemes[l]:
			match = append(match, sel{x.lit, -1}) // always selects
		case stats.Chunks > pruneMinChunks && df > pruneFraction*n:
			common = append(common, x)
		default:
			match = append(match, x)
		}
	}
	if len(q.Terms) == 0 {
		return nil, terms, nil
	}
	if impactPerTerm > 0 {
		// Impact-ordered: each lexeme's best postings choose the candidates.
		// A phrase whose rarest lexeme is in more chunks than a posting list
		// is read for may hold chunks no list reaches: the GIN index adds
		// them.
		cands := max(impactCandidates, 4*depth)
		q.Impact = &store.ImpactSelect{PerTerm: impactPerTerm, Candidates: cands, PhraseLimit: impactPhraseLimit}
		var far []string
		for i, ph := range phrases {
			if rarestDF[i] > int64(impactPerTerm) {
				far = append(far, "("+ph+")")
			}
		}
		q.Impact.PhraseMatch = strings.Join(far, " | ")
		hits, err := s.SearchBM25(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		// Without a filter, fewer hits than depth means the lists held
		// every chunk with a query word. With one, the candidates that
		// pass it may be too few while other chunks would pass: a filter
		// must never hide a match, so the GIN path scores them all.
		if len(st.req.MetadataFilter) == 0 || len(hits) >= depth {
			st.lexPath = fmt.Sprintf("postings: the best %d per query word and layer by BM25 impact; the %d best sums scored exactly",
				impactPerTerm, cands)
			return hits, terms, nil
		}
		q.Impact = nil
		st.lexPath = fmt.Sprintf("gin: the metadata_filter left %d of the postings' candidates, fewer than %d; "+
			"every chunk holding one of the query's rarer words scored exactly", len(hits), depth)
	} else {
		st.lexPath = "gin: every chunk holding one of the query's rarer words scored exactly"
	}
	if len(match) == 0 {
		// Only common words: the rarest of them select the candidates.
		match = common
	}
	sort.SliceStable(match, func(i, j int) bool { return match[i].df < match[j].df })
	var lits []string
	var sum int64
	for i, m := range match {
		if candidateBudget > 0 && i > 0 && m.df > 0 && sum+m.df > candidateBudget {
			break
		}
		sum += max(m.df, 0)
		lits = append(lits, m.lit)
	}
	q.Match = strings.Join(lits, " | ")
	hits, err := s.SearchBM25(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	return hits, terms, nil
}

// fuse merges the channels by weighted reciprocal rank fusion:
// fused = wl/(k + lexical rank) + wv/(k + vector rank), a channel that did
// not find the chunk adding nothing. Ties keep the lexical order.
func fuse(lex []store.LexHit, vec []store.VecHit, terms []string, p store.ModelParams) []*candidate {
	byID := map[int64]*candidate{}
	var order []*candidate
	get := func(id int64) *candidate {
		c, ok := byID[id]
		if !ok {
			c = &candidate{id: id}
			byID[id] = c
			order = append(order, c)
		}
		return c
	}
	k := float64(p.RRFK)
	for i, h := range lex {
		c := get(h.ChunkID)
		c.lex = &ChannelHit{Rank: i + 1, Score: round(h.Score)}
		c.fused += p.LexicalWeight / (k + float64(i+1))
		for _, e := range h.Exact {
			if int(e) < len(terms) {
				c.exactTerms = append(c.exactTerms, terms[e])
			}
		}
	}
	for i, h := range vec {
		c := get(h.ChunkID)
		c.vec = &ChannelHit{Rank: i + 1, Score: round(h.Similarity)}
		c.fused += p.VectorWeight / (k + float64(i+1))
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.fused != b.fused {
			return a.fused > b.fused
		}
		return lexRank(a) < lexRank(b)
	})
	for i, c := range order {
		c.fusedRank = i + 1
	}
	return order
}

func lexRank(c *candidate) int {
	if c.lex == nil {
		return math.MaxInt
	}
	return c.lex.Rank
}

// applyKeywordSlots takes the first topK candidates, making sure the best
// `slots` lexical matches are among them: one that fusion ranked below the
// cut takes the place of the lowest fused result not itself kept by a slot.
// Without the vector channel, fusion order is lexical order and nothing
// moves.
func applyKeywordSlots(cands []*candidate, lex []store.LexHit, topK, slots int, vectorRan bool) []*candidate {
	top := cands
	if len(top) > topK {
		top = append([]*candidate(nil), cands[:topK]...)
	}
	for _, c := range top {
		c.placement = "fusion"
		if !vectorRan {
			c.placement = "lexical_only"
		}
	}
	if !vectorRan || slots == 0 || len(cands) <= topK {
		return top
	}
	inTop := map[int64]bool{}
	for _, c := range top {
		inTop[c.id] = true
	}
	byID := map[int64]*candidate{}
	for _, c := range cands {
		byID[c.id] = c
	}
	// The best lexical matches still present after exact sections took
	// theirs, in lexical order.
	var want []*candidate
	for _, h := range lex {
		if len(want) == slots {
			break
		}
		if c, ok := byID[h.ChunkID]; ok {
			want = append(want, c)
		}
	}
	kept := map[int64]bool{}
	for _, w := range want {
		if inTop[w.id] {
			kept[w.id] = true
		}
	}
	for _, w := range want {
		if inTop[w.id] {
			continue
		}
		// Replace the lowest-placed result that no slot keeps.
		for i := len(top) - 1; i >= 0; i-- {
			if !kept[top[i].id] {
				delete(inTop, top[i].id)
				w.placement = "keyword_slot"
				top = append(top[:i], top[i+1:]...)
				top = append(top, w)
				kept[w.id], inTop[w.id] = true, true
				break
			}
		}
	}
	return top
}

func explainOf(c *candidate) *ResultExplain {
	e := &ResultExplain{Lexical: c.lex, Vector: c.vec, Fused: round6(c.fused), Placement: c.placement,
		ExactTerms: c.exactTerms}
	switch c.placement {
	case "keyword_slot":
		e.Reason = "one of the best full-text matches: it keeps one of the HYBRID_KEYWORD_SLOTS places although fusion ranked it lower"
	case "lexical_only":
		e.Reason = "ranked by BM25 alone: the vector channel did not run"
	default:
		var found []string
		if c.lex != nil {
			found = append(found, "lexical")
		}
		if c.vec != nil {
			found = append(found, "vector")
		}
		e.Reason = "placed by reciprocal rank fusion of the " + strings.Join(found, " and ") + " channel"
		if len(found) > 1 {
			e.Reason += "s"
		}
	}
	if len(c.exactTerms) > 0 {
		e.Reason += "; holds " + strings.Join(c.exactTerms, ", ") + " as written"
	}
	e.FusedRank = c.fusedRank
	return e
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
