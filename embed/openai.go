package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Retry pacing of the OpenAI-compatible provider.
const (
	retryBase = 500 * time.Millisecond
	retryCap  = 20 * time.Second
	// maxRetryWait is the longest the provider waits before a retry. A
	// server asking for longer (Retry-After) gets the error back at once,
	// carrying its RetryAfter, so a job can be rescheduled instead of
	// holding a worker.
	maxRetryWait = 2 * time.Minute

	maxResponseBytes = 512 << 20
	maxErrorBytes    = 64 << 10
)

// Log attribute keys.
const (
	logKeyURL      = "url"
	logKeyModel    = "model"
	logKeyInputs   = "inputs"
	logKeyBytes    = "bytes"
	logKeyAttempt  = "attempt"
	logKeyStatus   = "status"
	logKeyWait     = "wait"
	logKeyError    = "error"
	logKeyTokens   = "tokens"
	logKeyDuration = "duration"
)

// OpenAI embeds through an endpoint that speaks the OpenAI embeddings API
// (OpenAI, Azure OpenAI behind a gateway, Ollama, vLLM, TEI, LM Studio). It
// splits work into requests of at most Config.BatchSize texts and
// Config.MaxRequestChars bytes, retries 429, 408, 5xx and network failures
// with exponential back-off and jitter (honouring Retry-After), checks the
// count and size of the vectors, and L2-normalises them. It is safe for
// concurrent use.
type OpenAI struct {
	cfg    Config
	ep     endpoint
	name   string
	client *http.Client
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
	return &OpenAI{
		cfg:    cfg,
		ep:     ep,
		name:   name,
		client: &http.Client{Transport: newTransport(ep, cfg.LocalOnly), CheckRedirect: noRedirects},
		logger: logger,
		dims:   cfg.Dimensions,
		sleep:  sleepCtx,
		now:    time.Now,
		rand:   rand.Float64,
	}, nil
}

func newTransport(ep endpoint, localOnly bool) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if localOnly {
		dialer.Control = loopbackOnly
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if localOnly {
		tr.Proxy = nil
	}
	if ep.socket != "" {
		tr.Proxy = nil
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", ep.socket)
		}
	}
	return tr
}

// loopbackOnly is a net.Dialer.Control that refuses any TCP or UDP address
// that is not a loopback one; unix sockets pass.
func loopbackOnly(network, address string, _ syscall.RawConn) error {
	if strings.HasPrefix(network, "unix") {
		return nil
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing to connect to %s: %w", address, errNotLocal)
}

// errNotLocal is why a connection off the machine was refused.
var errNotLocal = errors.New("not on this machine, and STRATA_LOCAL_ONLY=true")

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

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
	size := 0
	for i, t := range texts {
		if t == "" {
			t = " "
		}
		input[i] = t
		size += len(t)
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
	attempts := o.cfg.MaxRetries + 1
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.logger.DebugContext(ctx, "embedding request",
			slog.String(logKeyURL, o.ep.display()), slog.String(logKeyModel, o.cfg.ModelName),
			slog.Int(logKeyInputs, len(texts)), slog.Int(logKeyBytes, size), slog.Int(logKeyAttempt, attempt))
		vecs, err := o.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last failure: %v)", ctx.Err(), err)
		}
		if errors.Is(err, ErrPermanent) {
			return nil, err
		}
		if attempt >= attempts {
			return nil, fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		wait := o.backoff(attempt)
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.hasRetryAfter {
			wait = apiErr.RetryAfter
		}
		if wait > maxRetryWait {
			return nil, fmt.Errorf("endpoint asks to retry in %s, longer than this process waits (%s): %w", wait.Round(time.Second), maxRetryWait, err)
		}
		if dl, ok := ctx.Deadline(); ok && o.now().Add(wait).After(dl) {
			return nil, fmt.Errorf("no time left to retry in %s before the deadline: %w", wait.Round(time.Millisecond), err)
		}
		o.logger.WarnContext(ctx, "embedding request failed; retrying",
			slog.String(logKeyURL, o.ep.display()), slog.Int(logKeyAttempt, attempt),
			slog.Duration(logKeyWait, wait), slog.String(logKeyError, err.Error()))
		if serr := o.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (while waiting to retry after: %v)", serr, err)
		}
	}
}

