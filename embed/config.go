package embed

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/stratakb/stratakb/internal/config"
)

// Providers EMBEDDING_PROVIDER accepts.
const (
	ProviderLocal  = "local"             // the bundled model, run through ONNX Runtime
	ProviderOpenAI = "openai_compatible" // any endpoint speaking the OpenAI embeddings API
)

// Defaults and bounds of the configuration.
const (
	DefaultLibraryPath     = "var/lib/libonnxruntime.so.1"
	DefaultLocalBatchSize  = 32
	DefaultRemoteBatchSize = 64
	MaxLocalBatchSize      = 512
	// MaxRemoteBatchSize is the most inputs OpenAI accepts in one request.
	MaxRemoteBatchSize     = 2048
	DefaultMaxRetries      = 5
	MaxMaxRetries          = 20
	DefaultTimeout         = 60 * time.Second
	MinTimeout             = time.Second
	MaxTimeout             = 30 * time.Minute
	DefaultMaxRequestChars = 200_000
	MaxDimensions          = 65536
	MaxThreads             = 256
)

// Config says which embedding provider to use and how. Build it with
// DefaultConfig or ConfigFromEnv and check it with Validate; New does both
// checks again.
type Config struct {
	// Provider is ProviderLocal or ProviderOpenAI (EMBEDDING_PROVIDER).
	Provider string
	// BaseURL is the OpenAI-compatible endpoint (EMBEDDING_BASE_URL). See
	// EndpointURL for the forms it accepts.
	BaseURL string
	// ModelName is the model (EMBEDDING_MODEL): for the local provider a
	// name of the catalogue (models.tsv) or use-lite, default
	// DefaultLocalModel; for a remote one the model to ask for.
	ModelName string
	// APIKey is sent as a bearer token when set (EMBEDDING_API_KEY). It is
	// never logged or put in an error.
	APIKey string
	// Dimensions, when above 0, is sent as "dimensions" and every vector must
	// have that length (EMBEDDING_DIMENSIONS).
	Dimensions int
	// BatchSize is the most texts per model call or HTTP request
	// (EMBEDDING_BATCH_SIZE).
	BatchSize int
	// MaxRequestChars caps the total bytes of text in one HTTP request
	// (EMBEDDING_MAX_REQUEST_CHARS); a single longer text goes alone.
	MaxRequestChars int
	// MaxRetries is how many times a failed request is retried after the
	// first attempt (EMBEDDING_MAX_RETRIES).
	MaxRetries int
	// Timeout bounds one HTTP attempt (EMBEDDING_TIMEOUT).
	Timeout time.Duration
	// LocalOnly refuses any provider that is not on this machine
	// (STRATA_LOCAL_ONLY).
	LocalOnly bool
	// ModelDir holds the local model's files, relative to the working
	// directory or absolute (STRATA_MODEL_DIR); empty means
	// ModelsDir/ModelName (see LocalModel).
	ModelDir string
	// LibraryPath is the ONNX Runtime shared library (ONNXRUNTIME_LIB).
	LibraryPath string
	// IntraOpThreads is the local model's ONNX Runtime thread count per
	// call (EMBEDDING_THREADS); 0 leaves it to the daemon: queryd uses 1,
	// ingestd uselite.DefaultThreads (the number of CPUs, at most 8). The
	// threads never busy-wait between calls (docs/embeddings.md).
	IntraOpThreads int
	// QueryInt8 embeds queries with the model's int8 export where it has
	// a measured one (QueryExport), passages still with the model itself
	// (EMBEDDING_QUERY_INT8, default false; docs/embeddings.md, "Queries
	// through the int8 export", says what it gains and costs).
	QueryInt8 bool
	// FewCalls says the process embeds a text or two and exits (a
	// command-line search): a local model is opened without ONNX Runtime
	// pre-packing its weights, which shortens the load by about a sixth
	// for a little time on each call. Set by the program, not by a
	// variable.
	FewCalls bool
}

// DefaultConfig returns the configuration used when no variable is set: the
// local model under var/.
func DefaultConfig() Config {
	return Config{
		Provider:        ProviderLocal,
		BatchSize:       DefaultLocalBatchSize,
		MaxRequestChars: DefaultMaxRequestChars,
		MaxRetries:      DefaultMaxRetries,
		Timeout:         DefaultTimeout,
		LibraryPath:     DefaultLibraryPath,
	}
}

