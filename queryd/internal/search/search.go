// Package search is strata_search: its arguments and their checks, the
// result cache, and the response built from the retrieval engine's
// candidates (package retrieve) and the routing decision (package route):
// rounded scores, confidence, notes, degraded reasons and explain.
// docs/architecture.md shows where it sits in queryd.
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Limits of strata_search's arguments.
const (
	DefaultTopK = 5
	MaxTopK     = 50
	MaxQuery    = 2000 // characters

	// MaxFilterKeys bounds metadata_filter; MaxFilterKey and
	// MaxFilterValue bound its keys and values, in characters (as JSON
	// schema's maxLength counts).
	MaxFilterKeys  = 20
	MaxFilterKey   = 200
	MaxFilterValue = 1000
	// DefaultKeywordSlots is HYBRID_KEYWORD_SLOTS's default.
	DefaultKeywordSlots = 1
)

// Request is strata_search's arguments.
type Request struct {
	Query          string            `json:"query"`
	Layers         []string          `json:"layers,omitempty"`
	TopK           int               `json:"top_k,omitempty"`
	MetadataFilter map[string]string `json:"metadata_filter,omitempty"`
	Explain        bool              `json:"explain,omitempty"`
}

// Result is one passage found.
type Result struct {
	ChunkID    int64   `json:"chunk_id,omitempty"`
	Ref        string  `json:"ref"`
	Layer      string  `json:"layer"`
	File       string  `json:"file"`
	Page       *int    `json:"page"`
	Lines      string  `json:"lines"`
	ClausePath string  `json:"clause_path"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`
	Similarity float64 `json:"similarity"`
	// Match is "exact" for a section the query names.
	Match string `json:"match,omitempty"`
	// Cut is true when an exact section's text was shortened.
	Cut bool `json:"cut,omitempty"`
	// OutsideRouting marks a result of a routing fallback from a layer that
	// routing had not chosen.
	OutsideRouting bool `json:"outside_routing,omitempty"`
	// Explain says how the result was found and placed (explain: true).
	Explain *ResultExplain `json:"explain,omitempty"`
}

