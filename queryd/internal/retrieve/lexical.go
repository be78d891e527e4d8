package retrieve

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Exact terms: the query's words that must match as written, not only after
// stemming. Codes and names joined by dots, hyphens, slashes or underscores
// (pacs.008, Cache-Control, AT-44), words mixing letters and digits (AC04,
// p53), a capitalised name followed by a number (PEP 8, RFC 2119), four
// capitals standing alone (RJCT, NARR: a code list's letters-only codes;
// not in a question written all in capitals) and a three-digit number next
// to the word code, status, error, warning, HTTP, response or reason (404 in
// "status code 404", "warning 299").
var (
	joinedRe   = regexp.MustCompile(`[A-Za-z0-9]+(?:[._/-][A-Za-z0-9]+)+`)
	mixedRe    = regexp.MustCompile(`\b(?:[A-Za-z]+[0-9]|[0-9]+[A-Za-z])[A-Za-z0-9]*\b`)
	numberedRe = regexp.MustCompile(`\b[A-Z]{2,}\s+[0-9]+(?:\.[0-9]+)*\b`)
	capsRe     = regexp.MustCompile(`\b[A-Z]{4}\b`)
	// A three-digit code after or before its kind; group 1 or 2 is the code.
	numCodeRe = regexp.MustCompile(`(?i)\b(?:code|status|error|warning|http|response|reason)\s+([0-9]{3})(?:$|[^.,0-9%]|[.,](?:$|[^0-9]))|` +
		`(?:^|[^.,0-9$€£])\b([0-9]{3})\s+(?:code|status|error|warning|response)\b`)
	lowerRe = regexp.MustCompile(`[a-z]`)
	// codeRe: an exact term that is a code: four capitals, three digits,
	// or one token of capitals and digits (AC04, W123, HTTP-2) or of
	// letters and digits joined by a dot (pacs.008).
	codeRe = regexp.MustCompile(`^(?:[A-Z]{4}|[0-9]{3}|[A-Z0-9]*(?:[A-Z][A-Z0-9]*[0-9]|[0-9][A-Z0-9]*[A-Z])[A-Z0-9]*(?:[-_/][A-Z0-9]+)*|[A-Za-z]+\.[0-9]+(?:\.[0-9]+)*)$`)
)

