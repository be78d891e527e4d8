// Package retrieve is queryd's retrieval engine: for a question over a set
// of layers it returns typed candidates with their per-channel attribution.
// strata_search (package search) turns them into its response; strata_ask
// will search each query variant and merge the candidates (Merge).
//
// One search runs up to three channels: exact sections (the clauses and
// sections the query names, looked up in the structure map), a lexical
// channel (Okapi BM25 over PostgreSQL's english lexemes, with terms such as
// pacs.008 or PEP 8 matched as written) and a vector channel (pgvector HNSW
// over the layers' vectors of the configured embedding model). The lexical
// and vector rankings are merged by weighted reciprocal rank fusion, the
// best lexical matches keep Params.KeywordSlots places, and exact sections
// come first. Every tuning value is a field of Params, passed per call:
// there is no package-level state to tune.
package retrieve

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/queryd/internal/question"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Options configure an Engine.
type Options struct {
	// Embedder makes query vectors; nil runs the lexical channel only and
	// the outcome says why (EmbedError).
	Embedder embed.Embedder
	// EmbedderError, with no Embedder, is why the configured model could
	// not be loaded.
	EmbedderError error
	// KeywordSlots is HYBRID_KEYWORD_SLOTS, the default of
	// Params.KeywordSlots.
	KeywordSlots int
	// OnChannel, when set, is called with each channel's time ("lexical",
	// "vector"), and with the time the model took to embed a query that was
	// not in Vectors ("query_embedding", part of the vector channel's).
	OnChannel func(channel string, d time.Duration)
	// DocEvidenceEverywhere gives every layer's documents the lexical
	// channel's document evidence (Params.DocEvidenceEverywhere).
	// strata_ask's engine sets it: its reranker and marks were fitted and
	// chosen on lists made so, and without it its statuses on the answer
	// set fell (issue 31; docs/retrieval.md, "Document evidence").
	DocEvidenceEverywhere bool
	// Tune, when set, overrides parameters after the defaults and the
	// model's measured values (a benchmark comparing settings); a Query's
	// own Params bypass it.
	Tune func(*Params)
	// Thesaurus, when set, gives synonyms of the question's words for
	// Params.Synonyms.
	Thesaurus Thesaurus
	// Models, when set, returns the embedder that makes the vectors stored
	// under a model name. A search whose layers hold another model's
	// vectors than Embedder's (embedded before the default changed) embeds
	// its query with that model instead (see chooseModel).
	Models func(vectorName string) (embed.Embedder, error)
	// Vectors, when set, keeps recent query vectors (NewVectorCache); the
	// engines of one process share it.
	Vectors *VectorCache
}

// Engine runs searches over the read-only store. It is safe for
// concurrent use.
type Engine struct {
	store Corpus
	opt   Options
	memo  memo
	// byLayer is how a search over several layers runs its 1+N lexical
	// searches (a test and a benchmark compare the two).
	byLayer byLayerMode
}

// byLayerMode is how lexicalByLayer runs its searches.
type byLayerMode int

const (
	// byLayerOneStatement prepares them in one round trip and runs them as
	// one statement.
	byLayerOneStatement byLayerMode = iota
	// byLayerSeparate runs 1+N calls of Lexical concurrently.
	byLayerSeparate
)

// New returns an Engine over the corpus (a *store.Corpus).
func New(st Corpus, opt Options) *Engine {
	if opt.KeywordSlots < 0 {
		opt.KeywordSlots = 0
	}
	return &Engine{store: st, opt: opt}
}

// Model returns the embedding model's name, "" without one.
func (e *Engine) Model() string {
	if e.opt.Embedder == nil {
		return ""
	}
	return e.opt.Embedder.Model().Name
}

// Snapshot is one data version (store.Version): what every search reads and
// only an ingest changes (the layers, which layers have complete vectors,
// the model's parameters) is read once per version.
type Snapshot struct {
	e       *Engine
	mv      *memoVersion
	Version string
}