// ChannelHit is a result's place in one channel's ranking.
type ChannelHit struct {
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// ResultExplain is one result's attribution.
type ResultExplain struct {
	// Lexical and Vector are the result's rank and score in each channel
	// that found it (BM25 score; cosine similarity).
	Lexical *ChannelHit `json:"lexical,omitempty"`
	Vector  *ChannelHit `json:"vector,omitempty"`
	// Fused is the weighted reciprocal-rank-fusion score, FusedRank the
	// place it earned by that score.
	Fused     float64 `json:"fused"`
	FusedRank int     `json:"fused_rank,omitempty"`
	// Placement says why the result sits where it is: "exact_match",
	// "fusion", "keyword_slot" or "lexical_only".
	Placement string `json:"placement"`
	// Reason is the placement in words.
	Reason string `json:"reason"`
	// ExactTerms are the query's terms the passage holds as written.
	ExactTerms []string `json:"exact_terms,omitempty"`
}

// RoutingFallback says that a routed search was run again over all layers.
type RoutingFallback struct {
	Reason         string `json:"reason"` // insufficient_results or low_confidence
	SearchedLayers string `json:"searched_layers"`
}

// Explain is the search-wide part of explain: true.
type Explain struct {
	Channels []string `json:"channels"`
	Model    string   `json:"model,omitempty"`
	// QueryEncoder names the export the query was embedded with when it
	// is not the model itself: its int8 export, whose vectors match the
	// model's (docs/embeddings.md).
	QueryEncoder  string   `json:"query_encoder,omitempty"`
	RRFK          int      `json:"rrf_k,omitempty"`
	LexicalWeight float64  `json:"lexical_weight,omitempty"`
	VectorWeight  float64  `json:"vector_weight,omitempty"`
	KeywordSlots  int      `json:"keyword_slots"`
	EFSearch      int      `json:"ef_search,omitempty"`
	MinSimilarity float64  `json:"min_similarity,omitempty"`
	ExactTerms    []string `json:"exact_terms,omitempty"`
	// LexicalCandidates says how the lexical channel chose the chunks it
	// scored: from the impact-ordered postings, or every GIN match (with a
	// metadata_filter).
	LexicalCandidates string   `json:"lexical_candidates,omitempty"`
	RoutedLayers      []string `json:"routed_layers,omitempty"`
	// Routing says what chose each routed layer: a pattern, or its
	// description (with the words it shares with the query).
	Routing    []route.Why `json:"routing,omitempty"`
	References []string    `json:"references,omitempty"`
	Cached     bool        `json:"cached"`
	TookMS     float64     `json:"took_ms"`
}

// Response is strata_search's answer.
type Response struct {
	Status         string   `json:"status"`
	Query          string   `json:"query"`
	SearchedLayers []string `json:"searched_layers"`
	Results        []Result `json:"results"`
	// Confidence is high, medium or low, judged on Basis.
	Confidence string `json:"confidence"`
	Basis      string `json:"basis"`
	// Evidence says what, besides similarity, raised the level:
	// exact_section, phrase, code, named_document; absent when
	// similarity alone set it (evidence.go).
	Evidence []string `json:"evidence,omitempty"`
	// Warning comes with low confidence.
	Warning string `json:"warning,omitempty"`
	// Note says what is missing: exact sections not returned, references not
	// looked up, fewer results than top_k under a filter.
	Note            string           `json:"note,omitempty"`
	RoutingFallback *RoutingFallback `json:"routing_fallback,omitempty"`
	// Degraded is true when a channel could not run (no embedding model, a
	// model failure, layers without vectors); DegradedReason says which.
	Degraded       bool     `json:"degraded,omitempty"`
	DegradedReason string   `json:"degraded_reason,omitempty"`
	Explain        *Explain `json:"explain,omitempty"`
	// InteractionID identifies this search in the ledger (for
	// strata_feedback); absent with learning off.
	InteractionID string `json:"interaction_id,omitempty"`
}

// Recorder records a search as an interaction; *store.Ledger is one.
type Recorder interface {
	RecordInteraction(ctx context.Context, in store.Interaction) (int64, error)
}

// Options configure a Searcher.
type Options struct {
	// Embedder makes query vectors; nil searches the lexical channel only
	// and says so (degraded).
	Embedder embed.Embedder
	// EmbedderError, with no Embedder, is why the configured model could not
	// be loaded: the degraded reason says so (redacted) instead of "no
	// embedding model is configured".
	EmbedderError error
	// Models, when set, returns the embedder of the vectors stored under a
	// model name (retrieve.Options.Models).
	Models func(vectorName string) (embed.Embedder, error)
	// KeywordSlots is HYBRID_KEYWORD_SLOTS: how many of the best lexical
	// matches keep a place in the results (0 turns it off).
	KeywordSlots int
	// CacheEntries bounds the result cache (0 turns it off).
	CacheEntries int
	// Vectors, when set, keeps recent query vectors, shared with the
	// process's other engines (retrieve.Options.Vectors).
	Vectors *retrieve.VectorCache
	// Logger may be nil.
	Logger *slog.Logger
	// OnCacheHit, when set, is called for each search answered from the
	// cache; OnChannel with each channel's time ("lexical", "vector").
	// queryd feeds its Prometheus metrics from them.
	OnCacheHit func()
	OnChannel  func(channel string, d time.Duration)
	// Tune, when set, overrides the retrieval parameters after the defaults
	// and the model's measured values (benchmarks comparing settings).
	Tune func(*retrieve.Params)
	// Thesaurus, when set, gives synonyms for retrieve.Params.Synonyms.
	Thesaurus retrieve.Thesaurus
	// Recorder, when set (LEARNING_ENABLED), records every search, cached
	// ones too; RawQueries (LEARNING_STORE_RAW_QUERIES) keeps the query
	// unscrubbed.
	Recorder   Recorder
	RawQueries bool
	// Affinities, when set (learning on), gives routing the layer
	// affinities the learning loop learned; *store.Corpus is one.
	Affinities Affinities
}

// Affinities reads learned layer affinities for a question's terms.
type Affinities interface {
	LayerAffinities(ctx context.Context, terms []string) ([]store.LayerAffinity, error)
}

// DefaultOptions returns the defaults: no embedder, one keyword slot, a
// cache of 512 searches.
func DefaultOptions() Options {
	return Options{KeywordSlots: DefaultKeywordSlots, CacheEntries: 512}
}

// KeywordSlotsFromEnv reads HYBRID_KEYWORD_SLOTS (default 1, 0 turns the
// slots off); the error names the variable.
func KeywordSlotsFromEnv(getenv func(string) string) (int, error) {
	return config.Int(getenv, "HYBRID_KEYWORD_SLOTS", DefaultKeywordSlots, 0, MaxTopK)
}

// Searcher answers strata_search. It is safe for concurrent use.
type Searcher struct {
	engine *retrieve.Engine
	opt    Options
	cache  *cache
	logger *slog.Logger
}

// New returns a Searcher over the corpus (a *store.Corpus) with the default
// options: the lexical channel only (no embedder), which its responses
// report as degraded.
func New(st retrieve.Corpus) *Searcher { return NewWithOptions(st, DefaultOptions()) }

// NewWithOptions returns a Searcher over the corpus (a *store.Corpus).
func NewWithOptions(st retrieve.Corpus, opt Options) *Searcher {
	if opt.KeywordSlots < 0 {
		opt.KeywordSlots = 0
	}
	lg := opt.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	eng := retrieve.New(st, retrieve.Options{Embedder: opt.Embedder, EmbedderError: opt.EmbedderError, Models: opt.Models,
		KeywordSlots: opt.KeywordSlots, OnChannel: opt.OnChannel, Tune: opt.Tune, Thesaurus: opt.Thesaurus, Vectors: opt.Vectors})
	return &Searcher{engine: eng, opt: opt, cache: newCache(opt.CacheEntries), logger: lg}
}

// Validate checks and normalises the arguments; errors name the argument.
// Every string must be UTF-8 without NUL bytes, which PostgreSQL cannot take
// as text. Layers are trimmed and repeats dropped (first mention kept), so
// that ["a","a"] and ["a"] are the same search.
func (r *Request) Validate() error {
	if err := qerr.CheckText("query", "", r.Query); err != nil {
		return err
	}
	r.Query = strings.TrimSpace(r.Query)
	if r.Query == "" {
		return qerr.Invalidf("query", "must not be empty")
	}
	if len([]rune(r.Query)) > MaxQuery {
		return qerr.Invalidf("query", "is longer than %d characters", MaxQuery)
	}
	if r.TopK == 0 {
		r.TopK = DefaultTopK
	}
	if r.TopK < 1 || r.TopK > MaxTopK {
		return qerr.Invalidf("top_k", "must be from 1 to %d, got %d", MaxTopK, r.TopK)
	}
	var layers []string
	for i, l := range r.Layers {
		if err := qerr.CheckText("layers", fmt.Sprintf("entry %d", i), l); err != nil {
			return err
		}
		if strings.TrimSpace(l) == "" {
			return qerr.Invalidf("layers", "entry %d is empty", i)
		}
		if l = strings.TrimSpace(l); !slices.Contains(layers, l) {
			layers = append(layers, l)
		}
	}
	if r.Layers != nil {
		r.Layers = layers
	}
	if len(r.MetadataFilter) > MaxFilterKeys {
		return qerr.Invalidf("metadata_filter", "has %d keys, at most %d are allowed", len(r.MetadataFilter), MaxFilterKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(r.MetadataFilter)) {
		v := r.MetadataFilter[k]
		if err := qerr.CheckText("metadata_filter", "a key", k); err != nil {
			return err
		}
		if err := qerr.CheckText("metadata_filter", fmt.Sprintf("the value of %q", qerr.Clip(k)), v); err != nil {
			return err
		}
		if strings.TrimSpace(k) == "" {
			return qerr.Invalidf("metadata_filter", "has an empty key")
		}
		if utf8.RuneCountInString(k) > MaxFilterKey || utf8.RuneCountInString(v) > MaxFilterValue {
			return qerr.Invalidf("metadata_filter", "key %q or its value is too long (keys up to %d characters, values up to %d)", qerr.Clip(k), MaxFilterKey, MaxFilterValue)
		}
		if k == "page" || k == "total_pages" {
			if n, err := strconv.Atoi(v); err != nil || n < 1 || strconv.Itoa(n) != v {
				return qerr.Invalidf("metadata_filter", "%s must be a page number written as a string of digits such as \"3\", got %q", k, qerr.Clip(v))
			}
		}
	}
	return nil
}

// Search runs one search.
func (s *Searcher) Search(ctx context.Context, req Request) (*Response, error) {
	began := time.Now()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	snap, err := s.engine.Snapshot(ctx)
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the data version")
	}
	version := snap.Version
	layers, err := snap.Layers(ctx)
	if err != nil {
		return nil, store.CallerError(ctx, err, "list the layers")
	}
	named, err := route.Named(layers, req.Layers)
	if err != nil {
		return nil, err
	}

	key := cacheKey(req)
	var learned []store.LayerAffinity
	if len(named) == 0 {
		// What was learned is no part of the data version: a layer
		// affinity routes to is part of the key instead.
		learned = s.affinities(ctx, req.Query)
		if w, ok := route.Affinity(req.Query, layers, learned); ok {
			key += "\x00affinity:" + w.Layer
		}
	}
	if resp, ok := s.cache.get(key, version); ok {
		if s.opt.OnCacheHit != nil {
			s.opt.OnCacheHit()
		}
		if resp.Explain != nil {
			resp.Explain.Cached = true
			resp.Explain.TookMS = ms(time.Since(began))
		}
		s.record(ctx, req, resp)
		return resp, nil
	}

	st := &state{s: s, req: req, learned: learned,
		q: snap.Query(retrieve.Query{Text: req.Query, TopK: req.TopK, Filter: req.MetadataFilter})}
	st.words = snap.LayerWords(ctx, req.Query, layers, func(err error) {
		s.logger.Warn("layer_words_unavailable", "err", err.Error())
	})
	var resp *Response
	switch {
	case len(named) > 0:
		resp, err = st.run(ctx, named, nil)
	default:
		resp, err = st.routed(ctx, layers)
	}
	if err != nil {
		return nil, err
	}
	if resp.Explain != nil {
		resp.Explain.TookMS = ms(time.Since(began))
	}
	s.cache.put(key, version, resp)
	resp = copyResponse(resp) // the interaction id is this call's, not the cache's
	s.record(ctx, req, resp)
	return resp, nil
}

// record stores the search as an interaction and puts its id on resp. A
// failure to record is logged and never fails the search.
func (s *Searcher) record(ctx context.Context, req Request, resp *Response) {
	if s.opt.Recorder == nil {
		return
	}
	q := req.Query
	if !s.opt.RawQueries {
		q = scrub.Text(q)
	}
	ids := make([]int64, 0, len(resp.Results))
	for _, r := range resp.Results {
		if r.ChunkID != 0 {
			ids = append(ids, r.ChunkID)
		}
	}
	detail, err := json.Marshal(map[string]any{"chunk_ids": ids, "confidence": resp.Confidence, "top_k": req.TopK})
	if err != nil {
		s.logger.Warn("interaction_not_recorded", "err", err.Error())
		return
	}
	id, err := s.opt.Recorder.RecordInteraction(ctx, store.Interaction{Caller: caller.From(ctx), Tool: "strata_search",
		Question: q, Layers: resp.SearchedLayers, Status: resp.Status, Detail: detail})
	if err != nil {
		s.logger.Warn("interaction_not_recorded", "err", err.Error())
		return
	}
	resp.InteractionID = strconv.FormatInt(id, 10)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
