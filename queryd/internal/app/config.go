package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/queryd/internal/rerank"
	"github.com/stratakb/stratakb/queryd/internal/rewrite"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/server"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Query rewrite providers (QUERY_REWRITE_PROVIDER).
const (
	RewriteAnthropic   = "anthropic"         // Anthropic's API, with ANTHROPIC_API_KEY
	RewriteOpenAI      = "openai_compatible" // any endpoint speaking the OpenAI chat API
	RewriteMCPSampling = "mcp_sampling"      // the MCP client's own model, through sampling
	RewriteNone        = "none"              // questions are searched as written
)

// QUERYD_READ_FALLBACK's values: what reads do while the read replica
// cannot be reached.
const (
	ReadFallbackNone    = "none"    // fail, 503, naming the replica
	ReadFallbackPrimary = "primary" // read from QUERYD_DATABASE_URL meanwhile
)

// RerankLocal is RERANKING_MODEL's default: the offline reranker (package
// lrank), a logistic regression run in process. It is not a cross-encoder;
// docs/providers.md says how to point RERANKING_* at one.
const RerankLocal = "local"

// Defaults and bounds of the phase-two settings.
const (
	DefaultAnswerTokenBudget = 1500
	MinAnswerTokenBudget     = 200
	MaxAnswerTokenBudget     = 20000
	DefaultAnthropicModel    = rewrite.DefaultAnthropicModel
	DefaultRewriteTimeout    = 10 * time.Second
	MinRewriteTimeout        = time.Second
	MaxRewriteTimeout        = 5 * time.Minute
)

// Config is queryd's whole configuration, read from the environment by
// LoadConfig: defaults (DefaultConfig), then the variables, then Validate.
// It never shows a secret: String, GoString and LogValue redact them.
type Config struct {
	// DatabaseURL is QUERYD_DATABASE_URL (a connection as the read-only
	// queryd role), else DATABASE_URL, else var/db.env written by `make
	// db-start` (its QUERYD_DATABASE_URL first).
	DatabaseURL string
	// DatabaseURLFrom says where the database URL came from, for errors: a
	// variable's name or var/db.env's path.
	DatabaseURLFrom string
	// ReadDatabaseURL is QUERYD_READ_DATABASE_URL (a read replica), else
	// DatabaseURL: the retrieval reads go there.
	ReadDatabaseURL string
	// ReadFallback is QUERYD_READ_FALLBACK: ReadFallbackNone (the default:
	// while the replica at ReadDatabaseURL is unreachable, searches answer
	// 503 saying so) or ReadFallbackPrimary (they read from DatabaseURL
	// until the replica answers again).
	ReadFallback string
	// AllowOwner is QUERYD_ALLOW_OWNER: without it queryd refuses to start
	// as a role that can change documents (a superuser, the schema's owner,
	// or one granted writes on the document tables).
	AllowOwner bool
	// ReceiptKeyFile is QUERYD_RECEIPT_KEY_FILE: the Ed25519 key receipts
	// are signed with, created on first use (default
	// var/secrets/receipt-ed25519.key under STRATA_HOME or the working
	// directory).
	ReceiptKeyFile    string
	receiptKeyDefault string     // the default path, used when ReceiptKeyFile is empty
	LogLevel          slog.Level // LOG_LEVEL
	// Server is the serving side: QUERYD_ADDR, the tokens, the limits and
	// LEARNING_STORE_RAW_QUERIES (Server.RawQueries).
	Server server.Config
	// Embed configures the query embedder (the EMBEDDING_* variables, the
	// same as ingestd's: queries must be embedded by the model that made the
	// vectors). Validate checks it too: a wrong one stops queryd at start
	// (a model that is merely missing or an endpoint that is down makes
	// search answer from full text only, degraded, and /healthz says why).
	Embed embed.Config
	// KeywordSlots is HYBRID_KEYWORD_SLOTS: the best lexical matches that
	// keep a place in the results (0 turns them off).
	KeywordSlots int

	// AnswerTokenBudget is ANSWER_TOKEN_BUDGET: about how many tokens of
	// passages strata_ask returns.
	AnswerTokenBudget int
	// Reranking is RERANKING_ENABLED and RERANKING_MODEL.
	Reranking RerankConfig
	// Rewrite is the QUERY_REWRITE_* variables and ANTHROPIC_API_KEY.
	Rewrite RewriteConfig
	// LearningEnabled is LEARNING_ENABLED: record searches and feedback and
	// learn from them.
	LearningEnabled bool
}

