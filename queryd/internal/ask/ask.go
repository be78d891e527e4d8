package ask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// DefaultBudget is ANSWER_TOKEN_BUDGET's default, in tokens.
const DefaultBudget = 1500

// MaxVariants is how many searches one question runs at most, the question
// as written among them.
const MaxVariants = 4

// The default marks on the rerank basis, the reranker's probability: the
// spec's, for a reranker without measured marks (Marked).
const (
	RerankHigh   = 0.8
	RerankMedium = 0.5
)

// Marked is a reranker whose status marks were measured (the offline
// reranker's are in lrank.MeasuredMarks); ok is false when they were not.
type Marked interface {
	Marks() (high, medium float64, ok bool)
}

// Reranker scores candidates against a question; scores are probabilities
// in 0..1, one per candidate, in order. See rerankers.go for the offline
// model and HTTP providers.
type Reranker interface {
	Name() string
	Rerank(ctx context.Context, question string, cands []retrieve.Candidate) ([]float64, error)
}

// Rewriter returns the query variants of a question, the question as
// written first; errKind names why only the question came back ("" when
// nothing failed). It never fails the call.
type Rewriter func(ctx context.Context, question string, layers []store.Layer) (variants []string, errKind string)

// Interaction is what is recorded of one answer.
type Interaction struct {
	Caller     string
	Tool       string
	Question   string
	Layers     []string
	Variants   []string
	ChunkIDs   []int64
	Status     string
	Confidence string

	// PassageChunks maps each returned passage id that has a chunk (S2)
	// to its chunk id; ExactPassages are the ids of the named-clause
	// passages (match "exact"), which have none. strata_feedback resolves
	// ratings by passage id with them.
	PassageChunks map[string]int64
	ExactPassages []string
}

// Recorder records interactions and returns their id.
type Recorder interface {
	RecordInteraction(ctx context.Context, in Interaction) (string, error)
}

// Documents reads what citations need about documents.
type Documents interface {
	Documents(ctx context.Context, ids []int64) (map[int64]store.DocInfo, error)
	// ChunksMatching returns the chunks of the documents that match any of
	// the case-insensitive patterns, by document then position.
	ChunksMatching(ctx context.Context, ids []int64, patterns []string, limit int) ([]store.Hit, error)
	// NameShares returns, for each name, the share of the layers'
	// passages that may hold it.
	NameShares(ctx context.Context, names []string, layerIDs []int64) ([]float64, error)
}

// Options configure an Asker. Engine and Docs are required.
type Options struct {
	Engine *retrieve.Engine
	Docs   Documents
	// Reranker is nil with RERANKING_ENABLED=false: fusion order is kept
	// and confidence is judged on similarity. NoReranker says why there is
	// none, for the detailed response (default: reranking is off).
	Reranker   Reranker
	NoReranker string
	// RerankHigh and RerankMedium are the reranker's marks (0: the
	// reranker's measured marks when it is Marked, else the defaults).
	RerankHigh, RerankMedium float64
	// Rewriter is nil without a rewrite provider: the question is searched
	// as written.
	Rewriter Rewriter
	// Recorder is nil with LEARNING_ENABLED=false: no interaction is
	// recorded and responses carry no interaction_id.
	Recorder Recorder
	// Affinities, when set (learning on), gives routing the layer
	// affinities the learning loop learned (see learned.go).
	Affinities Affinities
	// RawQueries (LEARNING_STORE_RAW_QUERIES) records questions as asked;
	// otherwise IBANs, BICs and account numbers are scrubbed first.
	RawQueries bool
	// Budget is ANSWER_TOKEN_BUDGET (0: DefaultBudget).
	Budget int
	Logger *slog.Logger
	// OnStage, when set, is called with the time each stage of an answer
	// took: "route", "rewrite", "search" (the variants' searches),
	// "merge", "rerank" and "pack" (everything after: exact clauses,
	// documents, budget, status, notes, recording). A routing fallback
	// searches, merges and reranks again and reports those stages again.
	OnStage func(stage string, d time.Duration)

	// Extractive answers (see extractive.go). Sentences scores sentences
	// with the reranking model, also with reranking off; SentencesError is
	// why it cannot load (an extractive call then fails). Left nil, it
	// follows Reranker. Embedder gives the offline sentence scorer its
	// cosine. Text reads the documents' text (nil: Docs when it can).
	// Receipts issues the answers' receipts (nil: none).
	Sentences      SentenceScorer
	SentencesError error
	Embedder       embed.Embedder
	Text           DocumentText
	Receipts       Receipts
}

