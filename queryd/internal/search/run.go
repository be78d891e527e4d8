package search

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// BM25 parameters: k1 1.2, b 0.4, the best of a grid on SciFact's train
// queries (docs/retrieval.md).
// Variables so that the evaluation can compare; strata.postings_impact
// (migration 0006) uses the same values, and a test checks they agree.
var (
	bm25K1 = 1.2
	bm25B  = 0.4
)

const (
	// defaultDepth is how many candidates each channel hands to fusion.
	defaultDepth = 50
)

// pruneFraction: with more than pruneMinChunks chunks, lexemes in more
// than this share of them (5%) still score but do not select candidates (a chunk
// holding none of the query's rarer words cannot reach the top). Variables
// so that the evaluation can compare.
var (
	pruneFraction        = 0.05
	pruneMinChunks int64 = 1000
)

// Defaults for a model without measured parameters: plain RRF and the
// spec's provisional cosine marks.
var defaultParams = store.ModelParams{RRFK: 60, LexicalWeight: 1, VectorWeight: 1, EFSearch: 100,
	ConfidenceHigh: 0.6, ConfidenceMedium: 0.45, MinSimilarity: 0.25}

// state holds what one Search computes once and reuses when routing falls
// back to all layers: the query vector, the parsed references, the
// parameters.
type state struct {
	s    *Searcher
	req  Request
	memo *memoVersion // nil: read everything
	// depth overrides defaultDepth (the evaluation asks for 100).
	depth int
	// channels restricts the channels (the evaluation runs each alone).
	noVector, noLexical bool

	// lexPath says how the last lexical search chose its candidates.
	lexPath string

	vecDone bool
	vec     []float32
	vecErr  error

	paramsDone bool
	params     store.ModelParams
	model      string
}

type candidate struct {
	id         int64
	lex, vec   *ChannelHit
	fused      float64
	exactTerms []string
	placement  string
	fusedRank  int
}

// runOutcome is what one pass over a set of layers produced, before it is
// turned into a response.
type runOutcome struct {
	resp          *Response
	simAvailable  bool
	nonExactCount int
}

func (st *state) queryVector(ctx context.Context) ([]float32, error) {
	if st.vecDone {
		return st.vec, st.vecErr
	}
	st.vecDone = true
	e := st.s.opt.Embedder
	if e == nil {
		if lerr := st.s.opt.EmbedderError; lerr != nil {
			st.vecErr = fmt.Errorf("the embedding model failed to load (%s)", redact(lerr.Error()))
		} else {
			st.vecErr = fmt.Errorf("no embedding model is configured")
		}
		return nil, st.vecErr
	}
	vs, err := e.Embed(ctx, []string{st.req.Query})
	switch {
	case err != nil:
		st.vecErr = fmt.Errorf("embedding model %s failed: %s", e.Model().Name, redact(err.Error()))
	case len(vs) != 1 || len(vs[0]) == 0:
		st.vecErr = fmt.Errorf("embedding model %s returned no vector", e.Model().Name)
	default:
		st.vec = vs[0]
	}
	if st.vecErr != nil {
		st.s.logger.Warn("search_degraded", "reason", st.vecErr.Error())
	}
	return st.vec, st.vecErr
}

func (st *state) modelParams(ctx context.Context) store.ModelParams {
	if st.paramsDone {
		return st.params
	}
	st.paramsDone = true
	st.params = defaultParams
	if e := st.s.opt.Embedder; e != nil {
		st.model = e.Model().Name
		p, ok, err := st.memo.getParams(ctx, st.s.store, st.model)
		if err != nil {
			st.s.logger.Warn("search_params", "model", st.model, "err", err.Error())
		} else if ok {
			st.params = p
		}
	}
	return st.params
}

// run searches the layers. routed, when set, holds the layers routing had
// chosen: results from any other layer are marked.
func (st *state) run(ctx context.Context, layers []store.Layer, routed map[int64]bool) (*Response, error) {
	o, err := st.pass(ctx, layers, routed)
	if err != nil {
		return nil, err
	}
	return o.resp, nil
}

