// Package provider is the HTTP plumbing shared by the clients of outside
// model services: embedding endpoints, rerank endpoints and the language
// models that rewrite queries. It imports nothing of this repository.
//
// A Client posts a request body to one endpoint and returns the body of the
// first 2xx answer. On the way it
//
//   - bounds each attempt by Config.Timeout (Request.Timeout overrides it);
//   - retries 408, 429, 5xx answers, network failures and timed-out attempts
//     up to Config.MaxRetries times, with exponential back-off and jitter, or
//     after the wait the server asks for (Retry-After in seconds or as an
//     HTTP date, or retry-after-ms); a server asking for longer than
//     Config.MaxRetryWait, or for more than the context's deadline leaves,
//     gets its answer returned at once;
//   - stops as soon as the context is cancelled, also while waiting;
//   - refuses an answer larger than Config.MaxResponseBytes (ErrTooLarge);
//   - removes every Config.Secrets value from errors and log lines, and shows
//     URLs without passwords or query strings (which may hold keys);
//   - with Config.LocalOnly (STRATA_LOCAL_ONLY=true), refuses at New an
//     endpoint whose host is not this machine, and refuses again, when it
//     dials, any address that is not a loopback one, ignoring proxy settings,
//     so that a name which later resolves elsewhere cannot carry text off the
//     machine (ErrNotLocal).
//
// Errors: *StatusError for a non-2xx answer (Config.MapStatus may turn it
// into the caller's own type), and errors matching ErrTimeout, ErrNotLocal,
// ErrTooLarge or the context's error; any other failure is a network one
// (*TransportError). Classify them with errors.Is and errors.As.
package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxRetryWait     = 2 * time.Minute
	DefaultMaxResponseBytes = 16 << 20
	// DefaultRetryBase and DefaultRetryCap pace the back-off when the server
	// gives no Retry-After: the first retry waits about DefaultRetryBase, each
	// later one twice as long, never more than DefaultRetryCap.
	DefaultRetryBase = 500 * time.Millisecond
	DefaultRetryCap  = 20 * time.Second

	maxErrorBytes = 64 << 10
)

// Log attribute keys.
const (
	logKeyURL      = "url"
	logKeyAttempt  = "attempt"
	logKeyStatus   = "status"
	logKeyWait     = "wait"
	logKeyError    = "error"
	logKeyBytes    = "bytes"
	logKeyDuration = "duration"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotLocal: STRATA_LOCAL_ONLY=true and the endpoint is not on this
	// machine. Never retried.
	ErrNotLocal = errors.New("not on this machine, and STRATA_LOCAL_ONLY=true")
	// ErrTimeout: an attempt got no complete answer within its timeout (the
	// caller's own context still had time).
	ErrTimeout = errors.New("no answer in time")
	// ErrTooLarge: the answer was larger than Config.MaxResponseBytes.
	// Never retried.
	ErrTooLarge = errors.New("answer too large")
)

// Config describes one endpoint's client. Only BaseURL is required.
type Config struct {
	// Service names the other side in messages and log lines, such as
	// "embedding" or "rerank" ("rerank request failed; retrying").
	Service string
	// BaseURL is the endpoint's address, checked at New against LocalOnly.
	// Requests may go to any path on the same host.
	BaseURL string
	// Socket, when set, is a unix socket every request goes through,
	// whatever the URL's host; it counts as this machine.
	Socket string
	// URLVar and TimeoutVar are the variables named in messages about the
	// address and the timeout (such as RERANKING_BASE_URL and
	// RERANKING_TIMEOUT).
	URLVar     string
	TimeoutVar string
	// Timeout bounds one attempt, from sending to the last byte of the
	// answer. 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is repeated.
	MaxRetries int
	// MaxRetryWait is the longest wait before a retry; 0 means
	// DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// RetryBase and RetryCap pace the back-off; 0 means the defaults.
	RetryBase, RetryCap time.Duration
	// MaxResponseBytes bounds the body of an answer; 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// LocalOnly allows only this machine (STRATA_LOCAL_ONLY).
	LocalOnly bool
	// Secrets are removed from every error and log line (API keys).
	Secrets []string
	// Logger gets a debug line per attempt and a warning per retry; nil
	// logs nothing.
	Logger *slog.Logger
	// UserAgent is sent on every request; empty means "stratakb".
	UserAgent string
	// MapStatus, when set, turns a non-2xx answer into the error the
	// caller returns (its own API error type); retries are decided on the
	// *StatusError before it is mapped. The result should keep the
	// server's wait in its message if it matters to the caller.
	MapStatus func(*StatusError) error

	// LookupIPAddr resolves host names for the LocalOnly check at New; nil
	// means net.DefaultResolver.
	LookupIPAddr func(ctx context.Context, host string) ([]net.IPAddr, error)
	// Sleep, Now and Rand are the clock and the jitter; nil means the real
	// ones. Tests replace them.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	Rand  func() float64
}