// Asker answers strata_ask. It is safe for concurrent use.
type Asker struct {
	opt Options
	log *slog.Logger
}

// New returns an Asker.
func New(opt Options) *Asker {
	if opt.Budget <= 0 {
		opt.Budget = DefaultBudget
	}
	if opt.RerankHigh <= 0 {
		opt.RerankHigh, opt.RerankMedium = RerankHigh, RerankMedium
		// The reranker's own marks; with reranking off, the sentence
		// scorer's (its scores are judged on the same marks).
		var scorer any = opt.Reranker
		if opt.Reranker == nil {
			scorer = opt.Sentences
		}
		if m, ok := scorer.(Marked); ok {
			if h, med, ok := m.Marks(); ok {
				opt.RerankHigh, opt.RerankMedium = h, med
			}
		}
	}
	lg := opt.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	opt.extractiveDefaults(lg)
	return &Asker{opt: opt, log: lg}
}

// Marks are the status marks on the rerank basis in use.
func (a *Asker) Marks() (high, medium float64) { return a.opt.RerankHigh, a.opt.RerankMedium }

// stage reports the time since t0 to OnStage and returns now.
func (a *Asker) stage(name string, t0 time.Time) time.Time {
	now := time.Now()
	if a.opt.OnStage != nil {
		a.opt.OnStage(name, now.Sub(t0))
	}
	return now
}

// pass is one search of the question's variants over a set of layers,
// merged and reranked.
type pass struct {
	layers     []store.Layer
	first      *retrieve.Outcome // the question as written
	candidates []retrieve.Candidate
	rerank     []float64 // per candidate; nil without reranking
	rerankErr  error
	basis      string
	best       float64 // best score on the basis
	atMedium   int
	high, med  float64
	// placed says, after a fallback that kept the routed layers first
	// (routedFirst), why each of their candidates is where it is.
	placed map[int64]string
}

// Ask answers one question.
func (a *Asker) Ask(ctx context.Context, req Request) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	snap, err := a.opt.Engine.Snapshot(ctx)
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the data version")
	}
	all, err := snap.Layers(ctx)
	if err != nil {
		return nil, store.CallerError(ctx, err, "list the layers")
	}
	named, err := route.Named(all, req.Layers)
	if err != nil {
		return nil, err
	}
	layers, d := named, route.Decision{}
	if len(named) == 0 {
		if d, err = a.route(ctx, snap, req.Question, all); err != nil {
			return nil, err
		}
		layers = all
		if d.Routed {
			layers = d.Layers
		}
	}

	t0 = a.stage("route", t0)
	variants := []string{req.Question}
	if a.opt.Rewriter != nil {
		vs, kind := a.opt.Rewriter(ctx, req.Question, layers)
		if kind != "" {
			a.log.Warn("query_rewrite_"+kind, "question_chars", len(req.Question))
		}
		if len(vs) > 0 {
			variants = vs
		}
	}
	if len(variants) > MaxVariants {
		variants = variants[:MaxVariants]
	}
	a.stage("rewrite", t0)

	p, err := a.search(ctx, snap, req, variants, layers)
	if err != nil {
		return nil, err
	}
	var fallback *RoutingFallback
	routedLayers := map[string]bool{}
	if d.Routed {
		// A section the question names that the routed layers (or the
		// document it names) do not have is not looked for elsewhere:
		// another document's section of that number is not the answer.
		exactInRouted := len(p.first.Sections) > 0 || sectionMissing(p.first.Exact)
		reason := route.Fallback(route.Outcome{Found: len(p.candidates), Wanted: req.TopK,
			Low: p.best < p.med, Judged: p.basis != "" && (p.basis == "rerank" || p.first.SimilarityAvailable)})
		if reason != "" && !exactInRouted {
			for _, l := range d.Layers {
				routedLayers[l.Name] = true
			}
			wide, err := a.search(ctx, snap, req, variants, all)
			if err != nil {
				return nil, err
			}
			if reason == route.InsufficientResults && d.Strong() {
				// Too few results in layers chosen on firm evidence (a
				// layer smaller than top_k, say): they stay first, and the
				// search over every layer fills the rest, as strata_search
				// does.
				wide = a.routedFirst(p, wide, routedLayers)
			}
			p, layers = wide, all
			fallback = &RoutingFallback{Reason: string(reason), SearchedLayers: "all"}
		}
	}
	t0 = time.Now()
	resp, err := a.respond(ctx, req, variants, p, layers, fallback, routedLayers)
	if err == nil && req.ResponseFormat == FormatDetailed && d.Routed {
		resp.Routing = d.Why
	}
	a.stage("pack", t0)
	return resp, err
}

