package rerank

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratakb/stratakb/internal/provider"
)

// Providers, as RERANKING_PROVIDER names them.
const (
	// ProviderOffline is the default: the offline reranker, built
	// elsewhere. "" means the same.
	ProviderOffline = "offline"
	// ProviderHTTP is a rerank endpoint (NewHTTP).
	ProviderHTTP = "http"
	// ProviderONNX is a cross-encoder run in process: RERANKING_MODEL is a
	// folder with its ONNX export (model.onnx) and tokenizer.json or
	// vocab.txt.
	ProviderONNX = "onnx"
)

// Wire formats, as RERANKING_FORMAT names them.
const (
	// FormatTEI is Hugging Face Text Embeddings Inference's POST /rerank:
	// {"query", "texts", "raw_scores", "truncate"} answered by
	// [{"index", "score"}].
	FormatTEI = "tei"
	// FormatCohere is the POST /v1/rerank that Cohere, Jina, Infinity and
	// vLLM speak: {"model", "query", "documents", "top_n"} answered by
	// {"results": [{"index", "relevance_score"}]}.
	FormatCohere = "cohere"
)

// Defaults and bounds.
const (
	// DefaultBatchSize is TEI's own default limit on texts per request.
	DefaultBatchSize = 32
	MaxBatchSize     = 1000
	// DefaultTimeout bounds one attempt: reranking sits on the query path.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxRetries is the retries after a failed attempt.
	DefaultMaxRetries = 2
	// DefaultMaxRetryWait is the longest Retry-After honoured; a longer one
	// makes the call fail at once (and the caller fall back).
	DefaultMaxRetryWait = 5 * time.Second
	// MaxResponseBytes bounds an answer: a score per passage takes far less.
	MaxResponseBytes = 4 << 20
)

// Config says how to reach a rerank endpoint. The daemon's configuration
// fills it from the environment; Validate checks it.
type Config struct {
	// Enabled is RERANKING_ENABLED (default true); false means Passthrough.
	Enabled bool
	// Provider is RERANKING_PROVIDER: ProviderOffline (or "") or
	// ProviderHTTP.
	Provider string
	// BaseURL is the endpoint (RERANKING_BASE_URL). With FormatTEI,
	// requests go to {BaseURL}/rerank; with FormatCohere to
	// {BaseURL}/v1/rerank, or {BaseURL}/rerank when it ends in /v1. A URL
	// ending in /rerank is used as it is (Infinity serves /rerank at its
	// root).
	BaseURL string
	// Model is RERANKING_MODEL: sent as "model" in FormatCohere (where it
	// is required) and part of Name in both.
	Model string
	// APIKey (RERANKING_API_KEY) is sent as a bearer token when set; it is
	// never logged or put in an error.
	APIKey string
	// Format is RERANKING_FORMAT: FormatTEI (the default) or FormatCohere.
	Format string
	// RawScores (RERANKING_RAW_SCORES) says the endpoint's scores are
	// logits: each is mapped through the sigmoid, and TEI is asked for raw
	// scores. Without it, see the package comment.
	RawScores bool
	// BatchSize is the most passages per request (RERANKING_BATCH_SIZE).
	BatchSize int
	// NoTruncate stops asking TEI to truncate passages longer than the
	// model's input; TEI then refuses them.
	NoTruncate bool
	// Timeout bounds one attempt (RERANKING_TIMEOUT); MaxRetries and
	// MaxRetryWait bound the retries of 429, 5xx and network failures.
	Timeout      time.Duration
	MaxRetries   int
	MaxRetryWait time.Duration
	// LocalOnly (STRATA_LOCAL_ONLY) allows only an endpoint on this
	// machine.
	LocalOnly bool
}

// DefaultConfig is reranking on with the offline reranker.
func DefaultConfig() Config {
	return Config{
		Enabled:      true,
		Provider:     ProviderOffline,
		Format:       FormatTEI,
		BatchSize:    DefaultBatchSize,
		Timeout:      DefaultTimeout,
		MaxRetries:   DefaultMaxRetries,
		MaxRetryWait: DefaultMaxRetryWait,
	}
}