// RerankConfig is the reranker that reorders candidates.
type RerankConfig struct {
	Enabled bool   // RERANKING_ENABLED
	Model   string // RERANKING_MODEL; also scores extractive sentences when disabled
	// HTTP is the rerank endpoint when RERANKING_PROVIDER=http
	// (RERANKING_BASE_URL, RERANKING_API_KEY, RERANKING_FORMAT,
	// RERANKING_RAW_SCORES, RERANKING_BATCH_SIZE, RERANKING_TIMEOUT).
	HTTP rerank.Config
}

// RewriteConfig is the language model that turns a question into searches.
type RewriteConfig struct {
	// Provider is one of RewriteAnthropic, RewriteOpenAI, RewriteMCPSampling
	// or RewriteNone (QUERY_REWRITE_PROVIDER). Unset, it is anthropic when
	// ANTHROPIC_API_KEY is set (and STRATA_LOCAL_ONLY is not), else none.
	Provider string
	// BaseURL is the openai_compatible endpoint, ending in /v1
	// (QUERY_REWRITE_BASE_URL).
	BaseURL string
	// Model is QUERY_REWRITE_MODEL: required for openai_compatible,
	// DefaultAnthropicModel for anthropic.
	Model string
	// APIKey is QUERY_REWRITE_API_KEY, sent to the openai_compatible
	// endpoint when set. Never logged.
	APIKey string
	// AnthropicAPIKey is ANTHROPIC_API_KEY. Never logged.
	AnthropicAPIKey string
	// Timeout bounds one rewrite call (QUERY_REWRITE_TIMEOUT).
	Timeout time.Duration
}

// DefaultConfig returns the configuration with no variable set, but for the
// database URL, which has no default.
func DefaultConfig() Config {
	return Config{
		ReadFallback:      ReadFallbackNone,
		LogLevel:          slog.LevelInfo,
		Server:            server.DefaultConfig(),
		Embed:             embed.DefaultConfig(),
		KeywordSlots:      searchpkg.DefaultKeywordSlots,
		AnswerTokenBudget: DefaultAnswerTokenBudget,
		Reranking:         RerankConfig{Enabled: true, Model: RerankLocal, HTTP: rerank.DefaultConfig()},
		Rewrite:           RewriteConfig{Provider: RewriteNone, Timeout: DefaultRewriteTimeout},
		LearningEnabled:   true,
	}
}