// rerankVariants scores each passage against the question and each of its
// rewrites and keeps the best: a rewrite in the documents' own words (a
// proven rewrite above all) is why the passage came back, and the question
// as the user wrote it may share none of its words.
//
// Each candidate is scored as its search of that variant would have seen
// it: the variant's unknown words and, in a contracts-preset layer, the
// clause words of the clause type the variant asks about.
func (a *Asker) rerankVariants(ctx context.Context, variants []string, outs []*retrieve.Outcome, layers []store.Layer, merged []retrieve.Candidate) ([]float64, error) {
	contracts := map[string]bool{}
	for _, l := range layers {
		contracts[l.Name] = l.Preset == "contracts"
	}
	var best []float64
	as := make([]retrieve.Candidate, len(merged))
	for vi, v := range variants {
		words := retrieve.ClauseWords(v)
		for i, c := range merged {
			c.Unknown, c.ClauseWords = outs[vi].UnknownShare(), ""
			if contracts[c.Layer] {
				c.ClauseWords = words
			}
			as[i] = c
		}
		scores, err := a.opt.Reranker.Rerank(ctx, v, as)
		if err == nil && len(scores) != len(merged) {
			err = fmt.Errorf("reranker %s returned %d scores for %d passages", a.opt.Reranker.Name(), len(scores), len(merged))
		}
		if err != nil {
			return nil, err
		}
		if best == nil {
			best = scores
			continue
		}
		for i, x := range scores {
			best[i] = max(best[i], x)
		}
	}
	return best, nil
}

// search runs one search per variant in parallel over the layers, merges
// them by rank and reranks the merged list.
func (a *Asker) search(ctx context.Context, snap *retrieve.Snapshot, req Request, variants []string, layers []store.Layer) (*pass, error) {
	outs := make([]*retrieve.Outcome, len(variants))
	errs := make([]error, len(variants))
	t0 := time.Now()
	var wg sync.WaitGroup
	for i, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = snap.Query(retrieve.Query{Text: v, TopK: req.TopK}).Search(ctx, layers)
		}()
	}
	wg.Wait()
	t0 = a.stage("search", t0)
	for _, err := range errs {
		if err != nil {
			var se *retrieve.StoreError
			if errors.As(err, &se) {
				return nil, store.CallerError(ctx, se.Err, se.Op)
			}
			return nil, err
		}
	}
	lists := make([][]retrieve.Candidate, len(outs))
	for i, o := range outs {
		lists[i] = o.Candidates
	}
	merged := lists[0]
	if len(lists) > 1 {
		merged = retrieve.Merge(outs[0].Params.RRFK, lists...)
	}
	if len(merged) > req.TopK {
		merged = merged[:req.TopK]
	}
	p := &pass{layers: layers, first: outs[0], candidates: merged}
	t0 = a.stage("merge", t0)
	if a.opt.Reranker != nil && len(merged) > 0 {
		scores, err := a.rerankVariants(ctx, variants, outs, layers, merged)
		if err != nil {
			p.rerankErr = err
			a.log.Warn("rerank_failed", "reranker", a.opt.Reranker.Name(), "err", err.Error())
		} else {
			idx := make([]int, len(merged))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(x, y int) bool { return scores[idx[x]] > scores[idx[y]] })
			cs, ss := make([]retrieve.Candidate, len(idx)), make([]float64, len(idx))
			for i, j := range idx {
				cs[i], ss[i] = merged[j], scores[j]
			}
			namedFirst(outs[0].Named, cs, ss)
			p.candidates, p.rerank = cs, ss
		}
	}
	a.stage("rerank", t0)
	a.judge(p)
	return p, nil
}