// String describes the configuration without its secrets.
func (c Config) String() string {
	return fmt.Sprintf("service=%s url=%s socket=%s timeout=%s retries=%d local_only=%t secrets=%d",
		c.Service, DisplayURL(c.BaseURL), c.Socket, c.Timeout, c.MaxRetries, c.LocalOnly, len(c.Secrets))
}

// GoString makes %#v print the same as String, so no verb shows a secret.
func (c Config) GoString() string { return "provider.Config{" + c.String() + "}" }

// LogValue makes slog log the configuration without its secrets.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

var _ slog.LogValuer = Config{}

// Client posts requests to one endpoint. It is safe for concurrent use.
type Client struct {
	cfg    Config
	http   *http.Client
	logger *slog.Logger
	redact *strings.Replacer
}

// New checks cfg and builds the client. With cfg.LocalOnly it refuses a
// BaseURL whose host is not this machine, with an error naming
// cfg.URLVar and STRATA_LOCAL_ONLY.
func New(cfg Config) (*Client, error) {
	if cfg.Service == "" {
		cfg.Service = "provider"
	}
	if cfg.URLVar == "" {
		cfg.URLVar = "base URL"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("%s client: %d retries", cfg.Service, cfg.MaxRetries)
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryCap <= 0 {
		cfg.RetryCap = DefaultRetryCap
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "stratakb"
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil {
		return nil, fmt.Errorf("%s: not a URL", cfg.URLVar)
	}
	if cfg.Socket == "" && (u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "") {
		return nil, fmt.Errorf("%s: %s is not an http or https URL with a host", cfg.URLVar, DisplayURL(cfg.BaseURL))
	}
	if cfg.LocalOnly && cfg.Socket == "" {
		lookup := cfg.LookupIPAddr
		if lookup == nil {
			lookup = net.DefaultResolver.LookupIPAddr
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := CheckLocal(ctx, u.Hostname(), lookup)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w; STRATA_LOCAL_ONLY=true allows only this machine (localhost, 127.0.0.1 or [::1])", cfg.URLVar, err)
		}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:    cfg,
		http:   &http.Client{Transport: NewTransport(cfg.LocalOnly, cfg.Socket), CheckRedirect: noRedirects},
		logger: logger,
		redact: Redactor(cfg.Secrets...),
	}
	return c, nil
}

// HTTPClient is the client's own *http.Client, for inspection.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Redact removes the client's secrets from s.
func (c *Client) Redact(s string) string { return c.redact.Replace(s) }

// Request is one POST.
type Request struct {
	// URL is where the request goes; it must be on the BaseURL's host
	// (over Config.Socket when that is set).
	URL *url.URL
	// Header holds extra headers (authentication, API versions).
	// Content-Type and Accept default to application/json.
	Header http.Header
	Body   []byte
	// Timeout overrides Config.Timeout for this request when above 0.
	Timeout time.Duration
	// LogAttrs are added to the client's log lines about this request.
	LogAttrs []slog.Attr
}

// Response is a 2xx answer.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	// Attempts is how many attempts it took, 1 when the first succeeded.
	Attempts int
}

// Do posts req, retrying as the package comment describes, and returns the
// first 2xx answer.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	if req.URL == nil {
		return nil, errors.New("provider request without a URL")
	}
	where := c.display(req.URL)
	attempts := c.cfg.MaxRetries + 1
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.logger.LogAttrs(ctx, slog.LevelDebug, c.cfg.Service+" request",
			append([]slog.Attr{slog.String(logKeyURL, where), slog.Int(logKeyAttempt, attempt),
				slog.Int(logKeyBytes, len(req.Body))}, req.LogAttrs...)...)
		start := time.Now()
		resp, err := c.attempt(ctx, req, where)
		if err == nil {
			resp.Attempts = attempt
			c.logger.LogAttrs(ctx, slog.LevelDebug, c.cfg.Service+" response",
				append([]slog.Attr{slog.String(logKeyURL, where), slog.Int(logKeyStatus, resp.StatusCode),
					slog.Int(logKeyBytes, len(resp.Body)), slog.Duration(logKeyDuration, time.Since(start))}, req.LogAttrs...)...)
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last failure: %v)", ctx.Err(), err)
		}
		if !Retryable(err) {
			return nil, c.mapErr(err)
		}
		if attempt >= attempts {
			return nil, fmt.Errorf("gave up after %d attempts: %w", attempt, c.mapErr(err))
		}
		wait := Backoff(attempt, c.cfg.RetryBase, c.cfg.RetryCap, c.cfg.Rand())
		var se *StatusError
		if errors.As(err, &se) && se.HasRetryAfter {
			wait = se.RetryAfter
		}
		if wait > c.cfg.MaxRetryWait {
			return nil, fmt.Errorf("%s asks to retry in %s, longer than this process waits (%s): %w",
				where, wait.Round(time.Second), c.cfg.MaxRetryWait, c.mapErr(err))
		}
		if dl, ok := ctx.Deadline(); ok && c.cfg.Now().Add(wait).After(dl) {
			return nil, fmt.Errorf("no time left to retry in %s before the deadline: %w", wait.Round(time.Millisecond), c.mapErr(err))
		}
		c.logger.LogAttrs(ctx, slog.LevelWarn, c.cfg.Service+" request failed; retrying",
			append([]slog.Attr{slog.String(logKeyURL, where), slog.Int(logKeyAttempt, attempt),
				slog.Duration(logKeyWait, wait), slog.String(logKeyError, err.Error())}, req.LogAttrs...)...)
		if serr := c.cfg.Sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (while waiting to retry after: %v)", serr, c.mapErr(err))
		}
	}
}