// Snapshot reads the data version.
func (e *Engine) Snapshot(ctx context.Context) (*Snapshot, error) {
	v, err := e.store.Version(ctx)
	if err != nil {
		return nil, err
	}
	return &Snapshot{e: e, mv: e.memo.at(v), Version: v}, nil
}

// Layers lists the layers at this version.
func (s *Snapshot) Layers(ctx context.Context) ([]store.Layer, error) {
	return s.mv.getLayers(ctx, s.e.store)
}

// LayerWords returns what routing by the layers' own words reads
// (route.DecideWith): a function that reads the statistics of the
// question's words in each of the layers when routing first asks, and
// reports false when they cannot be read, after passing the error to
// failed (nil: dropped).
func (s *Snapshot) LayerWords(ctx context.Context, question string, layers []store.Layer, failed func(error)) func() (store.LayerWords, bool) {
	return func() (store.LayerWords, bool) {
		w, err := s.e.store.LayerWords(ctx, question, store.LayerIDs(layers))
		if err != nil {
			if failed != nil {
				failed(err)
			}
			return w, false
		}
		return w, true
	}
}

// Query is one question.
type Query struct {
	Text   string
	TopK   int
	Filter map[string]string
	// Params, when set, are used as they are; nil takes DefaultParams with
	// the engine's keyword slots and the model's measured values.
	Params *Params
	// Parsed is Text parsed (question.Parse) by a caller that already has
	// it; nil: the run parses Text itself.
	Parsed *question.Question
}

// parsed returns the query's parsed text, parsing it once per run.
func (r *Run) parsed() *question.Question {
	r.parseOnce.Do(func() {
		r.pq = r.q.Parsed
		if r.pq == nil || r.pq.Text != r.q.Text {
			r.pq = question.Parse(r.q.Text)
		}
	})
	return r.pq
}

// Run is one query being searched: the query vector and the parameters
// are computed once and reused by every Search of the run (a routing
// fallback searches again over more layers).
type Run struct {
	e  *Engine
	mv *memoVersion // nil: read everything
	q  Query

	// vecMu and paramsMu let the channels' goroutines (and a routing
	// fallback's searches) ask for the vector and the parameters at once:
	// each is computed once, by whichever asks first.
	vecMu   sync.Mutex
	vecDone bool
	vec     []float32
	vecErr  *EmbedError

	paramsMu   sync.Mutex
	paramsDone bool
	params     Params
	paramsErr  error

	parseOnce sync.Once
	pq        *question.Question

	modelOnce sync.Once
	modelMu   sync.Mutex
	emb       embed.Embedder // the model chooseModel picked; nil: the configured one
}

// Query starts a run at this version.
func (s *Snapshot) Query(q Query) *Run { return &Run{e: s.e, mv: s.mv, q: q} }

// Query starts a run that reads everything afresh (no snapshot).
func (e *Engine) Query(q Query) *Run { return &Run{e: e, q: q} }

// EmbedKind says why the query has no vector.
type EmbedKind int

// Why a query has no vector.
const (
	NoModel    EmbedKind = iota + 1 // no embedding model is configured
	LoadFailed                      // the configured model failed to load
	Failed                          // the model returned an error
	NoVector                        // the model returned no vector
)

// EmbedError is why the vector channel could not embed the query.
type EmbedError struct {
	Kind  EmbedKind
	Model string
	Err   error // for LoadFailed and Failed
}

func (e *EmbedError) Error() string {
	switch e.Kind {
	case LoadFailed:
		return fmt.Sprintf("the embedding model failed to load: %v", e.Err)
	case Failed:
		return fmt.Sprintf("embedding model %s failed: %v", e.Model, e.Err)
	case NoVector:
		return fmt.Sprintf("embedding model %s returned no vector", e.Model)
	}
	return "no embedding model is configured"
}