// Validate reports every problem of the configuration, each naming its
// environment variable. Only the http provider's settings are checked, and
// only with reranking enabled.
func (c Config) Validate() error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Provider {
	case "", ProviderOffline:
		return nil
	case ProviderONNX:
		if _, err := os.Stat(filepath.Join(c.Model, "model.onnx")); c.Model == "" || err != nil {
			return fmt.Errorf("reranking configuration: RERANKING_MODEL: %q must be a folder holding the cross-encoder's model.onnx and tokenizer.json (RERANKING_PROVIDER=%s)", c.Model, ProviderONNX)
		}
		return nil
	case ProviderHTTP:
	default:
		return fmt.Errorf("reranking configuration: RERANKING_PROVIDER: unknown provider %q; want %s, %s or %s", c.Provider, ProviderOffline, ProviderHTTP, ProviderONNX)
	}
	switch c.Format {
	case FormatTEI:
	case FormatCohere:
		if c.Model == "" {
			bad("RERANKING_MODEL: required with RERANKING_FORMAT=%s (the model the endpoint serves)", FormatCohere)
		}
	default:
		bad("RERANKING_FORMAT: %q; want %s (TEI's /rerank) or %s (Cohere, Jina, Infinity: /v1/rerank)", c.Format, FormatTEI, FormatCohere)
	}
	if c.BaseURL == "" {
		bad("RERANKING_BASE_URL: required with RERANKING_PROVIDER=%s (for example http://127.0.0.1:8080)", ProviderHTTP)
	} else if _, err := c.endpoint(); err != nil {
		bad("RERANKING_BASE_URL: %w", err)
	}
	if c.BatchSize < 1 || c.BatchSize > MaxBatchSize {
		bad("RERANKING_BATCH_SIZE: %d is out of range 1-%d", c.BatchSize, MaxBatchSize)
	}
	if c.Timeout < 100*time.Millisecond || c.Timeout > 10*time.Minute {
		bad("RERANKING_TIMEOUT: %s is out of range 100ms-10m", c.Timeout)
	}
	if c.MaxRetries < 0 || c.MaxRetries > 10 {
		bad("RERANKING_MAX_RETRIES: %d is out of range 0-10", c.MaxRetries)
	}
	if c.MaxRetryWait < 0 {
		bad("RERANKING_MAX_RETRY_WAIT: %s is negative", c.MaxRetryWait)
	}
	if len(errs) > 0 {
		return fmt.Errorf("reranking configuration: %w", errors.Join(errs...))
	}
	return nil
}

// endpoint is the URL requests are posted to.
func (c Config) endpoint() (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(c.BaseURL))
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("%s is not an http or https URL with a host", provider.DisplayURL(c.BaseURL))
	}
	if u.Fragment != "" {
		return nil, errors.New("a fragment (#...) has no place in the URL")
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/rerank"):
	case c.Format == FormatCohere && strings.HasSuffix(p, "/v1"):
		p += "/rerank"
	case c.Format == FormatCohere:
		p += "/v1/rerank"
	default:
		p += "/rerank"
	}
	u.Path, u.RawPath = p, ""
	return u, nil
}

// String describes the configuration; the key shows only as set or unset.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("enabled=%t provider=%s url=%s format=%s model=%s api_key=%s raw_scores=%t batch=%d timeout=%s retries=%d local_only=%t",
		c.Enabled, c.Provider, provider.DisplayURL(c.BaseURL), c.Format, c.Model, key, c.RawScores, c.BatchSize, c.Timeout, c.MaxRetries, c.LocalOnly)
}

// GoString makes %#v print the same as String.
func (c Config) GoString() string { return "rerank.Config{" + c.String() + "}" }

// LogValue makes slog log the configuration without the key.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

var _ slog.LogValuer = Config{}
