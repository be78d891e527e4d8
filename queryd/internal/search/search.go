// Package search is queryd's retrieval: strata_search's arguments, checks
// and response, over the read-only store.
package search

import (
	"context"
	"fmt"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Limits of strata_search's arguments.
const (
	DefaultTopK = 5
	MaxTopK     = 50
	MaxQuery    = 2000 // characters
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
}

// Response is strata_search's answer.
type Response struct {
	Status         string   `json:"status"`
	Query          string   `json:"query"`
	SearchedLayers []string `json:"searched_layers"`
	Results        []Result `json:"results"`
}

// Searcher answers strata_search.
type Searcher struct {
	store *store.Store
}

// New returns a Searcher over the store.
func New(st *store.Store) *Searcher { return &Searcher{store: st} }

// Validate checks and normalises the arguments; errors name the argument.
func (r *Request) Validate() error {
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
	for i, l := range r.Layers {
		if strings.TrimSpace(l) == "" {
			return qerr.Invalidf("layers", "entry %d is empty", i)
		}
	}
	return nil
}

// Search runs one search.
func (s *Searcher) Search(ctx context.Context, req Request) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	known, err := s.store.LayerNames(ctx)
	if err != nil {
		return nil, qerr.Unavailablef(err, "read layers")
	}
	for _, l := range req.Layers {
		if !contains(known, l) {
			return nil, qerr.Invalidf("layers", "no layer named %q (known: %s)", l, strings.Join(known, ", "))
		}
	}
	searched := req.Layers
	if len(searched) == 0 {
		searched = known
	}
	hits, err := s.store.SearchText(ctx, req.Query, req.Layers, req.TopK)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	resp := &Response{Status: "ok", Query: req.Query, SearchedLayers: searched, Results: []Result{}}
	for _, h := range hits {
		resp.Results = append(resp.Results, Result{
			ChunkID: h.ChunkID, Ref: h.Ref(), Layer: h.Layer, File: h.File, Page: h.Page,
			Lines: fmt.Sprintf("%d-%d", h.LineStart, h.LineEnd), ClausePath: h.ClausePath,
			Text: h.Text, Score: h.Score,
		})
	}
	return resp, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