func (e *EmbedError) Unwrap() error { return e.Err }

// QueryVector embeds the query once per run.
func (r *Run) QueryVector(ctx context.Context) ([]float32, *EmbedError) {
	r.vecMu.Lock()
	defer r.vecMu.Unlock()
	if r.vecDone {
		return r.vec, r.vecErr
	}
	r.vecDone = true
	m := r.embedder()
	if m == nil {
		if lerr := r.e.opt.EmbedderError; lerr != nil {
			r.vecErr = &EmbedError{Kind: LoadFailed, Err: lerr}
		} else {
			r.vecErr = &EmbedError{Kind: NoModel}
		}
		return nil, r.vecErr
	}
	key := vectorKey{model: m.Model().Name, encoder: r.queryEncoder(), text: r.q.Text}
	if v, ok := r.e.opt.Vectors.get(key); ok {
		r.vec = v
		return r.vec, nil
	}
	began := time.Now()
	vs, err := m.Embed(ctx, []string{r.q.Text})
	if on := r.e.opt.OnChannel; on != nil && err == nil {
		on("query_embedding", time.Since(began))
	}
	switch {
	case err != nil:
		r.vecErr = &EmbedError{Kind: Failed, Model: m.Model().Name, Err: err}
	case len(vs) != 1 || len(vs[0]) == 0:
		r.vecErr = &EmbedError{Kind: NoVector, Model: m.Model().Name}
	default:
		r.vec = vs[0]
		r.e.opt.Vectors.add(key, r.vec)
	}
	return r.vec, r.vecErr
}

// Params returns the run's parameters: Query.Params when set, else the
// defaults with the model's measured values and Options.Tune's overrides. A failure to read them is
// kept in ParamsError and the defaults are used.
func (r *Run) Params(ctx context.Context) Params {
	r.paramsMu.Lock()
	defer r.paramsMu.Unlock()
	if r.paramsDone {
		return r.params
	}
	r.paramsDone = true
	if r.q.Params != nil {
		r.params = *r.q.Params
		return r.params
	}
	r.params = DefaultParams()
	r.params.KeywordSlots = r.e.opt.KeywordSlots
	if model := r.modelName(); model != "" {
		p, ok, err := r.mv.getParams(ctx, r.e.store, model)
		if err != nil {
			r.paramsErr = err
		} else if ok {
			r.params = r.params.WithModel(p)
		}
	}
	r.params.DocEvidenceEverywhere = r.params.DocEvidenceEverywhere || r.e.opt.DocEvidenceEverywhere
	if r.e.opt.Tune != nil {
		r.e.opt.Tune(&r.params)
	}
	return r.params
}

// ParamsError is why the model's parameters could not be read (the
// defaults were used); nil when they were.
func (r *Run) ParamsError() error {
	r.paramsMu.Lock()
	defer r.paramsMu.Unlock()
	return r.paramsErr
}

// ChannelHit is a candidate's place in one channel's ranking, with the
// channel's raw score (BM25 score; cosine similarity).
type ChannelHit struct {
	Rank  int
	Score float64
}

// Placement says why a candidate sits where it is.
type Placement string

// The placements of candidates.
const (
	// PlacedByFusion: by its fused score.
	PlacedByFusion Placement = "fusion"
	// PlacedBySlot: one of the best lexical matches, kept although fusion
	// ranked it lower.
	PlacedBySlot Placement = "keyword_slot"
	// PlacedLexicalOnly: the vector channel did not run.
	PlacedLexicalOnly Placement = "lexical_only"
)