// backoff is the wait before retry number attempt (1-based) when the server
// gave no Retry-After: exponential from retryBase up to retryCap, with the
// upper half jittered so that many workers do not retry in step.
func (o *OpenAI) backoff(attempt int) time.Duration {
	d := retryBase << min(attempt-1, 16)
	if d > retryCap || d <= 0 {
		d = retryCap
	}
	return d/2 + time.Duration(o.rand()*float64(d/2))
}

// post makes one attempt.
func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	actx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, o.ep.url.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", ErrPermanent)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "stratakb-embed")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	start := time.Now()
	resp, err := o.client.Do(req)
	if err != nil {
		// *url.Error repeats the URL, which may hold a key in its query.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, errNotLocal) {
			// Retrying cannot help: the endpoint's name leads off the machine.
			return nil, fmt.Errorf("post %s: %s: %w", o.ep.display(), o.redact(err.Error()), ErrPermanent)
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("post %s: no answer within EMBEDDING_TIMEOUT=%s", o.ep.display(), o.cfg.Timeout)
		}
		return nil, fmt.Errorf("post %s: %s", o.ep.display(), o.redact(err.Error()))
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		apiErr := &APIError{StatusCode: resp.StatusCode}
		apiErr.Message, apiErr.Type, apiErr.Code = parseErrorBody(raw)
		apiErr.Message = o.redact(apiErr.Message)
		apiErr.Type, apiErr.Code = o.redact(apiErr.Type), o.redact(apiErr.Code)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			apiErr.Message = "unexpected redirect; set EMBEDDING_BASE_URL to the final address"
		}
		apiErr.RetryAfter, apiErr.hasRetryAfter = retryAfter(resp.Header, o.now())
		return nil, apiErr
	}

	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("read answer from %s: %s", o.ep.display(), o.redact(err.Error()))
	}
	var r embeddingResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &ResponseError{Reason: "the answer is not an embeddings response: " + o.redact(err.Error())}
	}
	vecs, err := o.check(&r, n)
	if err != nil {
		return nil, err
	}
	o.logger.DebugContext(ctx, "embedding response",
		slog.String(logKeyURL, o.ep.display()), slog.String(logKeyModel, r.Model), slog.Int(logKeyStatus, resp.StatusCode),
		slog.Int(logKeyInputs, n), slog.Int(logKeyTokens, r.Usage.TotalTokens), slog.Duration(logKeyDuration, time.Since(start)))
	return vecs, nil
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

// parseErrorBody pulls the message out of an error answer: OpenAI's
// {"error":{"message","type","code"}}, the {"error":"..."} of Ollama and
// TEI, FastAPI's {"detail":...}, or else the start of the body as text.
func parseErrorBody(raw []byte) (msg, typ, code string) {
	var env struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		Msg    string          `json:"message"`
	}
	if json.Unmarshal(raw, &env) == nil {
		var s string
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		switch {
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &s) == nil && s != "":
			return s, "", ""
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &obj) == nil && obj.Message != "":
			code := strings.Trim(string(obj.Code), `"`)
			if code == "null" {
				code = ""
			}
			return obj.Message, obj.Type, code
		case len(env.Detail) > 0:
			if json.Unmarshal(env.Detail, &s) == nil {
				return s, "", ""
			}
			return clip(string(env.Detail), 300), "", ""
		case env.Msg != "":
			return env.Msg, "", ""
		}
	}
	return clip(strings.TrimSpace(string(raw)), 300), "", ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// retryAfter reads the wait a server asks for: OpenAI's retry-after-ms, or
// Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, 1<<31)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// redact removes the API key from text that came from the server or the
// network stack, which may echo it.
func (o *OpenAI) redact(s string) string {
	if o.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, o.cfg.APIKey, "[redacted]")
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
