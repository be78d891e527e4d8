package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/stratakb/stratakb/internal/provider"
)

// HTTP reranks through a rerank endpoint in the TEI or the Cohere/Jina
// format. It is safe for concurrent use.
type HTTP struct {
	cfg  Config
	name string
	url  *url.URL
	pc   *provider.Client
}

var _ Reranker = (*HTTP)(nil)

// NewHTTP validates cfg and builds the client. With cfg.LocalOnly an
// endpoint that is not on this machine is refused here, naming
// RERANKING_BASE_URL and STRATA_LOCAL_ONLY, and again at each connection.
// logger may be nil.
func NewHTTP(cfg Config, logger *slog.Logger) (*HTTP, error) {
	return newHTTP(cfg, logger, nil)
}

func newHTTP(cfg Config, logger *slog.Logger, edit func(*provider.Config)) (*HTTP, error) {
	cfg.Enabled, cfg.Provider = true, ProviderHTTP
	if cfg.Format == "" {
		cfg.Format = FormatTEI
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, err := cfg.endpoint()
	if err != nil {
		return nil, fmt.Errorf("RERANKING_BASE_URL: %w", err)
	}
	if cfg.MaxRetryWait == 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	pcfg := provider.Config{
		Service:          "rerank",
		BaseURL:          u.String(),
		URLVar:           "RERANKING_BASE_URL",
		TimeoutVar:       "RERANKING_TIMEOUT",
		Timeout:          cfg.Timeout,
		MaxRetries:       cfg.MaxRetries,
		MaxRetryWait:     cfg.MaxRetryWait,
		RetryBase:        250 * time.Millisecond,
		RetryCap:         2 * time.Second,
		MaxResponseBytes: MaxResponseBytes,
		LocalOnly:        cfg.LocalOnly,
		Secrets:          []string{cfg.APIKey},
		Logger:           logger,
		UserAgent:        "stratakb-queryd",
	}
	if edit != nil {
		edit(&pcfg)
	}
	pc, err := provider.New(pcfg)
	if err != nil {
		return nil, fmt.Errorf("reranking: %w", err)
	}
	model := cfg.Model
	if model == "" {
		model = "unnamed"
	}
	return &HTTP{cfg: cfg, name: ProviderHTTP + ":" + cfg.Format + ":" + model, url: u, pc: pc}, nil
}

// Name is "http:", the format and the model, such as
// "http:tei:BAAI/bge-reranker-base" ("unnamed" without RERANKING_MODEL).
func (h *HTTP) Name() string { return h.name }

// Rerank scores passages in batches of at most Config.BatchSize, in order.
func (h *HTTP) Rerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	raw := make([]float64, 0, len(passages))
	for start := 0; start < len(passages); start += h.cfg.BatchSize {
		end := min(start+h.cfg.BatchSize, len(passages))
		s, err := h.batch(ctx, query, passages[start:end])
		if err != nil {
			return nil, fmt.Errorf("rerank passages %d-%d of %d with %s: %w", start+1, end, len(passages), h.name, err)
		}
		raw = append(raw, s...)
	}
	return h.probabilities(raw), nil
}

// probabilities maps the scores of one call as the package comment says.
func (h *HTTP) probabilities(raw []float64) []float64 {
	logits := h.cfg.RawScores
	for _, s := range raw {
		if s < 0 || s > 1 {
			logits = true
		}
	}
	if !logits {
		return raw
	}
	out := make([]float64, len(raw))
	for i, s := range raw {
		out[i] = Sigmoid(s)
	}
	return out
}

type teiRequest struct {
	Query     string   `json:"query"`
	Texts     []string `json:"texts"`
	RawScores bool     `json:"raw_scores"`
	Truncate  bool     `json:"truncate"`
}

type teiResult struct {
	Index *int     `json:"index"`
	Score *float64 `json:"score"`
}

type cohereRequest struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type cohereResponse struct {
	Results []struct {
		Index          *int     `json:"index"`
		RelevanceScore *float64 `json:"relevance_score"`
	} `json:"results"`
}