// ConfigFromEnv reads the configuration through getenv (os.Getenv in a
// daemon), starting from DefaultConfig. An empty variable counts as unset.
//
//	EMBEDDING_PROVIDER           local (default) or openai_compatible
//	EMBEDDING_BASE_URL           the endpoint, with or without /v1 (see EndpointURL)
//	EMBEDDING_MODEL              local: a model of models.tsv or use-lite (default DefaultLocalModel); remote: the model the endpoint serves
//	EMBEDDING_API_KEY            sent as "Authorization: Bearer" when set
//	EMBEDDING_DIMENSIONS         sent as "dimensions" when set; vectors must match
//	EMBEDDING_BATCH_SIZE         texts per call: default 32 local (max 512), 64 remote (max 2048)
//	EMBEDDING_MAX_REQUEST_CHARS  bytes of text per HTTP request, default 200000
//	EMBEDDING_MAX_RETRIES        retries after a failed attempt, default 5 (max 20)
//	EMBEDDING_TIMEOUT            per attempt: a Go duration ("30s", "2m") or seconds ("30"), 1s-30m; default 60s
//	EMBEDDING_THREADS            the local model's threads per call, 1-256; default queryd 1, ingestd the CPUs (at most 8)
//	EMBEDDING_QUERY_INT8         true embeds queries with the model's int8 export, passages with the model (default false)
//	STRATA_LOCAL_ONLY            true refuses an endpoint that is not on this machine (true/false, 1/0, yes/no, on/off)
//	STRATA_MODEL_DIR             the local model's directory, default var/models/<EMBEDDING_MODEL>
//	ONNXRUNTIME_LIB              ONNX Runtime's library, default var/lib/libonnxruntime.so.1
//
// Relative paths are relative to the working directory. The values are read
// by internal/config's rules (trimmed; empty is unset) and range-checked
// here when their range is fixed. It reports every malformed value, naming
// the variable; Validate checks the batch size, whose range depends on the
// provider, and what spans several variables.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	r := config.NewReader(getenv)
	r.OneOf("EMBEDDING_PROVIDER", &c.Provider, ProviderLocal, ProviderOpenAI)
	r.String("EMBEDDING_BASE_URL", &c.BaseURL)
	r.String("EMBEDDING_MODEL", &c.ModelName)
	r.Secret("EMBEDDING_API_KEY", &c.APIKey)
	r.Int("EMBEDDING_DIMENSIONS", &c.Dimensions, 0, MaxDimensions)
	if !r.Int("EMBEDDING_BATCH_SIZE", &c.BatchSize, math.MinInt, math.MaxInt) && c.Provider == ProviderOpenAI {
		c.BatchSize = DefaultRemoteBatchSize
	}
	r.Int("EMBEDDING_MAX_REQUEST_CHARS", &c.MaxRequestChars, 1, math.MaxInt)
	r.Int("EMBEDDING_MAX_RETRIES", &c.MaxRetries, 0, MaxMaxRetries)
	r.Int("EMBEDDING_THREADS", &c.IntraOpThreads, 1, MaxThreads)
	r.Bool("EMBEDDING_QUERY_INT8", &c.QueryInt8)
	r.Duration("EMBEDDING_TIMEOUT", &c.Timeout, MinTimeout, MaxTimeout)
	r.Bool(config.LocalOnlyVar, &c.LocalOnly)
	r.String("STRATA_MODEL_DIR", &c.ModelDir)
	r.String("ONNXRUNTIME_LIB", &c.LibraryPath)
	return c, r.Err()
}