// routedFirst is a fallback's pass when a strongly routed search found
// too few: the routed layers' candidates first (those the search over every
// layer returned, in its order, then those only the routed search
// returned, in its order), then the other layers', as many as the longer
// of the two searches returned. Each candidate keeps the score its own
// search gave it; the status is judged on them as on any pass.
func (a *Asker) routedFirst(routed, wide *pass, routedLayers map[string]bool) *pass {
	scored := routed.rerank != nil && wide.rerank != nil
	out := &pass{layers: wide.layers, first: wide.first, rerankErr: wide.rerankErr, placed: map[int64]string{}}
	if wide.rerankErr == nil {
		out.rerankErr = routed.rerankErr
	}
	taken := map[int64]bool{}
	add := func(p *pass, i int) {
		out.candidates = append(out.candidates, p.candidates[i])
		if scored {
			out.rerank = append(out.rerank, p.rerank[i])
		}
		taken[p.candidates[i].ChunkID] = true
	}
	var rest []int
	for i, c := range wide.candidates {
		if routedLayers[c.Layer] {
			add(wide, i)
			out.placed[c.ChunkID] = "kept ahead of the other layers' results after the routing fallback"
		} else {
			rest = append(rest, i)
		}
	}
	for i, c := range routed.candidates {
		if !taken[c.ChunkID] {
			add(routed, i)
			out.placed[c.ChunkID] = "from the routed search, which the search over every layer did not return; kept ahead of the other layers' results"
		}
	}
	limit := max(len(wide.candidates), len(routed.candidates))
	for _, i := range rest {
		if len(out.candidates) >= limit {
			break
		}
		add(wide, i)
	}
	a.judge(out)
	return out
}

// basisNone is the basis when passages can be judged neither by a
// reranker nor by similarity.
const basisNone = "none"

// judge sets the pass's basis, marks and best score.
func (a *Asker) judge(p *pass) {
	if p.rerank != nil {
		p.basis, p.high, p.med = "rerank", a.opt.RerankHigh, a.opt.RerankMedium
		for _, s := range p.rerank {
			p.best = math.Max(p.best, s)
			if s >= p.med {
				p.atMedium++
			}
		}
		return
	}
	p.basis, p.high, p.med = "similarity", p.first.Params.ConfidenceHigh, p.first.Params.ConfidenceMedium
	if !p.first.SimilarityAvailable {
		// No reranker and no query vector: nothing to judge the passages
		// by (see respond).
		p.basis = basisNone
		return
	}
	for _, c := range p.candidates {
		p.best = math.Max(p.best, c.Similarity)
		if c.Similarity >= p.med {
			p.atMedium++
		}
	}
}