// batch sends one request and returns its raw scores in passage order.
func (h *HTTP) batch(ctx context.Context, query string, passages []string) ([]float64, error) {
	var body []byte
	var err error
	if h.cfg.Format == FormatCohere {
		body, err = json.Marshal(cohereRequest{Model: h.cfg.Model, Query: query, Documents: passages, TopN: len(passages)})
	} else {
		body, err = json.Marshal(teiRequest{Query: query, Texts: passages, RawScores: h.cfg.RawScores, Truncate: !h.cfg.NoTruncate})
	}
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	header := http.Header{}
	if h.cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.pc.Do(ctx, provider.Request{URL: h.url, Header: header, Body: body,
		LogAttrs: []slog.Attr{slog.Int("passages", len(passages))}})
	if err != nil {
		return nil, err
	}
	var idx []*int
	var scores []*float64
	if h.cfg.Format == FormatCohere {
		var r cohereResponse
		if err := json.Unmarshal(resp.Body, &r); err != nil || r.Results == nil {
			return nil, &ResponseError{Reason: "the answer is not a /v1/rerank response with results" + h.reason(err)}
		}
		for _, x := range r.Results {
			idx, scores = append(idx, x.Index), append(scores, x.RelevanceScore)
		}
	} else {
		var r []teiResult
		if err := json.Unmarshal(resp.Body, &r); err != nil {
			return nil, &ResponseError{Reason: "the answer is not a TEI /rerank response (a list of index and score)" + h.reason(err)}
		}
		for _, x := range r {
			idx, scores = append(idx, x.Index), append(scores, x.Score)
		}
	}
	return order(idx, scores, len(passages))
}

func (h *HTTP) reason(err error) string {
	if err == nil {
		return ""
	}
	return ": " + h.pc.Redact(err.Error())
}

// order puts the scores of an answer in passage order; the endpoint sorts
// them by score. Every index must appear exactly once.
func order(idx []*int, scores []*float64, n int) ([]float64, error) {
	out := make([]float64, n)
	got := make([]bool, n)
	for k := range idx {
		if idx[k] == nil || scores[k] == nil {
			return nil, &ResponseError{Reason: fmt.Sprintf("result %d lacks its index or score", k)}
		}
		i, s := *idx[k], *scores[k]
		switch {
		case i < 0 || i >= n:
			return nil, &ResponseError{Reason: fmt.Sprintf("index %d is outside 0-%d", i, n-1)}
		case got[i]:
			return nil, &ResponseError{Reason: fmt.Sprintf("index %d appears twice", i)}
		case math.IsNaN(s) || math.IsInf(s, 0):
			return nil, &ResponseError{Reason: fmt.Sprintf("the score of passage %d is not a number", i)}
		}
		out[i], got[i] = s, true
	}
	var missing []int
	for i, ok := range got {
		if !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return nil, &ResponseError{Reason: fmt.Sprintf("%d of %d passages have no score (first missing index %d)", len(missing), n, missing[0])}
	}
	return out, nil
}

// New builds the reranker cfg names: Passthrough when reranking is off, HTTP
// for the http provider, and offline() for the offline one. A configuration
// error is returned alone. When the reranker cannot be built (offline is nil
// or fails), New returns a Passthrough saying why together with the error,
// for the caller to log and carry on: a reranker that cannot load degrades
// the answers, it does not stop the server.
func New(cfg Config, logger *slog.Logger, offline func() (Reranker, error)) (Reranker, error) {
	if !cfg.Enabled {
		return Passthrough{Reason: DisabledReason}, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Provider == ProviderHTTP {
		h, err := NewHTTP(cfg, logger)
		if err != nil {
			return nil, err // not a nil *HTTP in a non-nil Reranker
		}
		return h, nil
	}
	if offline == nil {
		err := errors.New("the offline reranker is not available in this build")
		return Passthrough{Reason: err.Error()}, err
	}
	r, err := offline()
	if err != nil {
		err = fmt.Errorf("load the offline reranker: %w", err)
		return Passthrough{Reason: err.Error()}, err
	}
	return r, nil
}