// Validate checks the configuration as a whole and reports every problem,
// each naming its environment variable. With LocalOnly it refuses a provider
// URL whose host is not this machine: a loopback address, a name that
// resolves only to loopback addresses (localhost), or a unix socket.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	switch c.Provider {
	case ProviderLocal:
		if c.BatchSize < 1 || c.BatchSize > MaxLocalBatchSize {
			bad("EMBEDDING_BATCH_SIZE: %d is out of range 1-%d for the local model", c.BatchSize, MaxLocalBatchSize)
		}
		if c.ModelName != "" && c.ModelDir == "" && !KnownLocalModel(c.ModelName) {
			bad("EMBEDDING_MODEL: %q is not a local model StrataKB knows (%s); set STRATA_MODEL_DIR to run your own export", c.ModelName, LocalModelNames())
		}
		if c.LibraryPath == "" {
			bad("ONNXRUNTIME_LIB: empty; the local model needs the ONNX Runtime library")
		}
		if c.IntraOpThreads < 0 || c.IntraOpThreads > MaxThreads {
			bad("EMBEDDING_THREADS: %d is out of range 1-%d (leave it unset for the default)", c.IntraOpThreads, MaxThreads)
		}
	case ProviderOpenAI:
		if c.BatchSize < 1 || c.BatchSize > MaxRemoteBatchSize {
			bad("EMBEDDING_BATCH_SIZE: %d is out of range 1-%d", c.BatchSize, MaxRemoteBatchSize)
		}
		if c.ModelName == "" {
			bad("EMBEDDING_MODEL: required with EMBEDDING_PROVIDER=%s (a model the endpoint serves)", ProviderOpenAI)
		}
		if c.BaseURL == "" {
			bad("EMBEDDING_BASE_URL: required with EMBEDDING_PROVIDER=%s (for example http://localhost:11434/v1)", ProviderOpenAI)
		} else if ep, err := parseEndpoint(c.BaseURL); err != nil {
			bad("EMBEDDING_BASE_URL: %w", err)
		} else if c.LocalOnly {
			if err := ep.checkLocal(); err != nil {
				bad("EMBEDDING_BASE_URL: %w; %s", err, config.LocalOnlyHint)
			}
		}
		if c.MaxRequestChars < 1 {
			bad("EMBEDDING_MAX_REQUEST_CHARS: %d must be at least 1", c.MaxRequestChars)
		}
		if c.MaxRetries < 0 || c.MaxRetries > MaxMaxRetries {
			bad("EMBEDDING_MAX_RETRIES: %d is out of range 0-%d", c.MaxRetries, MaxMaxRetries)
		}
		if c.Timeout < MinTimeout || c.Timeout > MaxTimeout {
			bad("EMBEDDING_TIMEOUT: %s is out of range %s-%s", c.Timeout, MinTimeout, MaxTimeout)
		}
	case "":
		bad("EMBEDDING_PROVIDER: empty; want %s or %s", ProviderLocal, ProviderOpenAI)
	default:
		bad("EMBEDDING_PROVIDER: unknown provider %q; want %s or %s", c.Provider, ProviderLocal, ProviderOpenAI)
	}
	if c.Dimensions < 0 || c.Dimensions > MaxDimensions {
		bad("EMBEDDING_DIMENSIONS: %d is out of range 1-%d (leave it unset for the model's own size)", c.Dimensions, MaxDimensions)
	}
	if len(errs) > 0 {
		return fmt.Errorf("embedding configuration: %w", errors.Join(errs...))
	}
	return nil
}

// EndpointURL returns the URL embeddings are posted to. EMBEDDING_BASE_URL
// may be given in any of these forms:
//
//	http://host:port/v1             → http://host:port/v1/embeddings
//	http://host:port                → http://host:port/v1/embeddings (an empty path means /v1)
//	https://host/some/prefix        → https://host/some/prefix/embeddings
//	http://host/v1/embeddings       → used as it is
//	unix:///run/embed.sock          → POST /v1/embeddings over that unix socket
//
// A trailing slash is ignored. A query string (such as Azure's api-version)
// is kept on requests but shown as "?..." here. For a unix socket the result
// is a description ("unix:///run/embed.sock/v1/embeddings"), not a URL an
// HTTP client can use.
func (c Config) EndpointURL() (string, error) {
	ep, err := parseEndpoint(c.BaseURL)
	if err != nil {
		return "", err
	}
	return ep.display(), nil
}

// endpoint is a parsed EMBEDDING_BASE_URL.
type endpoint struct {
	url    *url.URL // the URL requests go to; host "localhost" for a unix socket
	socket string   // the unix socket's path, or ""
}