// respond builds the answer: exact sections first within their share of
// the budget, then the best passages that fit, their citations, status,
// notes and next step, and records the interaction.
func (a *Asker) respond(ctx context.Context, req Request, variants []string, p *pass, layers []store.Layer,
	fallback *RoutingFallback, routed map[string]bool) (*Response, error) {
	sections := p.first.Sections
	docIDs := map[int64]bool{}
	for _, s := range sections {
		docIDs[s.DocumentID] = true
	}
	// Drop candidates that repeat an exact section's text.
	var cands []retrieve.Candidate
	var scores []float64
	for i, c := range p.candidates {
		if repeatsSection(c, sections) {
			continue
		}
		cands = append(cands, c)
		if p.rerank != nil {
			scores = append(scores, p.rerank[i])
		}
		docIDs[c.DocumentID] = true
	}
	ids := make([]int64, 0, len(docIDs))
	for id := range docIDs {
		ids = append(ids, id)
	}
	docs := map[int64]store.DocInfo{}
	if len(ids) > 0 {
		var err error
		if docs, err = a.opt.Docs.Documents(ctx, ids); err != nil {
			return nil, store.CallerError(ctx, err, "read the documents' dates and labels")
		}
	}
	layerByName := map[string]store.Layer{}
	for _, l := range layers {
		layerByName[l.Name] = l
	}

	resp := &Response{Passages: []Passage{}}
	budgetChars := a.opt.Budget * CharsPerToken
	n := 0
	nextID := func() string { n++; return fmt.Sprintf("S%d", n) }

	// Named clauses first, sharing the budget in order.
	clauses := make([]Clause, len(sections))
	cites := make([]Citation, len(sections))
	for i, s := range sections {
		cites[i] = citation(s.Layer, s.File, s.Page, s.LineStart, s.LineEnd, s.ClausePath, docs[s.DocumentID])
		clauses[i] = Clause{Text: s.Text, Overhead: overhead(fmt.Sprintf("S%d", i+1), s.Ref(), cites[i])}
	}
	fits, usedChars := FitClauses(clauses, budgetChars)
	report := ClauseReport{References: p.first.Exact.LookedUp, Ignored: p.first.Exact.Skipped,
		LayersNamed: len(req.Layers) > 0, AtLeast: p.first.Exact.LimitHit}
	if p.first.Exact.Found > len(sections) {
		report.Unread = p.first.Exact.Found - len(sections)
	}
	for i, s := range sections {
		report.Clauses = append(report.Clauses, NamedClause{Label: s.Reference, File: s.File, Fit: fits[i]})
		if fits[i].LeftOut {
			continue
		}
		ref := schema.Ref{DocumentID: s.DocumentID, Start: s.Start, End: s.Start + len(fits[i].Text)}
		if !fits[i].Cut {
			ref.End = s.End
		}
		resp.Passages = append(resp.Passages, Passage{ID: nextID(), Ref: ref.String(), Text: fits[i].Text,
			Citation: cites[i], Match: "exact", Cut: fits[i].Cut || s.Cut,
			OutsideRouting: len(routed) > 0 && !routed[s.Layer]})
	}

	// Then the best passages that fit what is left.
	costs := make([]int, len(cands))
	ccites := make([]Citation, len(cands))
	for i, c := range cands {
		ccites[i] = citation(c.Layer, c.File, c.Page, c.LineStart, c.LineEnd, c.ClausePath, docs[c.DocumentID])
		costs[i] = Tokens(c.Text) + (overhead(fmt.Sprintf("S%d", n+i+1), c.Ref(), ccites[i])+CharsPerToken-1)/CharsPerToken
	}
	left := a.opt.Budget - (usedChars+CharsPerToken-1)/CharsPerToken
	keep, used := Pack(costs, left, MaxPassages-len(resp.Passages), len(resp.Passages) == 0)
	kept := map[int]string{}
	for _, i := range keep {
		c := cands[i]
		id := nextID()
		kept[i] = id
		resp.Passages = append(resp.Passages, Passage{ID: id, Ref: c.Ref(), Text: c.Text, Citation: ccites[i],
			OutsideRouting: len(routed) > 0 && !routed[c.Layer]})
	}

	mode := answerMode(req, resp.Passages, layers, layerByName)
	var namesChunk int64
	var namesNote string
	// room is the budget left, in characters, for the names passage;
	// giveWay drops the weakest packed passage to make room for it, never
	// the first passage nor one that stay says must stay, and reports
	// whether one gave way.
	room := func() int { return (left - used) * CharsPerToken }
	giveWay := func(stay func(i int) bool) func() bool {
		return func() bool {
			last := len(resp.Passages) - 1
			if len(keep) == 0 || last < 1 || stay(last) {
				return false
			}
			ci := keep[len(keep)-1]
			keep = keep[:len(keep)-1]
			delete(kept, ci)
			resp.Passages = resp.Passages[:last]
			used -= costs[ci]
			n--
			return true
		}
	}
	if mode == ModeGrounded && len(resp.Passages) > 0 {
		// The names passage: when the question names something (a
		// contract's parties) that no returned passage holds but their
		// documents do, the part of the document that holds it comes back
		// too, so the answer shows which document it is from.
		var order []int64
		returned := map[int64]bool{}
		for _, s := range sections {
			order = append(order, s.DocumentID)
		}
		for _, i := range keep {
			order = append(order, cands[i].DocumentID)
			returned[cands[i].ChunkID] = true
		}
		var err error
		namesChunk, namesNote, err = a.addNamesPassage(ctx, req.Question, resp, passageSources(resp.Passages), nil, order, returned, docs,
			room, giveWay(func(int) bool { return false }), nextID)
		if err != nil {
			return nil, err
		}
	}

	// Status: an exact section the question names is a found answer;
	// otherwise the best returned passage's score on the basis.
	var status Status
	best := 0.0
	switch {
	case report.Returned():
		status = Found
	case len(keep) == 0:
		status = NotFound
	case p.basis == basisNone:
		// Passages came back but nothing can say how well they match: not
		// found would hide them, found would claim too much.
		status = PartlyFound
		resp.Warning = "How well these passages answer the question could not be judged: there is no reranker and no query vector, so they are ranked by their words only. Read them before relying on them."
	default:
		for _, i := range keep {
			best = math.Max(best, scoreOf(p, cands, scores, i))
		}
		status = StatusFor(best, p.high, p.med)
	}
	var notes []string
	status, notes = report.Apply(status)
	notes = append(notes, p.first.Exact.MissingNotes...)

	if req.Mode == ModeGrounded && mode == ModeExtractive && len(resp.Passages) > 0 {
		notes = append(notes, "The answer stays extractive: a returned passage comes from a layer whose answer mode is extractive, which mode grounded cannot loosen.")
	}
	// Extractive: the status is judged on the sentences (extractive.go).
	var ex *extraction
	if mode == ModeExtractive && len(resp.Passages) > 0 {
		var err error
		if ex, err = a.extract(ctx, req.Question, resp.Passages, kept, cands, scores, report); err != nil {
			return nil, err
		}
		status, _ = report.Apply(ex.status)
		notes = append(notes, ex.notes...)
	}

	sources := passageSources(resp.Passages)
	if ex != nil {
		sources = ex.nameSources(resp.Passages)
		// The names passage of an extractive answer comes from the
		// documents of the chosen sentences, within what is left of the
		// budget; only a passage no chosen sentence comes from gives way
		// to it.
		order, returned := ex.documents(resp.Passages, kept, cands)
		var err error
		namesChunk, namesNote, err = a.addNamesPassage(ctx, req.Question, resp, sources, ex.namesHits, order, returned, docs,
			room, giveWay(ex.uses), nextID)
		if err != nil {
			return nil, err
		}
		if namesChunk != 0 {
			sources = append(sources, NameSource{Text: resp.Passages[len(resp.Passages)-1].Text, File: resp.Passages[len(resp.Passages)-1].Citation.File})
		}
	}
	names, err := a.distinctiveNames(ctx, Names(req.Question), layers)
	if err != nil {
		return nil, err
	}
	nc := CheckNames(status, names, sources, report.Returned(), mode == ModeGrounded)
	status = nc.Status
	if nc.Note != "" {
		notes = append(notes, nc.Note)
	}
	if sectionMissing(p.first.Exact) && !report.Returned() {
		// The question names a section that is not there (the notes say
		// what is): whatever the passages say, they are not it.
		status = NotFound
	}
	if namesNote != "" {
		notes = append(notes, namesNote)
	}
	if ex != nil {
		if err := a.finishExtractive(ctx, req, resp, ex, status); err != nil {
			return nil, err
		}
	}

	resp.Mode = mode
	resp.Notes = notes
	resp.NextStep = NextStep(status, layerNames(layers), len(req.Layers) > 0, len(req.Layers) > 0 || fallback == nil)
	confidence := "low"
	switch {
	case report.Returned():
		confidence = "high"
	case p.best >= p.high && p.atMedium >= 3:
		confidence = "high"
	case p.best >= p.med:
		confidence = "medium"
	}
	var degraded []string
	if a.opt.Reranker == nil {
		why := a.opt.NoReranker
		if why == "" {
			why = "reranking is off (RERANKING_ENABLED=false)"
		}
		degraded = append(degraded, why+": passages keep the fusion order and confidence is judged on similarity")
	} else if p.rerankErr != nil {
		degraded = append(degraded, fmt.Sprintf("the reranker %s failed (%v): passages keep the fusion order and confidence is judged on similarity", a.opt.Reranker.Name(), p.rerankErr))
	}
	if e := p.first.EmbedError; e != nil {
		degraded = append(degraded, e.Error()+": passages come from the lexical channel only")
	}
	if len(p.first.MissingVectors) > 0 {
		degraded = append(degraded, "layers without complete vectors, searched by their words only: "+strings.Join(p.first.MissingVectors, ", "))
	}
	if status == NotFound && len(resp.Passages) == 0 {
		resp.Warning = "Nothing in the searched layers matched the question."
	}

	if req.ResponseFormat == FormatDetailed {
		resp.Status, resp.AnswerStatus = "ok", string(status)
		resp.Confidence, resp.Basis = confidence, p.basis
		if confidence == "low" && resp.Warning == "" {
			// Low confidence carries a warning (the spec's Confidence
			// table), with passages or without.
			resp.Warning = fmt.Sprintf("Confidence is low: no passage reaches the medium mark (%s %.2f). The knowledge base probably does not cover this: try other terms or another layer.", p.basis, p.med)
		}
		resp.QueryVariants = variants
		resp.SearchedLayers = layerNames(layers)
		resp.RoutingFallback = fallback
		resp.Degraded = degraded
		top := 0.0
		for _, c := range cands {
			top = math.Max(top, c.Fused)
		}
		for i, c := range cands {
			rc := RetrievedChunk{ChunkID: c.ChunkID, Ref: c.Ref(), Layer: c.Layer, File: c.File,
				Similarity: round(c.Similarity), Passage: kept[i], Explain: explain(c)}
			if why := p.placed[c.ChunkID]; why != "" {
				rc.Explain += ", " + why
			}
			if top > 0 {
				rc.Score = round(c.Fused / top)
			}
			if scores != nil {
				s := round(scores[i])
				rc.RerankScore = &s
			}
			resp.RetrievedChunks = append(resp.RetrievedChunks, rc)
		}
		if req.sources() {
			for _, ps := range resp.Passages {
				ss := SourceScore{Passage: ps.ID, File: ps.Citation.File, Layer: ps.Citation.Layer}
				for i, id := range kept {
					if id == ps.ID {
						ss.RelevanceScore = round(scoreOf(p, cands, scores, i))
					}
				}
				if ps.Match == "exact" {
					ss.RelevanceScore = 1
				}
				resp.Sources = append(resp.Sources, ss)
			}
		}
	} else {
		resp.Status = string(status)
	}

	if a.opt.Recorder != nil {
		q, vs := req.Question, slices.Clone(variants)
		if !a.opt.RawQueries {
			q = scrub.Text(q)
			for i := range vs {
				vs[i] = scrub.Text(vs[i])
			}
		}
		in := Interaction{Caller: caller.From(ctx), Tool: "strata_ask", Question: q,
			Layers: layerNames(layers), Variants: vs, Status: string(status), Confidence: confidence}
		in.PassageChunks = map[string]int64{}
		for _, i := range keep {
			in.ChunkIDs = append(in.ChunkIDs, cands[i].ChunkID)
			in.PassageChunks[kept[i]] = cands[i].ChunkID
		}
		for _, ps := range resp.Passages {
			if ps.Match == MatchNames {
				in.ChunkIDs = append(in.ChunkIDs, namesChunk)
				in.PassageChunks[ps.ID] = namesChunk
			}
		}
		for _, ps := range resp.Passages {
			if ps.Match == "exact" {
				in.ExactPassages = append(in.ExactPassages, ps.ID)
			}
		}
		id, err := a.opt.Recorder.RecordInteraction(ctx, in)
		if err != nil {
			a.log.Warn("interaction_not_recorded", "err", err.Error())
		} else {
			resp.InteractionID = id
		}
	}
	return resp, nil
}