// LoadConfig builds the configuration: DefaultConfig, then the environment
// through internal/config, then Validate. It reports every problem it finds,
// each starting with its variable's name.
//
// Default paths (var/db.env, var/models, var/lib, var/secrets) resolve
// against STRATA_HOME, else the checkout queryd was built in, else the
// working directory (config.Home): an MCP client starts `queryd mcp` in a
// folder of its own.
func LoadConfig(getenv func(string) string) (Config, error) {
	getenv = config.WithHome(getenv)
	c := DefaultConfig()
	r := config.NewReader(getenv)
	u, err := config.QuerydDatabaseURL(getenv)
	r.Add(err)
	c.DatabaseURL = u
	c.DatabaseURLFrom = databaseURLFrom(getenv)
	c.ReadDatabaseURL = config.QuerydReadDatabaseURL(getenv, c.DatabaseURL)
	r.OneOf("QUERYD_READ_FALLBACK", &c.ReadFallback, ReadFallbackNone, ReadFallbackPrimary)
	r.Bool("QUERYD_ALLOW_OWNER", &c.AllowOwner)
	r.String("QUERYD_RECEIPT_KEY_FILE", &c.ReceiptKeyFile)
	c.receiptKeyDefault = receiptKeyPath(getenv)
	c.LogLevel, err = config.LogLevel(getenv)
	r.Add(err)
	c.Server, err = server.LoadConfig(getenv)
	r.Add(err)
	c.Embed, err = embed.ConfigFromEnv(getenv)
	r.Add(err)
	homeEmbedPaths(getenv, &c.Embed)
	c.KeywordSlots, err = searchpkg.KeywordSlotsFromEnv(getenv)
	r.Add(err)

	r.Int("ANSWER_TOKEN_BUDGET", &c.AnswerTokenBudget, MinAnswerTokenBudget, MaxAnswerTokenBudget)
	r.Bool("RERANKING_ENABLED", &c.Reranking.Enabled)
	r.String("RERANKING_MODEL", &c.Reranking.Model)
	r.Bool("LEARNING_ENABLED", &c.LearningEnabled)
	rh := &c.Reranking.HTTP
	r.OneOf("RERANKING_PROVIDER", &rh.Provider, rerank.ProviderOffline, rerank.ProviderHTTP, rerank.ProviderONNX)
	r.String("RERANKING_BASE_URL", &rh.BaseURL)
	r.Secret("RERANKING_API_KEY", &rh.APIKey)
	r.OneOf("RERANKING_FORMAT", &rh.Format, rerank.FormatTEI, rerank.FormatCohere)
	r.Bool("RERANKING_RAW_SCORES", &rh.RawScores)
	r.Int("RERANKING_BATCH_SIZE", &rh.BatchSize, 1, rerank.MaxBatchSize)
	r.Duration("RERANKING_TIMEOUT", &rh.Timeout, time.Second, 5*time.Minute)

	rw := &c.Rewrite
	r.Secret("ANTHROPIC_API_KEY", &rw.AnthropicAPIKey)
	r.Secret("QUERY_REWRITE_API_KEY", &rw.APIKey)
	if rw.AnthropicAPIKey != "" && !c.Embed.LocalOnly {
		rw.Provider = RewriteAnthropic
	}
	r.OneOf("QUERY_REWRITE_PROVIDER", &rw.Provider, RewriteAnthropic, RewriteOpenAI, RewriteMCPSampling, RewriteNone)
	r.String("QUERY_REWRITE_BASE_URL", &rw.BaseURL)
	r.String("QUERY_REWRITE_MODEL", &rw.Model)
	if rw.Model == "" && rw.Provider == RewriteAnthropic {
		rw.Model = DefaultAnthropicModel
	}
	r.Duration("QUERY_REWRITE_TIMEOUT", &rw.Timeout, MinRewriteTimeout, MaxRewriteTimeout)
	if err := r.Err(); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate checks the configuration as a whole and reports every problem,
// each naming its variable, the embedding configuration's included; its
// STRATA_LOCAL_ONLY applies to the query rewriter too.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.DatabaseURL == "" {
		bad("QUERYD_DATABASE_URL: must be set (or DATABASE_URL, or var/db.env from 'make db-start')")
	}
	if err := c.Server.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Embed.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.KeywordSlots < 0 || c.KeywordSlots > searchpkg.MaxTopK {
		bad("HYBRID_KEYWORD_SLOTS: %d is out of range 0-%d", c.KeywordSlots, searchpkg.MaxTopK)
	}
	if c.AnswerTokenBudget < MinAnswerTokenBudget || c.AnswerTokenBudget > MaxAnswerTokenBudget {
		bad("ANSWER_TOKEN_BUDGET: %d is out of range %d-%d", c.AnswerTokenBudget, MinAnswerTokenBudget, MaxAnswerTokenBudget)
	}
	if strings.TrimSpace(c.Reranking.Model) == "" {
		bad("RERANKING_MODEL: empty; leave it unset for %q, the bundled model", RerankLocal)
	}
	if p := c.Reranking.HTTP.Provider; p == rerank.ProviderHTTP || p == rerank.ProviderONNX {
		h := c.rerankHTTP()
		if err := h.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Rewrite.validate(c.Embed.LocalOnly); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("queryd configuration: %w", errors.Join(errs...))
	}
	return nil
}