func parseEndpoint(raw string) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return endpoint{}, fmt.Errorf("not a URL: %w", err)
	}
	switch u.Scheme {
	case "unix":
		if u.Host != "" || u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return endpoint{}, fmt.Errorf("a unix socket is written unix:///absolute/path.sock")
		}
		return endpoint{
			url:    &url.URL{Scheme: "http", Host: "localhost", Path: "/v1/embeddings"},
			socket: u.Path,
		}, nil
	case "http", "https":
	default:
		return endpoint{}, fmt.Errorf("scheme %q: want http, https or unix", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return endpoint{}, fmt.Errorf("no host in the URL")
	}
	if u.Fragment != "" {
		return endpoint{}, fmt.Errorf("a fragment (#...) has no place in the URL")
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case p == "":
		p = "/v1/embeddings"
	case strings.HasSuffix(p, "/embeddings"):
	default:
		p += "/embeddings"
	}
	out := *u
	out.Path, out.RawPath = p, ""
	return endpoint{url: &out}, nil
}

// display is the endpoint as messages show it: without a password, and with
// any query string elided, since some endpoints take a key there.
func (e endpoint) display() string {
	if e.socket != "" {
		return "unix://" + e.socket + e.url.Path
	}
	u := *e.url
	if u.RawQuery != "" {
		u.RawQuery = "..."
	}
	return u.Redacted()
}

// lookupIPAddr resolves host names for the STRATA_LOCAL_ONLY check; tests
// replace it.
var lookupIPAddr config.Resolver = net.DefaultResolver.LookupIPAddr

// checkLocal reports why e is not on this machine, or nil when it is.
func (e endpoint) checkLocal() error {
	if e.socket != "" {
		return nil
	}
	return config.CheckLoopback(e.url.Hostname(), lookupIPAddr)
}

// String describes the configuration for logs and error messages. The API
// key is shown only as "set" or "unset".
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider=%s", c.Provider)
	switch c.Provider {
	case ProviderOpenAI:
		fmt.Fprintf(&b, " url=%s model=%s api_key=%s", c.displayURL(), c.ModelName, keyState(c.APIKey))
		if c.Dimensions > 0 {
			fmt.Fprintf(&b, " dimensions=%d", c.Dimensions)
		}
		fmt.Fprintf(&b, " batch=%d max_request_chars=%d retries=%d timeout=%s", c.BatchSize, c.MaxRequestChars, c.MaxRetries, c.Timeout)
	default:
		name, dir := c.LocalModel()
		fmt.Fprintf(&b, " model=%s model_dir=%s onnxruntime_lib=%s batch=%d threads=%d query_int8=%t", name, dir, c.LibraryPath,
			c.BatchSize, c.IntraOpThreads, c.QueryInt8)
	}
	fmt.Fprintf(&b, " local_only=%t", c.LocalOnly)
	return b.String()
}

// GoString makes %#v print the same as String, so that no format verb shows
// the API key.
func (c Config) GoString() string { return "embed.Config{" + c.String() + "}" }

// LogValue makes slog log the configuration as a group, without the API key.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("provider", c.Provider)}
	switch c.Provider {
	case ProviderOpenAI:
		attrs = append(attrs,
			slog.String("url", c.displayURL()),
			slog.String("model", c.ModelName),
			slog.String("api_key", keyState(c.APIKey)),
			slog.Int("dimensions", c.Dimensions),
			slog.Int("batch", c.BatchSize),
			slog.Int("max_request_chars", c.MaxRequestChars),
			slog.Int("retries", c.MaxRetries),
			slog.Duration("timeout", c.Timeout))
	default:
		name, dir := c.LocalModel()
		attrs = append(attrs,
			slog.String("model", name),
			slog.String("model_dir", dir),
			slog.String("onnxruntime_lib", c.LibraryPath),
			slog.Int("batch", c.BatchSize),
			slog.Int("threads", c.IntraOpThreads))
	}
	attrs = append(attrs, slog.Bool("local_only", c.LocalOnly))
	return slog.GroupValue(attrs...)
}

var _ slog.LogValuer = Config{}

// displayURL is BaseURL without any password, or a placeholder when it does
// not parse (its text could hold anything, a key included).
func (c Config) displayURL() string {
	if c.BaseURL == "" {
		return ""
	}
	ep, err := parseEndpoint(c.BaseURL)
	if err != nil {
		return "(invalid)"
	}
	return ep.display()
}

func keyState(k string) string {
	if k == "" {
		return "unset"
	}
	return "set"
}