// passageSources are what the names check reads of passages: each one's
// text and file.
func passageSources(passages []Passage) []NameSource {
	out := make([]NameSource, len(passages))
	for i, ps := range passages {
		out[i] = NameSource{Text: ps.Text, File: ps.Citation.File}
	}
	return out
}

// answerMode is the answer's mode: extractive when a returned passage's
// layer answers extractively or the request asks for it; with no passage,
// the request's mode, else extractive when a searched layer is.
func answerMode(req Request, passages []Passage, layers []store.Layer, layerByName map[string]store.Layer) string {
	if req.Mode == ModeExtractive {
		return ModeExtractive
	}
	if len(passages) == 0 {
		if req.Mode != "" {
			return req.Mode
		}
		for _, l := range layers {
			if l.AnswerMode == ModeExtractive {
				return ModeExtractive
			}
		}
		return ModeGrounded
	}
	for _, ps := range passages {
		if layerByName[ps.Citation.Layer].AnswerMode == ModeExtractive {
			return ModeExtractive
		}
	}
	return ModeGrounded
}

// scoreOf is candidate i's score on the pass's basis.
func scoreOf(p *pass, cands []retrieve.Candidate, scores []float64, i int) float64 {
	if scores != nil {
		return scores[i]
	}
	return cands[i].Similarity
}