func (st *state) pass(ctx context.Context, layers []store.Layer, routed map[int64]bool) (*runOutcome, error) {
	req := st.req
	ids := layerIDs(layers)
	params := st.modelParams(ctx)
	depth := st.depth
	if depth == 0 {
		depth = max(defaultDepth, 4*req.TopK)
	}
	resp := &Response{Status: "ok", Query: req.Query, SearchedLayers: layerNames(layers), Results: []Result{},
		Basis: "similarity"}
	ex := &Explain{KeywordSlots: st.s.opt.KeywordSlots}
	var degraded []string
	var notes []string

	// Exact sections.
	exact, exactNote, refsSeen, err := st.exactSections(ctx, ids)
	if err != nil {
		return nil, dbError(ctx, err, "look up the sections the query names")
	}
	ex.References = refsSeen
	if exactNote != "" {
		notes = append(notes, exactNote)
	}

	// The vector channel (embedding the query, then the HNSW scan) runs
	// while the lexical channel runs: they use different connections.
	type vecOut struct {
		hits     []store.VecHit
		qv       []float32
		ran      bool
		degraded []string
		err      error
	}
	vecDone := make(chan vecOut, 1)
	go func() {
		var o vecOut
		began := time.Now()
		defer func() {
			if o.ran && st.s.opt.OnChannel != nil {
				st.s.opt.OnChannel("vector", time.Since(began))
			}
			vecDone <- o
		}()
		if st.noVector {
			return
		}
		qv, err := st.queryVector(ctx)
		if err != nil {
			o.degraded = append(o.degraded, err.Error()+": results come from the lexical channel only")
			return
		}
		o.qv = qv
		complete, err := st.memo.getComplete(ctx, st.s.store, st.model, ids)
		if err != nil {
			o.err = dbError(ctx, err, "read which layers have vectors")
			return
		}
		if missing := missingLayers(layers, complete); len(missing) > 0 {
			o.degraded = append(o.degraded, fmt.Sprintf("layers without complete %s vectors, searched by their words only: %s",
				st.model, strings.Join(missing, ", ")))
		}
		if len(complete) == 0 {
			return
		}
		hits, err := st.s.store.SearchVectors(ctx, store.VectorQuery{Model: st.model, Dims: len(qv), Vector: qv,
			LayerIDs: complete, Filter: req.MetadataFilter, Limit: depth, EFSearch: params.EFSearch})
		if err != nil {
			o.err = dbError(ctx, err, "run the vector search")
			return
		}
		o.hits, o.ran = aboveFloor(hits, params.MinSimilarity), true
	}()

	// Lexical channel.
	var lex []store.LexHit
	var phrases []string
	var lexErr error
	if !st.noLexical {
		began := time.Now()
		lex, phrases, lexErr = st.lexical(ctx, ids, depth)
		if lexErr == nil && st.s.opt.OnChannel != nil {
			st.s.opt.OnChannel("lexical", time.Since(began))
		}
		ex.Channels = append(ex.Channels, "lexical")
		ex.ExactTerms = phrases
		ex.LexicalCandidates = st.lexPath
	}
	vo := <-vecDone
	if lexErr != nil {
		return nil, dbError(ctx, lexErr, "run the full-text search")
	}
	if vo.err != nil {
		return nil, vo.err
	}
	vec, qv, vectorRan := vo.hits, vo.qv, vo.ran
	degraded = append(degraded, vo.degraded...)
	if vectorRan {
		ex.Channels = append(ex.Channels, "vector")
		ex.Model, ex.EFSearch = st.model, params.EFSearch
	}
	ex.RRFK, ex.LexicalWeight, ex.VectorWeight = params.RRFK, params.LexicalWeight, params.VectorWeight
	ex.MinSimilarity = params.MinSimilarity

	// Fusion.
	cands := fuse(lex, vec, phrases, params)
	cands = dropInsideExact(ctx, st.s.store, cands, exact)
	top := applyKeywordSlots(cands, lex, req.TopK, st.s.opt.KeywordSlots, vectorRan)

	// Results.
	idsWanted := make([]int64, len(top))
	for i, c := range top {
		idsWanted[i] = c.id
	}
	hits, err := st.s.store.Chunks(ctx, idsWanted)
	if err != nil {
		return nil, dbError(ctx, err, "read the passages found")
	}
	sims := map[int64]float64{}
	for _, v := range vec {
		sims[v.ChunkID] = v.Similarity
	}
	if qv != nil {
		var need []int64
		for _, c := range top {
			if _, ok := sims[c.id]; !ok {
				need = append(need, c.id)
			}
		}
		more, err := st.s.store.Similarities(ctx, st.model, qv, need)
		if err != nil {
			return nil, dbError(ctx, err, "compute similarities")
		}
		for id, v := range more {
			sims[id] = v
		}
		for i := range exact {
			if exact[i].docID == 0 {
				continue
			}
			v, err := st.s.store.SpanSimilarity(ctx, st.model, qv, exact[i].docID, exact[i].start, exact[i].end)
			if err != nil {
				return nil, dbError(ctx, err, "compute similarities")
			}
			exact[i].Similarity = v
		}
	}
	best := 0.0
	for _, c := range top {
		best = math.Max(best, c.fused)
	}
	for _, e := range exact {
		r := e.Result
		r.Score = 1
		r.Similarity = round(r.Similarity)
		if req.Explain {
			r.Explain = e.explain
		}
		resp.Results = append(resp.Results, r)
	}
	for _, c := range top {
		h, ok := hits[c.id]
		if !ok {
			continue // deleted since the channels ran
		}
		r := Result{ChunkID: h.ChunkID, Ref: h.Ref(), Layer: h.Layer, File: h.File, Page: h.Page,
			Lines: fmt.Sprintf("%d-%d", h.LineStart, h.LineEnd), ClausePath: h.ClausePath, Text: h.Text,
			Similarity: round(sims[c.id])}
		if best > 0 {
			r.Score = round(c.fused / best)
		}
		if req.Explain {
			r.Explain = explainOf(c)
		}
		resp.Results = append(resp.Results, r)
	}
	if routed != nil {
		inRouted := map[string]bool{}
		for _, l := range layers {
			if routed[l.ID] {
				inRouted[l.Name] = true
			}
		}
		for i := range resp.Results {
			resp.Results[i].OutsideRouting = !inRouted[resp.Results[i].Layer]
		}
	}

	// Confidence on the similarity basis.
	simAvailable := qv != nil && vectorRan
	judge(resp, params, simAvailable)

	nonExact := len(resp.Results) - len(exact)
	if len(req.MetadataFilter) > 0 && nonExact < req.TopK {
		notes = append(notes, fmt.Sprintf("Only %d passages match metadata_filter %s; the filter was not relaxed to fill top_k %d.",
			nonExact, describeFilter(req.MetadataFilter), req.TopK))
	}
	resp.Note = strings.Join(notes, " ")
	if len(degraded) > 0 {
		resp.Degraded = true
		resp.DegradedReason = strings.Join(degraded, "; ")
	}
	if req.Explain {
		resp.Explain = ex
	}
	return &runOutcome{resp: resp, simAvailable: simAvailable, nonExactCount: nonExact}, nil
}