// Candidate is one passage found by the lexical or vector channel.
type Candidate struct {
	ChunkID    int64
	DocumentID int64
	Layer      string
	File       string
	Page       *int
	LineStart  int
	LineEnd    int
	Start, End int // the chunk's span in the document
	ClausePath string
	Text       string
	// Lexical and Vector are its place in each channel that found it.
	Lexical, Vector *ChannelHit
	// Similarity is the cosine similarity to the query vector (also for a
	// chunk the vector channel did not return); 0 without a query vector.
	Similarity float64
	// Fused is the weighted reciprocal-rank-fusion score, FusedRank the
	// place it earned by it.
	Fused     float64
	FusedRank int
	Placement Placement
	// ExactTerms are the query's exact terms the passage holds as written.
	ExactTerms []string
	// Unknown is the share of the query's words that no layer of the
	// knowledge base holds (Outcome.Unknown), the same for every candidate
	// of one query: a question about something no document mentions.
	Unknown float64
	// ClauseWords are, for a candidate from a layer of the contracts
	// preset, the drafting words of the clause type the query asks about
	// (ClauseWords; "" for none).
	ClauseWords string
}

// Ref is the candidate's span as a ref string.
func (c Candidate) Ref() string {
	return store.Hit{DocumentID: c.DocumentID, Start: c.Start, End: c.End, Text: c.Text}.Ref()
}

// LexicalPath says how the lexical channel chose the chunks it scored.
type LexicalPath struct {
	// Kind is "postings" (the impact-ordered postings) or "gin" (every GIN
	// match of the query's rarer words); "" when the channel did not run
	// that far.
	Kind string
	// PerTerm and Candidates are the postings path's bounds.
	PerTerm, Candidates int
	// FilterLeft, on the gin path after the postings, is how many of the
	// postings' candidates the metadata_filter left, fewer than Depth.
	FilterLeft, Depth int
	FellBack          bool
}

// Outcome is what one search over a set of layers found.
type Outcome struct {
	// Layers are the layers searched.
	Layers []store.Layer
	// Sections are the exact sections the query names, in the order of
	// the references; Exact says how the lookup went.
	Sections []Section
	Exact    ExactLookup
	// Candidates are the top_k passages of the channels, best first.
	Candidates []Candidate
	// LexicalRan and VectorRan say which channels ran; ExactTerms are the
	// exact terms the lexical channel looked for.
	LexicalRan, VectorRan bool
	ExactTerms            []string
	Lexical               LexicalPath
	// Model is the embedding model's name; Params the parameters used.
	Model  string
	Params Params
	// QueryEncoder names the export the query was embedded with when it
	// is not the model itself (its int8 export); "" otherwise.
	QueryEncoder string
	// SimilarityAvailable is true when the query had a vector and the
	// vector channel ran, so similarities mean something.
	SimilarityAvailable bool
	// JudgeSimilarities are the similarities of the first
	// ConfidenceWindow passages of the fused ranking (exact sections
	// apart), whatever top_k: what confidence is judged on.
	JudgeSimilarities []float64
	// EmbedError is why the query had no vector; MissingVectors the layers
	// searched by their words only, without complete vectors of Model.
	EmbedError     *EmbedError
	MissingVectors []string
	// Words are the query's word lexemes; Unknown those of them that no
	// layer of the knowledge base holds (not only the layers searched).
	Words, Unknown []string
	// Named are the documents of the searched layers the query names
	// (named.go); their best passage is first among Candidates. Absent
	// are the numbers it writes of a series the layers hold that no
	// document of theirs has.
	Named  []NamedDoc
	Absent []AbsentDoc
}

// UnknownShare is the share of the query's words no layer holds.
func (o *Outcome) UnknownShare() float64 {
	if len(o.Words) == 0 {
		return 0
	}
	return float64(len(o.Unknown)) / float64(len(o.Words))
}

// StoreError is a failed store call, naming what the search was doing.
type StoreError struct {
	Op  string // "look up the sections the query names", …
	Err error
}