func (rw RewriteConfig) validate(localOnly bool) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if rw.Timeout < MinRewriteTimeout || rw.Timeout > MaxRewriteTimeout {
		bad("QUERY_REWRITE_TIMEOUT: %s is out of range %s-%s", rw.Timeout, MinRewriteTimeout, MaxRewriteTimeout)
	}
	switch rw.Provider {
	case RewriteNone, RewriteMCPSampling:
	case RewriteAnthropic:
		if rw.AnthropicAPIKey == "" {
			bad("ANTHROPIC_API_KEY: required with QUERY_REWRITE_PROVIDER=%s", RewriteAnthropic)
		}
		if rw.Model == "" {
			bad("QUERY_REWRITE_MODEL: empty; leave it unset for %s", DefaultAnthropicModel)
		}
		if localOnly {
			bad("QUERY_REWRITE_PROVIDER: %s sends questions to Anthropic, which %s refuses; use %s with an endpoint on this machine, %s or %s",
				RewriteAnthropic, config.LocalOnlyVar+"=true", RewriteOpenAI, RewriteMCPSampling, RewriteNone)
		}
	case RewriteOpenAI:
		if rw.Model == "" {
			bad("QUERY_REWRITE_MODEL: required with QUERY_REWRITE_PROVIDER=%s (a model the endpoint serves)", RewriteOpenAI)
		}
		if rw.BaseURL == "" {
			bad("QUERY_REWRITE_BASE_URL: required with QUERY_REWRITE_PROVIDER=%s (for example http://127.0.0.1:11434/v1)", RewriteOpenAI)
		} else if u, err := parseRewriteURL(rw.BaseURL); err != nil {
			bad("QUERY_REWRITE_BASE_URL: %w", err)
		} else if localOnly {
			if err := config.CheckLoopback(u.Hostname(), nil); err != nil {
				bad("QUERY_REWRITE_BASE_URL: %w; %s", err, config.LocalOnlyHint)
			}
		}
	default:
		bad("QUERY_REWRITE_PROVIDER: unknown provider %q; want %s, %s, %s or %s", rw.Provider, RewriteAnthropic, RewriteOpenAI, RewriteMCPSampling, RewriteNone)
	}
	return errors.Join(errs...)
}

// parseRewriteURL checks an openai_compatible base URL: http or https, a
// host, and a path ending in /v1. Errors never quote the URL, which may hold
// a password.
func parseRewriteURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host in the URL")
	}
	if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
		return nil, fmt.Errorf("the path must end in /v1 (for example http://127.0.0.1:11434/v1), got %q", u.Path)
	}
	return u, nil
}

// String describes the configuration for logs: secrets show only as "set"
// or "unset", the database URL without its password.
func (c Config) String() string {
	rw := c.Rewrite
	return fmt.Sprintf("database=%s allow_owner=%t log_level=%s addr=%s tokens=%d raw_queries=%t keyword_slots=%d "+
		"answer_token_budget=%d reranking=%t reranking_model=%s learning=%t "+
		"rewrite_provider=%s rewrite_url=%s rewrite_model=%s rewrite_api_key=%s anthropic_api_key=%s rewrite_timeout=%s embedding={%s}",
		redactURL(c.DatabaseURL), c.AllowOwner, c.LogLevel, c.Server.Addr, c.Server.Tokens.Len(), c.Server.RawQueries, c.KeywordSlots,
		c.AnswerTokenBudget, c.Reranking.Enabled, c.Reranking.Model, c.LearningEnabled,
		rw.Provider, redactURL(rw.BaseURL), rw.Model, keyState(rw.APIKey), keyState(rw.AnthropicAPIKey), rw.Timeout, c.Embed)
}

// GoString makes %#v print the same as String, so that no verb shows a key.
func (c Config) GoString() string { return "app.Config{" + c.String() + "}" }

// LogValue logs the configuration as a group, without secrets.
func (c Config) LogValue() slog.Value {
	rw := c.Rewrite
	return slog.GroupValue(
		slog.String("database", redactURL(c.DatabaseURL)),
		slog.Bool("allow_owner", c.AllowOwner),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("addr", c.Server.Addr),
		slog.Int("tokens", c.Server.Tokens.Len()),
		slog.Bool("raw_queries", c.Server.RawQueries),
		slog.Int("keyword_slots", c.KeywordSlots),
		slog.Int("answer_token_budget", c.AnswerTokenBudget),
		slog.Bool("reranking", c.Reranking.Enabled),
		slog.String("reranking_model", c.Reranking.Model),
		slog.Bool("learning", c.LearningEnabled),
		slog.Group("rewrite",
			slog.String("provider", rw.Provider),
			slog.String("url", redactURL(rw.BaseURL)),
			slog.String("model", rw.Model),
			slog.String("api_key", keyState(rw.APIKey)),
			slog.String("anthropic_api_key", keyState(rw.AnthropicAPIKey)),
			slog.Duration("timeout", rw.Timeout)),
		slog.Any("embedding", c.Embed),
	)
}

var _ slog.LogValuer = Config{}

// redactURL is u without its password and query string (which may hold a
// key), or a placeholder when it does not parse.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(set, not shown)" // a key=value DSN, or anything that might hold a password
	}
	if u.RawQuery != "" {
		u.RawQuery = "..."
	}
	return u.Redacted()
}

func keyState(k string) string {
	if k == "" {
		return "unset"
	}
	return "set"
}