// repeatsSection reports whether a candidate's span is mostly the text of
// an exact section returned beside it: the same text twice.
func repeatsSection(c retrieve.Candidate, sections []retrieve.Section) bool {
	for _, s := range sections {
		if s.DocumentID != c.DocumentID {
			continue
		}
		lo, hi := max(c.Start, s.Start), min(c.End, s.End)
		if hi <= lo {
			continue
		}
		shorter := min(c.End-c.Start, s.End-s.Start)
		if shorter > 0 && 2*(hi-lo) >= shorter {
			return true
		}
	}
	return false
}

// citation builds a passage's citation; the archived label is worked out
// now from the layer's globs.
func citation(layer, file string, page *int, lineStart, lineEnd int, clausePath string, d store.DocInfo) Citation {
	c := Citation{File: file, Page: page, Lines: fmt.Sprintf("%d-%d", lineStart, lineEnd), ClausePath: clausePath,
		Layer: layer, Date: d.Date, DateSource: d.DateSource, ReplacedBy: d.ReplacedBy}
	for _, g := range d.ArchivedGlobs {
		if ok, err := doublestar.Match(g, file); err == nil && ok {
			c.Archived = true
			break
		}
	}
	return c
}

// overhead is what a passage's id, ref and citation cost, in characters.
func overhead(id, ref string, c Citation) int {
	b, _ := json.Marshal(c)
	return len(id) + len(ref) + len([]rune(string(b)))
}

func explain(c retrieve.Candidate) string {
	var parts []string
	if c.Lexical != nil {
		parts = append(parts, fmt.Sprintf("lexical rank %d", c.Lexical.Rank))
	}
	if c.Vector != nil {
		parts = append(parts, fmt.Sprintf("vector rank %d", c.Vector.Rank))
	}
	parts = append(parts, fmt.Sprintf("merged rank %d (%s)", c.FusedRank, c.Placement))
	return strings.Join(parts, ", ")
}

func layerNames(ls []store.Layer) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	sort.Strings(out)
	return out
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
