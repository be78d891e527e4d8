package rewrite

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/stratakb/stratakb/internal/provider"
)

// Providers, as QUERY_REWRITE_PROVIDER names them.
const (
	// ProviderNone: no rewriting; the question is searched as written,
	// with the learned synonyms appended.
	ProviderNone = ""
	// ProviderAnthropic asks Claude through the Messages API; the default
	// when ANTHROPIC_API_KEY is set.
	ProviderAnthropic = "anthropic"
	// ProviderOpenAI asks any endpoint that speaks the OpenAI
	// chat-completions API.
	ProviderOpenAI = "openai_compatible"
	// ProviderMCPSampling asks the connected MCP client's model; it is built
	// per session with NewSampling, not by New.
	ProviderMCPSampling = "mcp_sampling"
)

// Defaults.
const (
	// DefaultAnthropicModel is the model asked when QUERY_REWRITE_MODEL is
	// unset: Anthropic's small, fast model (Claude Haiku 5.5, released
	// October 2026), which is all a rewrite needs.
	DefaultAnthropicModel = "claude-haiku-5-5"
	// DefaultAnthropicBaseURL is where the Messages API lives.
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	// AnthropicVersion is the anthropic-version header the request's
	// format follows.
	AnthropicVersion = "2023-06-01"

	// DefaultTimeout bounds one attempt: a rewrite sits on the query path.
	DefaultTimeout = 8 * time.Second
	// DefaultMaxRetries is the retries after a failed attempt.
	DefaultMaxRetries = 1
	// DefaultMaxRetryWait is the longest Retry-After honoured; a provider
	// asking for longer makes the call fall back at once.
	DefaultMaxRetryWait = 5 * time.Second
	// DefaultMaxTokens bounds the reply's length.
	DefaultMaxTokens = 400
	// MaxResponseBytes bounds a reply's body; a few rewrites take far less.
	MaxResponseBytes = 1 << 20
)

// Config says which provider rewrites queries and how. The daemon's
// configuration fills it from the environment; Validate checks it.
type Config struct {
	// Provider is a Provider constant (QUERY_REWRITE_PROVIDER; anthropic
	// when unset and ANTHROPIC_API_KEY is set).
	Provider string
	// BaseURL is the openai_compatible endpoint, ending in /v1
	// (QUERY_REWRITE_BASE_URL). For anthropic it defaults to
	// DefaultAnthropicBaseURL; another value (a gateway) must be the
	// API's root, without /v1/messages.
	BaseURL string
	// Model is the model asked (QUERY_REWRITE_MODEL): required for
	// openai_compatible, DefaultAnthropicModel for anthropic when empty.
	Model string
	// APIKey is ANTHROPIC_API_KEY for anthropic, sent as x-api-key, and
	// QUERY_REWRITE_API_KEY for openai_compatible, sent as a bearer token
	// only when set. OPENAI_API_KEY is never read or sent. The key is never
	// logged or put in an error.
	APIKey string
	// Timeout bounds one attempt; MaxRetries and MaxRetryWait bound the
	// retries of 429, 5xx and network failures.
	Timeout      time.Duration
	MaxRetries   int
	MaxRetryWait time.Duration
	// MaxTokens bounds the model's reply.
	MaxTokens int
	// LocalOnly (STRATA_LOCAL_ONLY) allows only an endpoint on this
	// machine, so it refuses anthropic outright.
	LocalOnly bool
}

// DefaultConfig is no provider, with the default bounds.
func DefaultConfig() Config {
	return Config{
		Timeout:      DefaultTimeout,
		MaxRetries:   DefaultMaxRetries,
		MaxRetryWait: DefaultMaxRetryWait,
		MaxTokens:    DefaultMaxTokens,
	}
}

