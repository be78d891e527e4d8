package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stratakb/stratakb/internal/provider"
)

// Retry pacing of the OpenAI-compatible provider.
const (
	retryBase = provider.DefaultRetryBase
	retryCap  = provider.DefaultRetryCap
	// maxRetryWait is the longest the provider waits before a retry. A
	// server asking for longer (Retry-After) gets the error back at once,
	// carrying its RetryAfter, so a job can be rescheduled instead of
	// holding a worker.
	maxRetryWait = 2 * time.Minute

	maxResponseBytes = 512 << 20
)

// Log attribute keys.
const (
	logKeyModel    = "model"
	logKeyInputs   = "inputs"
	logKeyStatus   = "status"
	logKeyTokens   = "tokens"
	logKeyDuration = "duration"
	logKeyURL      = "url"
)

// OpenAI embeds through an endpoint that speaks the OpenAI embeddings API
// (OpenAI, Azure OpenAI behind a gateway, Ollama, vLLM, TEI, LM Studio). It
// splits work into requests of at most Config.BatchSize texts and
// Config.MaxRequestChars bytes, retries 429, 408, 5xx and network failures
// with exponential back-off and jitter (honouring Retry-After), checks the
// count and size of the vectors, and L2-normalises them. The HTTP side
// (retries, timeouts, STRATA_LOCAL_ONLY, redaction) is internal/provider's.
// It is safe for concurrent use.
type OpenAI struct {
	cfg    Config
	ep     endpoint
	name   string
	pc     *provider.Client
	client *http.Client // pc's
	logger *slog.Logger

	mu   sync.Mutex
	dims int // Config.Dimensions, else learned from the first answer

	// Hooks that tests replace.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
	rand  func() float64
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI validates cfg and builds the provider. logger may be nil. With
// cfg.LocalOnly the provider also refuses, when it connects, any address that
// is not a loopback one, and ignores HTTP proxy settings, so a name that
// later resolves elsewhere cannot carry text off the machine.
func NewOpenAI(cfg Config, logger *slog.Logger) (*OpenAI, error) {
	cfg.Provider = ProviderOpenAI
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ep, err := parseEndpoint(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("EMBEDDING_BASE_URL: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	name := ProviderOpenAI + ":" + cfg.ModelName
	if cfg.Dimensions > 0 {
		// The same model shortened to other sizes makes other vectors.
		name += "@" + strconv.Itoa(cfg.Dimensions)
	}
	o := &OpenAI{
		cfg:    cfg,
		ep:     ep,
		name:   name,
		logger: logger,
		dims:   cfg.Dimensions,
		sleep:  provider.Sleep,
		now:    time.Now,
		rand:   rand.Float64,
	}
	o.pc, err = provider.New(provider.Config{
		Service:          "embedding",
		BaseURL:          ep.url.String(),
		Socket:           ep.socket,
		URLVar:           "EMBEDDING_BASE_URL",
		TimeoutVar:       "EMBEDDING_TIMEOUT",
		Timeout:          cfg.Timeout,
		MaxRetries:       cfg.MaxRetries,
		MaxRetryWait:     maxRetryWait,
		RetryBase:        retryBase,
		RetryCap:         retryCap,
		MaxResponseBytes: maxResponseBytes,
		LocalOnly:        cfg.LocalOnly,
		Secrets:          []string{cfg.APIKey},
		Logger:           logger,
		UserAgent:        "stratakb-embed",
		MapStatus:        mapStatus,
		LookupIPAddr:     func(ctx context.Context, host string) ([]net.IPAddr, error) { return lookupIPAddr(ctx, host) },
		// The hooks are read at each call, so tests may replace them.
		Sleep: func(ctx context.Context, d time.Duration) error { return o.sleep(ctx, d) },
		Now:   func() time.Time { return o.now() },
		Rand:  func() float64 { return o.rand() },
	})
	if err != nil {
		return nil, err
	}
	o.client = o.pc.HTTPClient()
	return o, nil
}

// mapStatus turns the shared client's answer error into this package's.
func mapStatus(se *provider.StatusError) error {
	return &APIError{
		StatusCode: se.StatusCode, Message: se.Message, Type: se.Type, Code: se.Code,
		RetryAfter: se.RetryAfter, hasRetryAfter: se.HasRetryAfter,
	}
}

// loopbackOnly, sleepCtx, retryAfter and parseErrorBody are
// internal/provider's; these names stay for the tests.
func loopbackOnly(network, address string, c syscall.RawConn) error {
	return provider.LoopbackOnly(network, address, c)
}

func sleepCtx(ctx context.Context, d time.Duration) error { return provider.Sleep(ctx, d) }

func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	return provider.RetryAfter(h, now)
}

func parseErrorBody(raw []byte) (msg, typ, code string) { return provider.ParseErrorBody(raw) }

// Model returns the model's name, "openai_compatible:" followed by
// EMBEDDING_MODEL (and "@" and EMBEDDING_DIMENSIONS when that is set), and
// its dimensions, 0 until the first answer when EMBEDDING_DIMENSIONS is not
// set.
func (o *OpenAI) Model() ModelInfo {
	o.mu.Lock()
	defer o.mu.Unlock()
	return ModelInfo{Name: o.name, Dims: o.dims}
}

// Embed returns one unit-length vector per text, in order. An empty text is
// sent as a single space, since OpenAI refuses empty inputs. Errors matching
// ErrPermanent will recur if the call is repeated; *APIError carries the
// endpoint's status and message.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for _, r := range splitBatches(texts, o.cfg.BatchSize, o.cfg.MaxRequestChars) {
		vecs, err := o.embedBatch(ctx, texts[r[0]:r[1]])
		if err != nil {
			return nil, fmt.Errorf("embed texts %d-%d of %d with %s: %w", r[0]+1, r[1], len(texts), o.name, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// splitBatches cuts texts into consecutive [start, end) ranges of at most
// maxN texts and, unless a single text is longer, maxBytes bytes.
func splitBatches(texts []string, maxN, maxBytes int) [][2]int {
	var out [][2]int
	start, size := 0, 0
	for i, t := range texts {
		n := max(len(t), 1)
		if i > start && (i-start >= maxN || size+n > maxBytes) {
			out = append(out, [2]int{start, i})
			start, size = i, 0
		}
		size += n
	}
	if start < len(texts) {
		out = append(out, [2]int{start, len(texts)})
	}
	return out
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// embedBatch sends one request, retrying transient failures.
func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		if t == "" {
			t = " "
		}
		input[i] = t
	}
	body, err := json.Marshal(embeddingRequest{
		Model:          o.cfg.ModelName,
		Input:          input,
		EncodingFormat: "float",
		Dimensions:     o.cfg.Dimensions,
	})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	header := http.Header{}
	if o.cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	start := time.Now()
	resp, err := o.pc.Do(ctx, provider.Request{
		URL:      o.ep.url,
		Header:   header,
		Body:     body,
		Timeout:  o.cfg.Timeout,
		LogAttrs: []slog.Attr{slog.String(logKeyModel, o.cfg.ModelName), slog.Int(logKeyInputs, len(texts))},
	})
	if err != nil {
		if errors.Is(err, provider.ErrNotLocal) || errors.Is(err, provider.ErrTooLarge) {
			// Retrying cannot help: the endpoint's name leads off the
			// machine, or its answers are too large.
			return nil, fmt.Errorf("%w: %w", err, ErrPermanent)
		}
		return nil, err
	}
	var r embeddingResponse
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		return nil, &ResponseError{Reason: "the answer is not an embeddings response: " + o.pc.Redact(err.Error())}
	}
	vecs, err := o.check(&r, len(texts))
	if err != nil {
		return nil, err
	}
	o.logger.DebugContext(ctx, "embedding vectors",
		slog.String(logKeyURL, o.ep.display()), slog.String(logKeyModel, r.Model), slog.Int(logKeyStatus, resp.StatusCode),
		slog.Int(logKeyInputs, len(texts)), slog.Int(logKeyTokens, r.Usage.TotalTokens), slog.Duration(logKeyDuration, time.Since(start)))
	return vecs, nil
}

// backoff is the wait before retry number attempt (1-based) when the server
// gave no Retry-After (see provider.Backoff).
func (o *OpenAI) backoff(attempt int) time.Duration {
	return provider.Backoff(attempt, retryBase, retryCap, o.rand())
}

// check puts the vectors of r in input order, checks their number and size,
// and normalises them.
func (o *OpenAI) check(r *embeddingResponse, n int) ([][]float32, error) {
	if len(r.Data) != n {
		return nil, &ResponseError{Reason: fmt.Sprintf("got %d vectors for %d texts", len(r.Data), n)}
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n {
			return nil, &ResponseError{Reason: fmt.Sprintf("vector index %d is outside 0-%d", i, n-1)}
		}
		if out[i] != nil {
			return nil, &ResponseError{Reason: fmt.Sprintf("vector index %d appears twice", i)}
		}
		v, err := decodeVector(d.Embedding)
		if err != nil {
			return nil, &ResponseError{Reason: fmt.Sprintf("vector %d: %v", i, err)}
		}
		if len(v) == 0 {
			return nil, &ResponseError{Reason: fmt.Sprintf("vector %d is empty", i)}
		}
		out[i] = v
	}
	dims := len(out[0])
	for i, v := range out {
		if len(v) != dims {
			return nil, &ResponseError{Reason: fmt.Sprintf("vector %d has %d dimensions, vector 0 has %d", i, len(v), dims)}
		}
		if !Normalize(v) {
			return nil, &ResponseError{Reason: fmt.Sprintf("vector %d has no direction (all zeros or not finite)", i)}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.cfg.Dimensions > 0 && dims != o.cfg.Dimensions:
		return nil, &ResponseError{Reason: fmt.Sprintf("vectors have %d dimensions, EMBEDDING_DIMENSIONS=%d", dims, o.cfg.Dimensions)}
	case o.dims > 0 && dims != o.dims:
		return nil, &ResponseError{Reason: fmt.Sprintf("vectors have %d dimensions, earlier ones had %d (did the endpoint change model?)", dims, o.dims)}
	}
	o.dims = dims
	return out, nil
}

// decodeVector reads an embedding given as a JSON list of numbers or, from a
// server that ignored encoding_format, as base64 little-endian float32s.
func decodeVector(raw json.RawMessage) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("base64 embedding: %w", err)
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("base64 embedding of %d bytes is not float32s", len(b))
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	}
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// APIError is an answer from the endpoint other than 200 OK. It matches
// ErrPermanent unless the status is 408, 429 or 5xx.
type APIError struct {
	StatusCode int
	// Message, Type and Code are the endpoint's own, with the API key
	// removed should the endpoint echo it.
	Message string
	Type    string
	Code    string
	// RetryAfter is the wait the endpoint asked for (Retry-After or
	// retry-after-ms), or 0.
	RetryAfter    time.Duration
	hasRetryAfter bool
}

// Error describes the answer.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "embedding endpoint answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Type != "" || e.Code != "" {
		fmt.Fprintf(&b, " (type %q, code %q)", e.Type, e.Code)
	}
	if e.hasRetryAfter {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Temporary reports whether the same request may succeed later: 408, 429 and
// 5xx answers.
func (e *APIError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout || e.StatusCode >= 500
}

// Is makes errors.Is(err, ErrPermanent) true for answers that are not
// Temporary.
func (e *APIError) Is(target error) bool { return target == ErrPermanent && !e.Temporary() }

// ResponseError is a 200 answer that is not what was asked for: the wrong
// number of vectors, vectors of the wrong or differing sizes, or a body that
// is not an embeddings response. It matches ErrPermanent.
type ResponseError struct {
	Reason string
}

// Error describes what was wrong with the answer.
func (e *ResponseError) Error() string { return "bad embeddings response: " + e.Reason }

// Is makes errors.Is(err, ErrPermanent) true.
func (e *ResponseError) Is(target error) bool { return target == ErrPermanent }
