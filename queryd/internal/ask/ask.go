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
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/store"
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
	// NamesTogether reports whether some document of the layers holds
	// every one of the words.
	NamesTogether(ctx context.Context, layerIDs []int64, words []string) (bool, error)
	// TablesOf returns the layers' table documents with their headers.
	TablesOf(ctx context.Context, layerIDs []int64, limit int) ([]store.TableDoc, error)
	// ChunksHoldingAll returns the chunks of the documents that hold
	// every word.
	ChunksHoldingAll(ctx context.Context, ids []int64, words []string, limit int) ([]store.Hit, error)
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
	rerank     []float64 // per candidate, vs the question as asked (rerankVariants); nil without reranking
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
	q := parseAsked(req.Question)
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
		if d, err = a.route(ctx, snap, q, all); err != nil {
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

	p, err := a.search(ctx, snap, req, q, variants, layers)
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
			wide, err := a.search(ctx, snap, req, q, variants, all)
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
	resp, err := a.respond(ctx, req, q, variants, p, layers, fallback, routedLayers)
	if err == nil && req.ResponseFormat == FormatDetailed && d.Routed {
		resp.Routing = d.Why
	}
	a.stage("pack", t0)
	return resp, err
}

// rerankVariants scores each passage against the question and each of its
// rewrites. own is each passage's score against the question as asked
// (variants[0]): the score the status, the confidence and the detailed
// response's rerank_score and relevance_score show, so a variant never
// lifts a passage above what the question itself earns (issue 27, item 2:
// an unrelated follow-up learned as a rewrite scored its own document 0.90
// and made a not_found found). order is the best score over every variant:
// a rewrite in the documents' own words (a proven rewrite above all) may
// bring a passage back and put it first, since the question as the user
// wrote it may share none of its words, but it orders only.
//
// Each candidate is scored as its search of that variant would have seen
// it: the variant's unknown words and, in a contracts-preset layer, the
// clause words of the clause type the variant asks about.
func (a *Asker) rerankVariants(ctx context.Context, variants []string, outs []*retrieve.Outcome, layers []store.Layer, merged []retrieve.Candidate) (own, order []float64, err error) {
	contracts := map[string]bool{}
	for _, l := range layers {
		contracts[l.Name] = l.Preset == "contracts"
	}
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
			return nil, nil, err
		}
		if own == nil {
			own, order = scores, slices.Clone(scores)
			continue
		}
		for i, x := range scores {
			order[i] = max(order[i], x)
		}
	}
	return own, order, nil
}

// search runs one search per variant in parallel over the layers, merges
// them by rank and reranks the merged list.
func (a *Asker) search(ctx context.Context, snap *retrieve.Snapshot, req Request, q *asked, variants []string, layers []store.Layer) (*pass, error) {
	outs := make([]*retrieve.Outcome, len(variants))
	errs := make([]error, len(variants))
	t0 := time.Now()
	var wg sync.WaitGroup
	for i, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rq := retrieve.Query{Text: v, TopK: req.TopK}
			if v == q.Text {
				rq.Parsed = q.Question
			}
			outs[i], errs[i] = snap.Query(rq).Search(ctx, layers)
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
		scores, order, err := a.rerankVariants(ctx, variants, outs, layers, merged)
		if err != nil {
			p.rerankErr = err
			a.log.Warn("rerank_failed", "reranker", a.opt.Reranker.Name(), "err", err.Error())
		} else {
			idx := make([]int, len(merged))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(x, y int) bool { return order[idx[x]] > order[idx[y]] })
			cs, ss := make([]retrieve.Candidate, len(idx)), make([]float64, len(idx))
			for i, j := range idx {
				cs[i], ss[i] = merged[j], scores[j]
			}
			namedFirst(outs[0].Named, cs, ss)
			p.candidates, p.rerank = cs, ss
		}
	}
	if a.opt.Reranker != nil && len(merged) == 0 {
		// Nothing to rerank (an answer of named clauses alone): the scale
		// is still the reranker's, and the basis says so (issue 27, item
		// 13), not similarity.
		p.rerank = []float64{}
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

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