func (c *Client) mapErr(err error) error {
	var se *StatusError
	if c.cfg.MapStatus != nil && errors.As(err, &se) {
		if m := c.cfg.MapStatus(se); m != nil {
			return m
		}
	}
	return err
}

// attempt makes one attempt.
func (c *Client) attempt(ctx context.Context, req Request, where string) (*Response, error) {
	timeout := c.cfg.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, req.URL.String(), bytes.NewReader(req.Body))
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %s", where, c.Redact(err.Error()))
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	if hr.Header.Get("Content-Type") == "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if hr.Header.Get("Accept") == "" {
		hr.Header.Set("Accept", "application/json")
	}
	hr.Header.Set("User-Agent", c.cfg.UserAgent)
	timedOut := func() error {
		return fmt.Errorf("post %s: no answer within %s: %w", where, c.timeoutText(timeout), ErrTimeout)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		// *url.Error repeats the URL, which may hold a key in its query.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		switch {
		case errors.Is(err, ErrNotLocal):
			return nil, fmt.Errorf("post %s: %s: %w", where, c.Redact(err.Error()), ErrNotLocal)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, timedOut()
		}
		return nil, &TransportError{Op: "post " + where, Msg: c.Redact(err.Error())}
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := readLimited(resp.Body, maxErrorBytes)
		se := &StatusError{Service: c.cfg.Service, StatusCode: resp.StatusCode}
		se.Message, se.Type, se.Code = ParseErrorBody(raw)
		se.Message, se.Type, se.Code = c.Redact(se.Message), c.Redact(se.Type), c.Redact(se.Code)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			se.Message = "unexpected redirect; set " + c.cfg.URLVar + " to the final address"
		}
		se.RetryAfter, se.HasRetryAfter = RetryAfter(resp.Header, c.cfg.Now())
		return nil, se
	}
	raw, err := readLimited(resp.Body, c.cfg.MaxResponseBytes)
	if err != nil {
		switch {
		case errors.Is(err, ErrTooLarge):
			return nil, fmt.Errorf("read answer from %s: more than %d bytes: %w", where, c.cfg.MaxResponseBytes, ErrTooLarge)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, timedOut()
		}
		return nil, &TransportError{Op: "read answer from " + where, Msg: c.Redact(err.Error())}
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

func (c *Client) timeoutText(d time.Duration) string {
	if c.cfg.TimeoutVar == "" {
		return d.String()
	}
	return c.cfg.TimeoutVar + "=" + d.String()
}

func (c *Client) display(u *url.URL) string {
	if c.cfg.Socket != "" {
		return "unix://" + c.cfg.Socket + u.Path
	}
	return displayParsed(u)
}

// Retryable reports whether an error from one attempt may go away if the
// request is repeated: 408, 429 and 5xx answers, timeouts and network
// failures.
func Retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Temporary()
	}
	var te *TransportError
	return errors.Is(err, ErrTimeout) || errors.As(err, &te)
}