// rerankHTTP is the rerank endpoint's configuration with RERANKING_ENABLED,
// RERANKING_MODEL and STRATA_LOCAL_ONLY filled in.
func (c Config) rerankHTTP() rerank.Config {
	h := c.Reranking.HTTP
	h.Enabled, h.Model, h.LocalOnly = c.Reranking.Enabled, c.Reranking.Model, c.Embed.LocalOnly
	if h.Model == RerankLocal {
		h.Model = ""
	}
	return h
}

// rewriteConfig is the query rewriter's configuration.
func (c Config) rewriteConfig() rewrite.Config {
	rc := rewrite.DefaultConfig()
	rw := c.Rewrite
	rc.Provider, rc.BaseURL, rc.Model, rc.Timeout, rc.LocalOnly = rw.Provider, rw.BaseURL, rw.Model, rw.Timeout, c.Embed.LocalOnly
	if rw.Provider == RewriteNone {
		rc.Provider = rewrite.ProviderNone
	}
	rc.APIKey = rw.APIKey
	if rw.Provider == RewriteAnthropic {
		rc.APIKey = rw.AnthropicAPIKey
	}
	return rc
}

// corpusOptions are the read handle's options: the role check, and when
// QUERYD_READ_DATABASE_URL names another database than QUERYD_DATABASE_URL,
// that it is a replica, with QUERYD_READ_FALLBACK. log (nil: none) says
// when reads move to the primary and back.
func (c Config) corpusOptions(check store.Option, log *slog.Logger) []store.Option {
	opts := []store.Option{check}
	if c.ReadDatabaseURL == c.DatabaseURL {
		return opts
	}
	note := func(err error) {
		switch {
		case log == nil:
		case err != nil:
			log.Warn("read replica unreachable; reads go to the primary (QUERYD_READ_FALLBACK=primary) until it answers",
				slog.String("error", err.Error()))
		default:
			log.Info("read replica answers again; reads go to it")
		}
	}
	return append(opts, store.WithReadReplica(c.DatabaseURL, c.ReadFallback == ReadFallbackPrimary, note))
}

// receiptKeyPath is the receipt key's default path: var/secrets under
// STRATA_HOME, else the working directory, as var/db.env is found.
func receiptKeyPath(getenv func(string) string) string {
	home := getenv("STRATA_HOME")
	if home == "" {
		home = "."
	}
	return filepath.Join(home, "var", "secrets", "receipt-ed25519.key")
}

// receiptKeyOption loads (or creates) the receipt key for a ledger. When it
// cannot, receipts are issued unsigned and opening one says the signature
// was not checked; the error is logged, not fatal.
//
// Without QUERYD_RECEIPT_KEY_FILE the default key is created only where a
// var/ folder already is (a set-up installation), so a queryd started in
// another folder does not leave a key there.
func (c Config) receiptKeyOption(log *slog.Logger) store.Option {
	path := c.ReceiptKeyFile
	if path == "" {
		path = c.receiptKeyDefault
		if _, err := os.Stat(filepath.Dir(filepath.Dir(path))); err != nil {
			if log != nil {
				log.Warn("receipts are issued unsigned: no var/ folder here for the receipt key (set QUERYD_RECEIPT_KEY_FILE or STRATA_HOME)")
			}
			return store.WithReceiptKey(nil)
		}
	}
	k, err := store.LoadReceiptKey(path)
	if err != nil {
		if log != nil {
			log.Warn("receipts are issued unsigned", "error", err.Error())
		}
		return store.WithReceiptKey(nil)
	}
	return store.WithReceiptKey(k)
}

// homeEmbedPaths resolves the local model's default folder and ONNX
// Runtime's default library against STRATA_HOME (set by config.WithHome
// to the checkout when unset). Paths the user set stay as given.
func homeEmbedPaths(getenv func(string) string, c *embed.Config) {
	home := getenv(config.HomeVar)
	if home == "" {
		return
	}
	// The library serves the ONNX reranker too, whatever the provider.
	if !config.IsSet(getenv, "ONNXRUNTIME_LIB") {
		c.LibraryPath = config.UnderHome(home, embed.DefaultLibraryPath)
	}
	if c.Provider == embed.ProviderLocal && !config.IsSet(getenv, "STRATA_MODEL_DIR") &&
		(c.ModelName == "" || embed.KnownLocalModel(c.ModelName)) {
		name, dir := c.LocalModel()
		c.ModelName, c.ModelDir = name, config.UnderHome(home, dir)
	}
}