func (e *StoreError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

func storeErr(op string, err error) error { return &StoreError{Op: op, Err: err} }

// Search runs the channels over the layers. Both channels start first,
// each on its own connection: the vector channel embeds the query (the
// longest step) and scans the HNSW index while the lexical channel runs,
// and meanwhile this goroutine looks up the documents and sections the
// query names, which only the merge needs.
func (r *Run) Search(ctx context.Context, layers []store.Layer) (*Outcome, error) {
	q := r.q
	st := r.e.store
	ids := store.LayerIDs(layers)
	r.chooseModel(ctx, ids)
	params := r.Params(ctx)
	depth := params.depth(q.TopK)
	out := &Outcome{Layers: layers, Model: r.modelName(), QueryEncoder: r.queryEncoder(), Params: params}

	vecDone := r.startVector(ctx, out.Model, layers, ids, depth, params)
	lexDone := r.startLexical(ctx, layers, ids, depth, params)
	nm, nmErr := r.lookUpNamed(ctx, ids, layers)
	lo, vo := <-lexDone, <-vecDone
	if nmErr != nil {
		return nil, nmErr
	}
	if lo.err != nil {
		return nil, storeErr("run the full-text search", lo.err)
	}
	if vo.err != nil {
		return nil, vo.err
	}
	named, exact, rest, lookup := nm.named, nm.exact, nm.rest, nm.lookup
	out.Named, out.Absent = nm.named, nm.absent
	lex := lo.lex
	if lo.ran {
		out.LexicalRan = true
		out.ExactTerms, out.Lexical, out.Words, out.Unknown = lex.Terms, lex.Path, lex.Words, lo.unknown
	}
	out.EmbedError, out.MissingVectors = vo.embErr, vo.missing
	vec, qv := vo.hits, vo.qv
	out.VectorRan = vo.ran
	out.SimilarityAvailable = qv != nil && vo.ran

	cands := fuse(lex.Hits, vec, lex.Terms, params, contractLayers(layers))
	cands = dropOverlappingExact(ctx, st, cands, exact)
	window := judgeWindow(cands)
	top := applyKeywordSlots(cands, lex.Hits, max(q.TopK-len(exact), 0), params.KeywordSlots, vo.ran)
	want := make([]int64, len(top))
	for i, c := range top {
		want[i] = c.ChunkID
	}
	hits, err := st.Chunks(ctx, want)
	if err != nil {
		return nil, storeErr("read the passages found", err)
	}
	top, namedSims, err := r.promoteNamed(ctx, top, hits, qv, out.Model, named, max(q.TopK-len(exact), 0))
	if err != nil {
		return nil, storeErr("search the documents the query names", err)
	}
	sims, err := r.similarities(ctx, out.Model, qv, vec, namedSims, slices.Concat(window, top), exact)
	if err != nil {
		return nil, err
	}
	out.Sections = exact
	for _, c := range window {
		out.JudgeSimilarities = append(out.JudgeSimilarities, sims[c.ChunkID])
	}
	out.Candidates = candidatesOf(top, hits, sims, layers, q.Text, out.UnknownShare())
	lookup.NotReturned = notReturned(rest, out.Candidates)
	out.Exact = lookup
	return out, nil
}

// similarities returns the query's cosine to each chunk of need: the
// vector channel's and the named documents' where they have one, else
// read; and sets each exact section's similarity over its whole span.
// Without a query vector there are none.
func (r *Run) similarities(ctx context.Context, model string, qv []float32, vec []store.VecHit, named map[int64]float64,
	need []*Candidate, exact []Section) (map[int64]float64, error) {
	sims := map[int64]float64{}
	for _, v := range vec {
		sims[v.ChunkID] = v.Similarity
	}
	for id, v := range named {
		sims[id] = v
	}
	if qv == nil {
		return sims, nil
	}
	st := r.e.store
	var ids []int64
	for _, c := range need {
		if _, ok := sims[c.ChunkID]; !ok && !slices.Contains(ids, c.ChunkID) {
			ids = append(ids, c.ChunkID)
		}
	}
	more, err := st.Similarities(ctx, model, qv, ids)
	if err != nil {
		return nil, storeErr("compute similarities", err)
	}
	for id, v := range more {
		sims[id] = v
	}
	for i := range exact {
		if exact[i].DocumentID == 0 {
			continue
		}
		v, err := st.SpanSimilarity(ctx, model, qv, exact[i].DocumentID, exact[i].SectionStart, exact[i].SectionEnd)
		if err != nil {
			return nil, storeErr("compute similarities", err)
		}
		exact[i].Similarity = v
	}
	return sims, nil
}

// candidatesOf fills the chosen candidates from the passages read (hits)
// and their similarities, in order; a chunk deleted since the channels
// ran is left out. A contract layer's candidates carry the query's clause
// words.
func candidatesOf(top []*Candidate, hits map[int64]store.Hit, sims map[int64]float64, layers []store.Layer,
	query string, unknown float64) []Candidate {
	contractLayer := map[string]bool{}
	for _, l := range layers {
		contractLayer[l.Name] = l.Preset == "contracts"
	}
	clauseWords := ""
	if anyContracts(layers) {
		clauseWords = ClauseWords(query)
	}
	out := make([]Candidate, 0, len(top))
	for _, c := range top {
		h, ok := hits[c.ChunkID]
		if !ok {
			continue
		}
		c.DocumentID, c.Layer, c.File, c.Page = h.DocumentID, h.Layer, h.File, h.Page
		c.LineStart, c.LineEnd, c.Start, c.End = h.LineStart, h.LineEnd, h.Start, h.End
		c.ClausePath, c.Text = h.ClausePath, h.Text
		c.Similarity = sims[c.ChunkID]
		c.Unknown = unknown
		if contractLayer[c.Layer] {
			c.ClauseWords = clauseWords
		}
		out = append(out, *c)
	}
	return out
}

// namedLookup is what Search reads of the documents and sections the
// query names: the documents, those of a series the layers lack, the
// exact sections (at most the lookup's limit; rest the others) and the
// lookup's report.
type namedLookup struct {
	named  []NamedDoc
	absent []AbsentDoc
	exact  []Section
	rest   []Section
	lookup ExactLookup
}

// lookUpNamed finds the documents and sections the query names. Exact
// sections come first but never push the result count over top_k; the
// rest are counted in the note unless their text comes back as an
// ordinary result.
func (r *Run) lookUpNamed(ctx context.Context, ids []int64, layers []store.Layer) (namedLookup, error) {
	var n namedLookup
	var err error
	st := r.e.store
	if n.named, err = NamedDocuments(ctx, st, r.parsed(), layers); err != nil {
		return n, storeErr("find the documents the query names", err)
	}
	numbers := func(ctx context.Context) (store.NumberKeys, error) { return r.mv.getNumberKeys(ctx, st, ids) }
	if n.absent, err = AbsentDocuments(ctx, numbers, r.parsed(), n.named); err != nil {
		return n, storeErr("read the document series of the layers", err)
	}
	if n.exact, n.lookup, err = r.exactSections(ctx, ids, n.named); err != nil {
		return n, storeErr("look up the sections the query names", err)
	}
	if n.lookup.MissingNotes, n.lookup.MissingDecided, err = r.missingNotes(ctx, n.lookup.Missing, n.lookup.missingKinds, n.named, layers); err != nil {
		return n, storeErr("read the named documents' sections", err)
	}
	if len(n.exact) > n.lookup.Limit {
		n.exact, n.rest = n.exact[:n.lookup.Limit], n.exact[n.lookup.Limit:]
	}
	return n, nil
}

// vecOut is the vector channel's result.
type vecOut struct {
	hits    []store.VecHit
	qv      []float32
	ran     bool
	embErr  *EmbedError
	missing []string
	err     error
}

// startVector runs the vector channel in its own goroutine: the query's
// vector, the layers that have vectors of the model, the HNSW scan.
func (r *Run) startVector(ctx context.Context, model string, layers []store.Layer, ids []int64, depth int, params Params) <-chan vecOut {
	done := make(chan vecOut, 1)
	go func() {
		var o vecOut
		began := time.Now()
		defer func() {
			if o.ran && r.e.opt.OnChannel != nil {
				r.e.opt.OnChannel("vector", time.Since(began))
			}
			done <- o
		}()
		if params.NoVector {
			return
		}
		qv, eerr := r.QueryVector(ctx)
		if eerr != nil {
			o.embErr = eerr
			return
		}
		o.qv = qv
		complete, err := r.mv.getComplete(ctx, r.e.store, model, ids)
		if err != nil {
			o.err = storeErr("read which layers have vectors", err)
			return
		}
		o.missing = missingLayers(layers, complete)
		if len(complete) == 0 {
			return
		}
		hits, err := r.e.store.SearchVectors(ctx, store.VectorQuery{Model: model, Dims: len(qv), Vector: qv,
			LayerIDs: complete, Filter: r.q.Filter, Limit: depth, EFSearch: params.EFSearch})
		if err != nil {
			o.err = storeErr("run the vector search", err)
			return
		}
		o.hits, o.ran = aboveFloor(hits, params.MinSimilarity), true
	}()
	return done
}

// lexOut is the lexical channel's result.
type lexOut struct {
	lex     Lexical
	ran     bool
	unknown []string
	err     error
}

// startLexical runs the lexical channel in its own goroutine, then reads
// which of the query's unseen words no layer holds.
func (r *Run) startLexical(ctx context.Context, layers []store.Layer, ids []int64, depth int, params Params) <-chan lexOut {
	done := make(chan lexOut, 1)
	go func() {
		var o lexOut
		defer func() { done <- o }()
		if params.NoLexical {
			return
		}
		began := time.Now()
		if len(layers) > 1 && params.LexicalByLayer {
			o.lex, o.err = r.lexicalByLayer(ctx, layers, ids, depth)
		} else {
			o.lex, o.err = r.Lexical(ctx, ids, depth, anyContracts(layers))
		}
		o.ran = true
		if o.err != nil {
			return
		}
		if r.e.opt.OnChannel != nil {
			r.e.opt.OnChannel("lexical", time.Since(began))
		}
		o.unknown, o.err = r.unknownWords(ctx, o.lex.Unseen, ids)
	}()
	return done
}

// unknownWords are those of the lexemes unseen in the searched layers
// that no other layer holds either.
func (r *Run) unknownWords(ctx context.Context, unseen []string, searched []int64) ([]string, error) {
	if len(unseen) == 0 {
		return nil, nil
	}
	var all []store.Layer
	var err error
	if r.mv != nil {
		all, err = r.mv.getLayers(ctx, r.e.store)
	} else {
		all, err = r.e.store.Layers(ctx)
	}
	if err != nil {
		return nil, err
	}
	others := make([]int64, 0, len(all))
	for _, l := range all {
		if !slices.Contains(searched, l.ID) {
			others = append(others, l.ID)
		}
	}
	if len(others) == 0 {
		return unseen, nil
	}
	dfs, err := r.e.store.LexemesDF(ctx, unseen, others)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range unseen {
		if dfs[l] == 0 {
			out = append(out, l)
		}
	}
	return out, nil
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

// anyContracts reports whether a layer was added with the contracts
// preset: its questions get the clause words (clausewords.go).
func anyContracts(layers []store.Layer) bool {
	for _, l := range layers {
		if l.Preset == "contracts" {
			return true
		}
	}
	return false
}

// contractLayers are the ids of the layers with the contracts preset.
func contractLayers(layers []store.Layer) map[int64]bool {
	out := map[int64]bool{}
	for _, l := range layers {
		if l.Preset == "contracts" {
			out[l.ID] = true
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