// TransportError is a network failure: the connection could not be made or
// broke before the answer was read. Msg has the secrets removed.
type TransportError struct {
	Op  string
	Msg string
}

// Error describes the failure.
func (e *TransportError) Error() string { return e.Op + ": " + e.Msg }

// StatusError is an answer other than 2xx.
type StatusError struct {
	// Service is Config.Service, used in the message.
	Service    string
	StatusCode int
	// Message, Type and Code are the server's own, with secrets removed.
	Message, Type, Code string
	// RetryAfter is the wait the server asked for, when HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Error describes the answer.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s endpoint answered %d %s", e.Service, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Type != "" || e.Code != "" {
		fmt.Fprintf(&b, " (type %q, code %q)", e.Type, e.Code)
	}
	if e.HasRetryAfter {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Temporary reports whether the same request may succeed later: 408, 429
// and 5xx answers.
func (e *StatusError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout || e.StatusCode >= 500
}

// NewTransport builds the transport a Client uses: with localOnly its dialer
// refuses any address that is not a loopback one and proxies are ignored;
// with a socket every connection goes to that unix socket.
func NewTransport(localOnly bool, socket string) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if localOnly {
		dialer.Control = LoopbackOnly
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
	if socket != "" {
		tr.Proxy = nil
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", socket)
		}
	}
	return tr
}

// LoopbackOnly is a net.Dialer.Control that refuses any TCP or UDP address
// that is not a loopback one, with an error matching ErrNotLocal; unix
// sockets pass.
func LoopbackOnly(network, address string, _ syscall.RawConn) error {
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
	return fmt.Errorf("refusing to connect to %s: %w", address, ErrNotLocal)
}

// CheckLocal reports why host is not this machine, or nil when it is a
// loopback address or a name that resolves only to loopback addresses
// (localhost). lookup resolves names.
func CheckLocal(ctx context.Context, host string, lookup func(context.Context, string) ([]net.IPAddr, error)) error {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return fmt.Errorf("host %s is not a loopback address", host)
		}
		return nil
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return fmt.Errorf("host %s does not resolve here, so it cannot be shown to be on this machine (%w)", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("host %s resolves to no address", host)
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return fmt.Errorf("host %s resolves to %s, which is not a loopback address", host, a.IP)
		}
	}
	return nil
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Sleep waits d or until ctx is done, whichever comes first, and returns
// ctx's error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff is the wait before retry number attempt (1-based) when the server
// gave no Retry-After: exponential from base up to limit, with the upper
// half jittered by r (in [0, 1)) so that many clients do not retry in step.
func Backoff(attempt int, base, limit time.Duration, r float64) time.Duration {
	d := base << min(max(attempt-1, 0), 16)
	if d > limit || d <= 0 {
		d = limit
	}
	return d/2 + time.Duration(r*float64(d/2))
}