// aboveFloor keeps the vector hits at or above the model's similarity
// floor: the nearest neighbours of an unrelated query are not matches.
func aboveFloor(hits []store.VecHit, floor float64) []store.VecHit {
	out := hits[:0:0]
	for _, h := range hits {
		if h.Similarity >= floor {
			out = append(out, h)
		}
	}
	return out
}

func missingLayers(layers []store.Layer, complete []int64) []string {
	have := map[int64]bool{}
	for _, id := range complete {
		have[id] = true
	}
	var out []string
	for _, l := range layers {
		if !have[l.ID] {
			out = append(out, l.Name)
		}
	}
	sort.Strings(out)
	return out
}

func describeFilter(f map[string]string) string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, f[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// judge sets the confidence level from the results' similarities: high when
// the best reaches the high mark and three or more reach the medium mark,
// medium when the best reaches the medium mark, else low with a warning.
func judge(resp *Response, p store.ModelParams, simAvailable bool) {
	best, atMedium := 0.0, 0
	for _, r := range resp.Results {
		best = math.Max(best, r.Similarity)
		if r.Similarity >= p.ConfidenceMedium {
			atMedium++
		}
	}
	switch {
	case !simAvailable:
		resp.Confidence = "low"
		resp.Warning = "Confidence could not be judged: no similarity between the query and the passages was available, so results are ranked by their words only. Check that they answer the question."
	case len(resp.Results) == 0:
		resp.Confidence = "low"
		resp.Warning = "Nothing matched. The knowledge base probably does not cover this: try other terms or another layer."
	case best >= p.ConfidenceHigh && atMedium >= 3:
		resp.Confidence = "high"
	case best >= p.ConfidenceMedium:
		resp.Confidence = "medium"
	default:
		resp.Confidence = "low"
		resp.Warning = "No passage is close to the query in meaning. The knowledge base probably does not cover this: try other terms or another layer."
	}
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