// Validate reports every problem of the configuration, each naming its
// environment variable. Without a provider there is nothing to check.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Provider {
	case ProviderNone:
		return nil // nothing is called, so nothing else matters
	case ProviderMCPSampling:
	case ProviderAnthropic:
		if c.APIKey == "" {
			bad("ANTHROPIC_API_KEY: required with QUERY_REWRITE_PROVIDER=%s", ProviderAnthropic)
		}
		if c.LocalOnly {
			bad("QUERY_REWRITE_PROVIDER: %s sends questions and layer descriptions to Anthropic, and STRATA_LOCAL_ONLY=true allows only this machine; use %s with a local endpoint, or unset the provider", ProviderAnthropic, ProviderOpenAI)
		}
		if c.BaseURL != "" {
			if _, err := parseBase(c.BaseURL); err != nil {
				bad("QUERY_REWRITE_BASE_URL: %w", err)
			}
		}
	case ProviderOpenAI:
		if c.Model == "" {
			bad("QUERY_REWRITE_MODEL: required with QUERY_REWRITE_PROVIDER=%s (a model the endpoint serves)", ProviderOpenAI)
		}
		switch u, err := parseBase(c.BaseURL); {
		case c.BaseURL == "":
			bad("QUERY_REWRITE_BASE_URL: required with QUERY_REWRITE_PROVIDER=%s (for example http://127.0.0.1:11434/v1)", ProviderOpenAI)
		case err != nil:
			bad("QUERY_REWRITE_BASE_URL: %w", err)
		case !strings.HasSuffix(u.Path, "/v1"):
			bad("QUERY_REWRITE_BASE_URL: %s must end in /v1 (for example http://127.0.0.1:11434/v1)", provider.DisplayURL(c.BaseURL))
		}
	default:
		bad("QUERY_REWRITE_PROVIDER: unknown provider %q; want %s, %s or %s", c.Provider, ProviderAnthropic, ProviderOpenAI, ProviderMCPSampling)
	}
	if c.Timeout < 100*time.Millisecond || c.Timeout > 5*time.Minute {
		bad("QUERY_REWRITE_TIMEOUT: %s is out of range 100ms-5m", c.Timeout)
	}
	if c.MaxRetries < 0 || c.MaxRetries > 10 {
		bad("QUERY_REWRITE_MAX_RETRIES: %d is out of range 0-10", c.MaxRetries)
	}
	if c.MaxRetryWait < 0 {
		bad("QUERY_REWRITE_MAX_RETRY_WAIT: %s is negative", c.MaxRetryWait)
	}
	if c.MaxTokens < 16 || c.MaxTokens > 8192 {
		bad("QUERY_REWRITE_MAX_TOKENS: %d is out of range 16-8192", c.MaxTokens)
	}
	if len(errs) > 0 {
		return fmt.Errorf("query rewrite configuration: %w", errors.Join(errs...))
	}
	return nil
}

// parseBase parses a base URL, without a trailing slash.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("%s is not an http or https URL with a host", provider.DisplayURL(raw))
	}
	if u.Fragment != "" {
		return nil, errors.New("a fragment (#...) has no place in the URL")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// String describes the configuration; the key shows only as set or unset.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("provider=%s url=%s model=%s api_key=%s timeout=%s retries=%d local_only=%t",
		c.Provider, provider.DisplayURL(c.BaseURL), c.Model, key, c.Timeout, c.MaxRetries, c.LocalOnly)
}

// GoString makes %#v print the same as String.
func (c Config) GoString() string { return "rewrite.Config{" + c.String() + "}" }

// LogValue makes slog log the configuration without the key.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

var _ slog.LogValuer = Config{}

// New validates cfg and builds its provider: nil, nil for ProviderNone.
// ProviderMCPSampling is refused here, since it needs an MCP session; the
// server builds it per session with NewSampling. logger may be nil.
func New(cfg Config, logger *slog.Logger) (Rewriter, error) {
	return newRewriter(cfg, logger, nil)
}

// newRewriter is New with a hook on the shared client's configuration, for
// tests.
func newRewriter(cfg Config, logger *slog.Logger, edit func(*provider.Config)) (Rewriter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case ProviderNone:
		return nil, nil
	case ProviderMCPSampling:
		return nil, errors.New("query rewrite: mcp_sampling is built per MCP session with rewrite.NewSampling")
	}
	build := newOpenAI
	if cfg.Provider == ProviderAnthropic {
		build = newAnthropic
	}
	r, err := build(cfg, logger, edit)
	if err != nil {
		return nil, err // not a nil *httpRewriter in a non-nil Rewriter
	}
	return r, nil
}

// clientConfig is the shared client's configuration for cfg.
func clientConfig(cfg Config, base string, logger *slog.Logger) provider.Config {
	if cfg.MaxRetryWait == 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	return provider.Config{
		Service:          "query rewrite",
		BaseURL:          base,
		URLVar:           "QUERY_REWRITE_BASE_URL",
		TimeoutVar:       "QUERY_REWRITE_TIMEOUT",
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
}