// ExactTerms returns the query's exact terms in the order they are written,
// each once, an overlapping shorter term dropped.
func ExactTerms(q string) []string {
	type span struct{ a, b int }
	var spans []span
	add := func(a, b int) {
		for _, s := range spans {
			if a < s.b && b > s.a {
				return
			}
		}
		spans = append(spans, span{a, b})
	}
	// A numeric code first: "HTTP 404" is the code 404.
	for _, m := range numCodeRe.FindAllStringSubmatchIndex(q, -1) {
		for g := 1; g <= 2; g++ {
			if m[2*g] >= 0 {
				add(m[2*g], m[2*g+1])
			}
		}
	}
	for _, re := range []*regexp.Regexp{numberedRe, joinedRe, mixedRe} {
		for _, m := range re.FindAllStringIndex(q, -1) {
			add(m[0], m[1])
		}
	}
	if lowerRe.MatchString(q) {
		for _, m := range capsRe.FindAllStringIndex(q, -1) {
			add(m[0], m[1])
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

// IsCode says whether an exact term is a code (RJCT, AC04, W123, 404,
// pacs.008) rather than a name or a hyphenated word: a code that is not
// common in the layers searched (Params.CommonTermShare) outranks the
// question's other words (Params.CodeBoost).
func IsCode(term string) bool { return codeRe.MatchString(term) }

// tsLiteral quotes a lexeme for a tsquery.
func tsLiteral(l string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(l) + "'"
}

// Lexical is what the lexical channel found.
type Lexical struct {
	// Hits are the BM25 hits, best first.
	Hits []store.LexHit
	// Terms are the exact terms it looked for (LexHit.Exact indexes them);
	// Boosts what a chunk holding each as written gets on top of its BM25
	// score (0 for a term found all over the layers).
	Terms  []string
	Boosts []float64
	// Path says how it chose the chunks it scored.
	Path LexicalPath
	// Words are the query's word lexemes (letters and digits only, so not
	// the whole of a hyphenated or slashed compound), Unseen those of them
	// no chunk of the searched layers holds.
	Words, Unseen []string
}

// Lexical runs the BM25 channel over the layers, depth hits deep;
// contracts adds a contract question's clause words (a layer of the
// contracts preset is searched).
func (r *Run) Lexical(ctx context.Context, ids []int64, depth int, contracts bool) (Lexical, error) {
	s := r.e.store
	exactTerms := ExactTerms(r.q.Text)
	prep, err := s.PrepareLexical(ctx, r.q.Text, exactTerms, ids)
	if err != nil {
		return Lexical{}, err
	}
	pl, err := r.planLexical(ctx, prep, ids, depth, contracts, contracts, func(words string) (map[string]int64, error) {
		return s.LexemeDF(ctx, words, ids)
	})
	if err != nil || pl.q == nil {
		return pl.out, err
	}
	return r.searchPlanned(ctx, pl, nil)
}

// lexicalPlan is one lexical search worked out from its layers'
// statistics, before it runs: q is nil when there is nothing to search
// and out is then the whole result.
type lexicalPlan struct {
	out   Lexical
	q     *store.BM25Query
	depth int
	// match and common are the lexemes that may select the GIN path's
	// candidates.
	match, common []lexSel
}

// lexSel is a lexeme that may select candidates on the GIN path, with its
// document frequency (-1: always selects).
type lexSel struct {
	lit string
	df  int64
}

// planLexical works out the BM25 query from the layers' statistics
// (prep); wordsDF gives the document frequency in the layers of the
// lexemes of the words a query is expanded with. docEvidence says whether
// a layer of the contracts preset is among those searched, so that the
// document evidence may apply (docPresets); without one the query scores
// chunks alone and reads no document.
func (r *Run) planLexical(ctx context.Context, prep store.LexicalPrep, ids []int64, depth int, contracts, docEvidence bool,
	wordsDF func(words string) (map[string]int64, error)) (lexicalPlan, error) {
	if len(prep.Lexemes) == 0 {
		return lexicalPlan{}, nil
	}
	p := r.Params(ctx)
	exactTerms := ExactTerms(r.q.Text)
	lexemes, stats := prep.Lexemes, prep.Stats
	words, unseen := wordLexemes(lexemes, stats.DF)
	if stats.Chunks == 0 {
		return lexicalPlan{out: Lexical{Words: words, Unseen: unseen}}, nil
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
	// bound is at least what any chunk can score from the query's words
	// and the other exact terms: a rare code's boost of CodeBoost x bound
	// (CodeBoost 1) puts every chunk holding it above every chunk without.
	bound := 0.0
	for _, l := range lexemes {
		if stats.DF[l] > 0 {
			bound += (p.K1 + 1 + p.PhraseBoost) * idf(l)
		}
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
		rarestDF = append(rarestDF, stats.DF[rarest])
		// A term found in a large share of the layers' chunks (a
		// standard's name present everywhere) is no key term: it gets no
		// boost and does not force its chunks into the candidates.
		if p.CommonTermShare > 0 && stats.DF[rarest] > 1 && float64(stats.DF[rarest]) > p.CommonTermShare*n {
			boosts = append(boosts, 0)
			rarestDF[len(rarestDF)-1] = 0 // no GIN additions either
			continue
		}
		if rarest != "" {
			phraseLexemes[rarest] = true
		}
		boost := p.PhraseBoost * b
		if IsCode(t) && p.CodeBoost > 0 {
			boost = max(boost, p.CodeBoost*bound)
		}
		boosts = append(boosts, boost)
	}
	q := store.BM25Query{LayerIDs: ids, Filter: r.q.Filter, K1: p.K1, B: p.B, AvgLen: avg,
		Limit: depth, Phrases: phrases, ExactFirst: p.ExactFirst,
		DocTermDiscount: p.DocTermDiscount, DocContext: p.DocContext, DocPresets: docPresets(p)}
	if !docEvidence && !p.DocEvidenceEverywhere {
		q.DocTermDiscount, q.DocContext = 0, 0
	}
	q.PhraseBoosts = boosts
	var match, common []lexSel
	for _, l := range lexemes {
		df := float64(stats.DF[l])
		if df == 0 {
			continue // in no chunk of these layers
		}
		q.Terms = append(q.Terms, l)
		q.IDF = append(q.IDF, idf(l))
		q.Share = append(q.Share, df/n)
		x := lexSel{tsLiteral(l), stats.DF[l]}
		switch {
		case phraseLexemes[l]:
			match = append(match, lexSel{x.lit, -1}) // always selects
		case stats.Chunks > p.PruneMinChunks && df > p.PruneFraction*n:
			common = append(common, x)
		default:
			match = append(match, x)
		}
	}
	// Words added at a low weight (a factor on idf) never select candidates
	// alone: a contract question's clause type adds its drafting words
	// (clausewords.go), the thesaurus its words' synonyms (synonyms.go).
	have := map[string]bool{}
	for _, l := range lexemes {
		have[l] = true
	}
	addWords := func(words string, weight float64) error {
		dfs, err := wordsDF(words)
		if err != nil {
			return err
		}
		extra := make([]string, 0, len(dfs))
		for l, df := range dfs {
			if !have[l] && df > 0 {
				extra = append(extra, l)
			}
		}
		sort.Strings(extra)
		for _, l := range extra {
			have[l] = true
			df := float64(dfs[l])
			q.Terms = append(q.Terms, l)
			q.IDF = append(q.IDF, weight*math.Log(1+(n-df+0.5)/(df+0.5)))
			q.Share = append(q.Share, df/n)
			common = append(common, lexSel{tsLiteral(l), dfs[l]})
		}
		return nil
	}
	if words := r.clauseWords(p, contracts); words != "" && len(q.Terms) > 0 {
		if err := addWords(words, p.ClauseWords); err != nil {
			return lexicalPlan{}, err
		}
	}
	if words := r.synonymWords(p); words != "" && len(q.Terms) > 0 {
		if err := addWords(words, p.Synonyms); err != nil {
			return lexicalPlan{}, err
		}
	}
	out := Lexical{Terms: terms, Boosts: boosts, Words: words, Unseen: unseen}
	if len(q.Terms) == 0 {
		return lexicalPlan{out: out}, nil
	}
	if p.ImpactPerTerm > 0 {
		// Impact-ordered: each lexeme's best postings choose the candidates.
		// A phrase whose rarest lexeme is in more chunks than a posting list
		// is read for may hold chunks no list reaches: the GIN index adds
		// them.
		cands := max(p.ImpactCandidates, 4*depth)
		q.Impact = &store.ImpactSelect{PerTerm: p.ImpactPerTerm, Candidates: cands, PhraseLimit: p.ImpactPhraseLimit}
		var far []string
		for i, ph := range phrases {
			if rarestDF[i] > int64(p.ImpactPerTerm) {
				far = append(far, "("+ph+")")
			}
		}
		q.Impact.PhraseMatch = strings.Join(far, " | ")
	}
	return lexicalPlan{out: out, q: &q, depth: depth, match: match, common: common}, nil
}

// docPresets are the presets of the layers whose documents bring evidence
// to a search (store.BM25Query.DocPresets; nil: every layer's).
func docPresets(p Params) []string {
	if p.DocEvidenceEverywhere {
		return nil
	}
	return []string{"contracts"}
}

// clauseWords are the clause words a search adds (contracts: a layer of
// the contracts preset is searched), "" for none.
func (r *Run) clauseWords(p Params, contracts bool) string {
	if !contracts || p.ClauseWords <= 0 {
		return ""
	}
	return ClauseWords(r.q.Text)
}

// synonymWords are the synonyms a search adds, "" for none.
func (r *Run) synonymWords(p Params) string {
	if p.Synonyms <= 0 || r.e.opt.Thesaurus == nil {
		return ""
	}
	return SynonymWords(r.q.Text, r.e.opt.Thesaurus, p.SynonymsAllSenses)
}

// searchPlanned runs a planned search. impact, when not nil, holds the
// hits of its impact-ordered search, already run (SearchBM25Many).
func (r *Run) searchPlanned(ctx context.Context, pl lexicalPlan, impact *[]store.LexHit) (Lexical, error) {
	s := r.e.store
	p := r.Params(ctx)
	q, out, depth := *pl.q, pl.out, pl.depth
	if q.Impact != nil {
		var hits []store.LexHit
		if impact != nil {
			hits = *impact
		} else {
			var err error
			if hits, err = s.SearchBM25(ctx, q); err != nil {
				return Lexical{}, err
			}
		}
		// Without a filter, fewer hits than depth means the lists held
		// every chunk with a query word. With one, the candidates that
		// pass it may be too few while other chunks would pass: a filter
		// must never hide a match, so the GIN path scores them all.
		if len(r.q.Filter) == 0 || len(hits) >= depth {
			out.Hits = hits
			out.Path = LexicalPath{Kind: "postings", PerTerm: q.Impact.PerTerm, Candidates: q.Impact.Candidates}
			return out, nil
		}
		out.Path = LexicalPath{Kind: "gin", FellBack: true, FilterLeft: len(hits), Depth: depth}
		q.Impact = nil
	} else {
		out.Path = LexicalPath{Kind: "gin"}
	}
	match := pl.match
	if len(match) == 0 {
		// Only common words: the rarest of them select the candidates.
		match = pl.common
	}
	match = slices.Clone(match)
	sort.SliceStable(match, func(i, j int) bool { return match[i].df < match[j].df })
	var lits []string
	var sum int64
	for i, m := range match {
		if p.CandidateBudget > 0 && i > 0 && m.df > 0 && sum+m.df > p.CandidateBudget {
			break
		}
		sum += max(m.df, 0)
		lits = append(lits, m.lit)
	}
	q.Match = strings.Join(lits, " | ")
	hits, err := s.SearchBM25(ctx, q)
	if err != nil {
		return Lexical{}, err
	}
	out.Hits = hits
	return out, nil
}

// fuse merges the channels by weighted reciprocal rank fusion:
// fused = wl/(k + lexical rank) + wv/(k + vector rank), a channel that did
// not find the chunk adding nothing. Ties keep the lexical order.
func fuse(lex []store.LexHit, vec []store.VecHit, terms []string, p Params, contracts map[int64]bool) []*Candidate {
	byID := map[int64]*Candidate{}
	var order []*Candidate
	get := func(id int64) *Candidate {
		c, ok := byID[id]
		if !ok {
			c = &Candidate{ChunkID: id}
			byID[id] = c
			order = append(order, c)
		}
		return c
	}
	k := float64(p.RRFK)
	for i, h := range lex {
		c := get(h.ChunkID)
		c.DocumentID = max(c.DocumentID, h.DocumentID)
		c.Lexical = &ChannelHit{Rank: i + 1, Score: h.Score}
		c.Fused += p.LexicalWeight / (k + float64(i+1))
		for _, e := range h.Exact {
			if int(e) < len(terms) {
				c.ExactTerms = append(c.ExactTerms, terms[e])
			}
		}
	}
	for i, h := range vec {
		c := get(h.ChunkID)
		c.DocumentID = max(c.DocumentID, h.DocumentID)
		c.Vector = &ChannelHit{Rank: i + 1, Score: h.Similarity}
		c.Fused += p.vectorWeight(h.LayerID, contracts) / (k + float64(i+1))
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.Fused != b.Fused {
			return a.Fused > b.Fused
		}
		return lexRank(a) < lexRank(b)
	})
	order = perDocument(order, p.PerDocument)
	for i, c := range order {
		c.FusedRank = i + 1
	}
	return order
}

// perDocument moves each document's chunks after its first n (in order)
// behind every other chunk, keeping their order: a top list then holds
// more documents, each ranked by its best chunks, while a question only
// one document answers still gets more of it. n 0 moves nothing; a chunk
// of unknown document (0) is never moved.
func perDocument(order []*Candidate, n int) []*Candidate {
	if n <= 0 {
		return order
	}
	seen := map[int64]int{}
	kept := make([]*Candidate, 0, len(order))
	var later []*Candidate
	for _, c := range order {
		if c.DocumentID != 0 {
			seen[c.DocumentID]++
			if seen[c.DocumentID] > n {
				later = append(later, c)
				continue
			}
		}
		kept = append(kept, c)
	}
	return append(kept, later...)
}

func lexRank(c *Candidate) int {
	if c.Lexical == nil {
		return math.MaxInt
	}
	return c.Lexical.Rank
}

// applyKeywordSlots takes the first topK candidates, making sure the best
// `slots` lexical matches are among them: one that fusion ranked below the
// cut takes the place of the lowest fused result not itself kept by a slot.
// Without the vector channel, fusion order is lexical order and nothing
// moves.
func applyKeywordSlots(cands []*Candidate, lex []store.LexHit, topK, slots int, vectorRan bool) []*Candidate {
	top := cands
	if len(top) > topK {
		top = append([]*Candidate(nil), cands[:topK]...)
	}
	for _, c := range top {
		c.Placement = PlacedByFusion
		if !vectorRan {
			c.Placement = PlacedLexicalOnly
		}
	}
	if !vectorRan || slots == 0 || len(cands) <= topK {
		return top
	}
	inTop := map[int64]bool{}
	for _, c := range top {
		inTop[c.ChunkID] = true
	}
	byID := map[int64]*Candidate{}
	for _, c := range cands {
		byID[c.ChunkID] = c
	}
	// The best lexical matches still present after exact sections took
	// theirs, in lexical order.
	var want []*Candidate
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
		if inTop[w.ChunkID] {
			kept[w.ChunkID] = true
		}
	}
	for _, w := range want {
		if inTop[w.ChunkID] {
			continue
		}
		// Replace the lowest-placed result that no slot keeps.
		for i := len(top) - 1; i >= 0; i-- {
			if !kept[top[i].ChunkID] {
				delete(inTop, top[i].ChunkID)
				w.Placement = PlacedBySlot
				top = append(top[:i], top[i+1:]...)
				top = append(top, w)
				kept[w.ChunkID], inTop[w.ChunkID] = true, true
				break
			}
		}
	}
	return top
}

// Fuse ranks one query's channel hits as Search does (vector hits under
// p.MinSimilarity dropped, weighted reciprocal rank fusion, p.KeywordSlots),
// topK deep, without exact sections and without reading the passages: the
// evaluation compares fusion settings over channel runs it made once.
func Fuse(lex []store.LexHit, vec []store.VecHit, terms []string, p Params, topK int) []Candidate {
	cands := fuse(lex, aboveFloor(vec, p.MinSimilarity), terms, p, nil)
	top := applyKeywordSlots(cands, lex, topK, p.KeywordSlots, true)
	out := make([]Candidate, len(top))
	for i, c := range top {
		out[i] = *c
	}
	return out
}

// wordLexemes are the lexemes made of letters and digits only, and those
// of them with no document frequency. A compound such as "carbon-neutral"
// is also stored as its parts, which are what say whether the words are
// known.
func wordLexemes(lexemes []string, df map[string]int64) (words, unseen []string) {
	for _, l := range lexemes {
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
			continue
		}
		words = append(words, l)
		if df[l] == 0 {
			unseen = append(unseen, l)
		}
	}
	return words, unseen
}

// lexicalByLayer runs the lexical channel over the layers together and
// over each layer on its own, with that layer's statistics (idf, average
// length, the document evidence's shares, the common-term pruning) and,
// for a contracts-preset layer only, the clause words. The search over all
// of them decides how many of the places each layer gets and where (one
// layer's words set how rare a word is in another, which is fair across
// layers); each layer's own search decides which of its chunks fill them
// and in what order. So a layer's chunks rank among themselves as they do
// when it is searched alone: a routing fallback over every layer no longer
// reorders the contract the question names.
//
// The 1+N searches are prepared in one round trip
// (store.PrepareLexicalLayers) and, on the impact-ordered path, run as one
// statement (store.SearchBM25Many), which reads each posting list and each
// candidate document once for all of them; what they return is what 1+N
// calls of Lexical return (lexicalByLayerSeparate), but for the order of
// hits whose scores are equal except for rounding
// (TestLexicalLayersOneStatement).
func (r *Run) lexicalByLayer(ctx context.Context, layers []store.Layer, ids []int64, depth int) (Lexical, error) {
	if r.e.byLayer != byLayerOneStatement {
		return r.lexicalByLayerSeparate(ctx, layers, ids, depth)
	}
	outs, layerOf, err := r.lexicalScopes(ctx, layers, ids, depth)
	if err != nil {
		return Lexical{}, err
	}
	return r.mergeByLayer(ctx, layers, outs[len(layers)], outs[:len(layers)], layerOf)
}

// lexicalScopes returns what Lexical returns over each layer alone
// (outs[i] for layers[i]) and over all of them (outs[len(layers)]), and
// the layer (an index into layers) of the chunks it knows.
func (r *Run) lexicalScopes(ctx context.Context, layers []store.Layer, ids []int64, depth int) ([]Lexical, map[int64]int, error) {
	s := r.e.store
	p := r.Params(ctx)
	scopeIDs := make([][]int64, len(layers)+1)
	contracts := make([]bool, len(layers)+1)
	for i, l := range layers {
		scopeIDs[i], contracts[i] = []int64{l.ID}, l.Preset == "contracts"
	}
	scopeIDs[len(layers)], contracts[len(layers)] = ids, anyContracts(layers)
	// The words a scope may be expanded with are known before any
	// statistics: read their frequencies with the rest.
	var words []string
	if w := r.clauseWords(p, anyContracts(layers)); w != "" {
		words = append(words, w)
	}
	if w := r.synonymWords(p); w != "" {
		words = append(words, w)
	}
	prep, err := s.PrepareLexicalLayers(ctx, r.q.Text, ExactTerms(r.q.Text), ids, words)
	if err != nil {
		return nil, nil, err
	}
	plans := make([]lexicalPlan, len(scopeIDs))
	for i, sc := range scopeIDs {
		// Every scope of the one statement keeps the document evidence
		// when any layer has it (SearchBM25Many takes one setting for all;
		// DocPresets leaves the other layers' chunks alone).
		plans[i], err = r.planLexical(ctx, prep.Prep(sc), sc, depth, contracts[i], anyContracts(layers), func(w string) (map[string]int64, error) {
			j := slices.Index(words, w)
			if j < 0 {
				return nil, fmt.Errorf("expansion words %q were not prepared", w)
			}
			return prep.WordsDF(j, sc), nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	// The impact-ordered searches in one statement; a search on the GIN
	// path (ImpactPerTerm 0) runs on its own.
	var many []store.BM25Query
	var manyOf []int
	for i, pl := range plans {
		if pl.q != nil && pl.q.Impact != nil {
			many = append(many, *pl.q)
			manyOf = append(manyOf, i)
		}
	}
	layerOf := map[int64]int{}
	impact := make([]*[]store.LexHit, len(plans))
	if len(many) > 0 {
		hits, chunkLayer, err := s.SearchBM25Many(ctx, many)
		if err != nil {
			return nil, nil, err
		}
		for k, i := range manyOf {
			impact[i] = &hits[k]
		}
		for id, lid := range chunkLayer {
			if i := slices.IndexFunc(layers, func(l store.Layer) bool { return l.ID == lid }); i >= 0 {
				layerOf[id] = i
			}
		}
	}
	outs := make([]Lexical, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, pl := range plans {
		if pl.q == nil {
			outs[i] = pl.out
			continue
		}
		if impact[i] != nil && (len(r.q.Filter) == 0 || len(*impact[i]) >= depth) {
			outs[i], errs[i] = r.searchPlanned(ctx, pl, impact[i]) // no query left to run
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = r.searchPlanned(ctx, pl, impact[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return outs, layerOf, nil
}

// lexicalByLayerSeparate is lexicalByLayer as 1+N calls of Lexical, run
// concurrently: what the one statement must return.
func (r *Run) lexicalByLayerSeparate(ctx context.Context, layers []store.Layer, ids []int64, depth int) (Lexical, error) {
	outs := make([]Lexical, len(layers)+1)
	errs := make([]error, len(layers)+1)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == len(layers) {
				outs[i], errs[i] = r.Lexical(ctx, ids, depth, anyContracts(layers))
				return
			}
			outs[i], errs[i] = r.Lexical(ctx, []int64{layers[i].ID}, depth, layers[i].Preset == "contracts")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Lexical{}, err
		}
	}
	return r.mergeByLayer(ctx, layers, outs[len(layers)], outs[:len(layers)], map[int64]int{})
}

// mergeByLayer finds the layer of each of all's hits (layerOf holds those
// already known) and fills its places from the layers' own searches.
func (r *Run) mergeByLayer(ctx context.Context, layers []store.Layer, all Lexical, per []Lexical, layerOf map[int64]int) (Lexical, error) {
	for i, o := range per {
		for _, h := range o.Hits {
			layerOf[h.ChunkID] = i
		}
	}
	var unknown []int64
	for _, h := range all.Hits {
		if _, ok := layerOf[h.ChunkID]; !ok {
			unknown = append(unknown, h.ChunkID)
		}
	}
	if len(unknown) > 0 {
		m, err := r.e.store.ChunkLayers(ctx, unknown)
		if err != nil {
			return Lexical{}, err
		}
		for id, lid := range m {
			if i := slices.IndexFunc(layers, func(l store.Layer) bool { return l.ID == lid }); i >= 0 {
				layerOf[id] = i
			}
		}
	}
	return fillByLayer(all, per, layerOf), nil
}

// fillByLayer keeps the places of all's hits and gives each to the next
// best chunk of the same layer by that layer's own search (per[i]), with
// the place's score; a place whose layer has no chunk left keeps its own.
// Exact terms are merged into one list and the hits' Exact indexes moved
// onto it.
func fillByLayer(all Lexical, per []Lexical, layerOf map[int64]int) Lexical {
	out := Lexical{Words: all.Words, Unseen: all.Unseen, Path: all.Path}
	index := map[string]int32{}
	remapOf := func(o Lexical) []int32 {
		remap := make([]int32, len(o.Terms))
		for i, t := range o.Terms {
			j, ok := index[t]
			if !ok {
				j = int32(len(out.Terms))
				index[t] = j
				out.Terms = append(out.Terms, t)
				out.Boosts = append(out.Boosts, o.Boosts[i])
			}
			remap[i] = j
		}
		return remap
	}
	moved := func(h store.LexHit, remap []int32) store.LexHit {
		ex := make([]int32, 0, len(h.Exact))
		for _, e := range h.Exact {
			if int(e) < len(remap) {
				ex = append(ex, remap[e])
			}
		}
		h.Exact = ex
		return h
	}
	allRemap := remapOf(all)
	perRemap := make([][]int32, len(per))
	for i, o := range per {
		perRemap[i] = remapOf(o)
	}
	next := make([]int, len(per))
	used := map[int64]bool{}
	for _, h := range all.Hits {
		i, ok := layerOf[h.ChunkID]
		var pick store.LexHit
		found := false
		if ok {
			for next[i] < len(per[i].Hits) {
				c := per[i].Hits[next[i]]
				next[i]++
				if !used[c.ChunkID] {
					pick, found = moved(c, perRemap[i]), true
					break
				}
			}
		}
		if !found {
			if used[h.ChunkID] {
				continue
			}
			pick = moved(h, allRemap)
		}
		pick.Score = h.Score
		used[pick.ChunkID] = true
		out.Hits = append(out.Hits, pick)
	}
	return out
}
