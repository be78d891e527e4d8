package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

const secret = "sk-secret-3b9f0c2a7d1e"

type harness struct {
	c      *Client
	url    *url.URL
	mu     sync.Mutex
	n      int
	sleeps []time.Duration
	logs   bytes.Buffer
}

// newHarness starts a server answering with respond (given the 0-based
// request number) and a client pointed at it whose waits are recorded.
func newHarness(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request), edit func(*Config)) *harness {
	t.Helper()
	h := &harness{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		h.mu.Lock()
		n := h.n
		h.n++
		h.mu.Unlock()
		respond(n, w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := Config{
		Service: "test", BaseURL: srv.URL, URLVar: "TEST_BASE_URL", TimeoutVar: "TEST_TIMEOUT",
		Timeout: 5 * time.Second, MaxRetries: 3, Secrets: []string{secret},
		Logger: slog.New(slog.NewJSONHandler(&h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			h.sleeps = append(h.sleeps, d)
			h.mu.Unlock()
			return ctx.Err()
		},
		Rand: func() float64 { return 0.5 },
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.c = c
	h.url, _ = url.Parse(srv.URL + "/v1/thing")
	return h
}

func (h *harness) do(ctx context.Context) (*Response, error) {
	return h.c.Do(ctx, Request{URL: h.url, Body: []byte(`{}`), Header: http.Header{"Authorization": {"Bearer " + secret}}})
}

func (h *harness) requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func fail(status int, msg string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"t"}}`, msg)
	}
}

func TestDoRetriesRateLimitHonouringRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0:
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		case 1:
			w.Header().Set("Retry-After", now.Add(8*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			_, _ = io.WriteString(w, `{"ok":true}`)
		}
	}, func(c *Config) { c.Now = func() time.Time { return now } })
	resp, err := h.do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != `{"ok":true}` || resp.Attempts != 4 {
		t.Errorf("body %s after %d attempts, want the 4th answer", resp.Body, resp.Attempts)
	}
	// 3s and 8s as asked; then back-off 3/4 of 2s (third retry, jitter mid).
	if fmt.Sprint(h.sleeps) != "[3s 8s 1.5s]" {
		t.Errorf("waits = %v, want [3s 8s 1.5s]", h.sleeps)
	}
}

func TestDoDoesNotRetryClientErrors(t *testing.T) {
	h := newHarness(t, fail(http.StatusBadRequest, "bad field"), nil)
	_, err := h.do(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 || se.Message != "bad field" || se.Temporary() {
		t.Fatalf("err = %v, want a permanent *StatusError 400 with the server's message", err)
	}
	if h.requests() != 1 || len(h.sleeps) != 0 {
		t.Errorf("a 400 was retried: %d requests", h.requests())
	}
}

func TestDoGivesUpAndMapsStatus(t *testing.T) {
	type mine struct{ error }
	h := newHarness(t, fail(http.StatusInternalServerError, "boom"), func(c *Config) {
		c.MaxRetries = 2
		c.MapStatus = func(se *StatusError) error { return mine{se} }
	})
	_, err := h.do(context.Background())
	var m mine
	if !errors.As(err, &m) || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the mapped error after 3 attempts", err)
	}
	if h.requests() != 3 {
		t.Errorf("%d requests, want 3", h.requests())
	}
}

func TestDoReturnsLongRetryAfterAtOnce(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "600")
		w.WriteHeader(http.StatusTooManyRequests)
	}, func(c *Config) { c.MaxRetryWait = 10 * time.Second })
	_, err := h.do(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.RetryAfter != 10*time.Minute || !strings.Contains(err.Error(), "longer than this process waits") {
		t.Fatalf("err = %v, want the 429 back with its 10m wait", err)
	}
	if len(h.sleeps) != 0 || h.requests() != 1 {
		t.Errorf("waited %v over %d requests", h.sleeps, h.requests())
	}
}

func TestDoAttemptTimeoutIsRetriedThenReported(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}, func(c *Config) { c.Timeout = 30 * time.Millisecond; c.MaxRetries = 1 })
	_, err := h.do(context.Background())
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "TEST_TIMEOUT=30ms") {
		t.Fatalf("err = %v, want ErrTimeout naming TEST_TIMEOUT", err)
	}
	if h.requests() != 2 {
		t.Errorf("%d requests, want 2 (one retry)", h.requests())
	}
}

func TestDoStopsWhenContextIsCancelled(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusServiceUnavailable)
	}, func(c *Config) { c.Sleep = Sleep })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := h.do(ctx)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}

func TestDoRefusesTooLargeAnswer(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 5000))
	}, func(c *Config) { c.MaxResponseBytes = 4096 })
	_, err := h.do(context.Background())
	if !errors.Is(err, ErrTooLarge) || h.requests() != 1 {
		t.Fatalf("err = %v over %d requests, want ErrTooLarge without a retry", err, h.requests())
	}
	h = newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 4096))
	}, func(c *Config) { c.MaxResponseBytes = 4096 })
	if _, err := h.do(context.Background()); err != nil {
		t.Fatalf("an answer of exactly the limit: %v", err)
	}
}

func TestSecretsNeverInErrorsOrLogs(t *testing.T) {
	echo := "bad key " + secret + " (Authorization: Bearer " + secret + ")"
	for _, status := range []int{http.StatusUnauthorized, http.StatusServiceUnavailable} {
		h := newHarness(t, fail(status, echo), func(c *Config) { c.MaxRetries = 1 })
		_, err := h.do(context.Background())
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), secret) {
			t.Errorf("error shows the secret: %v", err)
		}
		if !strings.Contains(err.Error(), "bad key [redacted]") {
			t.Errorf("error lost the server's message: %v", err)
		}
		h.c.logger.Info("config", "provider", h.c.cfg)
		if strings.Contains(h.logs.String(), secret) {
			t.Errorf("logs show the secret:\n%s", h.logs.String())
		}
		if !strings.Contains(h.logs.String(), "test request") {
			t.Errorf("nothing was logged at debug level, so the check proves nothing:\n%s", h.logs.String())
		}
	}
	if s := fmt.Sprintf("%v %#v", Config{Secrets: []string{secret}}, Config{Secrets: []string{secret}}); strings.Contains(s, secret) {
		t.Errorf("Config prints its secret: %s", s)
	}
}

func TestLocalOnlyRefusesRemoteAtNew(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]net.IPAddr, error) {
		switch host {
		case "localhost":
			return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}, {IP: net.ParseIP("::1")}}, nil
		case "api.example.com":
			return []net.IPAddr{{IP: net.ParseIP("203.0.113.7")}}, nil
		}
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	for base, allowed := range map[string]bool{
		"http://127.0.0.1:8080":       true,
		"http://[::1]:8080/v1":        true,
		"http://localhost:11434/v1":   true,
		"https://api.example.com/v1":  false,
		"http://10.0.0.3:8080":        false,
		"http://unknown.example:8080": false,
		"http://[2001:db8::1]/v1":     false,
	} {
		_, err := New(Config{BaseURL: base, URLVar: "RERANKING_BASE_URL", LocalOnly: true, LookupIPAddr: lookup})
		if (err == nil) != allowed {
			t.Errorf("New(%s) = %v, want allowed=%t", base, err, allowed)
		}
		if err != nil && (!strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") || !strings.Contains(err.Error(), "RERANKING_BASE_URL")) {
			t.Errorf("New(%s) = %v, want an error naming RERANKING_BASE_URL and STRATA_LOCAL_ONLY", base, err)
		}
		if _, err := New(Config{BaseURL: base, LookupIPAddr: lookup}); err != nil {
			t.Errorf("without LocalOnly New(%s) = %v", base, err)
		}
	}
	if _, err := New(Config{BaseURL: "http://remote.example/", Socket: "/run/x.sock", LocalOnly: true, LookupIPAddr: lookup}); err != nil {
		t.Errorf("a unix socket was refused: %v", err)
	}
}

func TestLocalOnlyRefusesRemoteAtDial(t *testing.T) {
	// A name can pass New and later resolve elsewhere: the dialer refuses.
	h := newHarness(t, fail(200, ""), func(c *Config) { c.LocalOnly = true })
	h.url.Host = "192.0.2.1:80" // TEST-NET-1, never routed
	start := time.Now()
	_, err := h.do(context.Background())
	if !errors.Is(err, ErrNotLocal) || !strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") {
		t.Fatalf("err = %v, want ErrNotLocal naming STRATA_LOCAL_ONLY", err)
	}
	if time.Since(start) > 2*time.Second || len(h.sleeps) != 0 {
		t.Errorf("the refusal took %v and %d retries; it must be immediate", time.Since(start), len(h.sleeps))
	}
	if h.c.HTTPClient().Transport.(*http.Transport).Proxy != nil {
		t.Error("with LocalOnly the transport still follows HTTP_PROXY")
	}
}

func TestDoRetriesDroppedConnection(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		_, _ = io.WriteString(w, "{}")
	}, nil)
	if _, err := h.do(context.Background()); err != nil || h.requests() != 2 {
		t.Fatalf("err = %v over %d requests, want success on the retry", err, h.requests())
	}
}

func TestRetryAfterAndBackoff(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header, value string
		want          time.Duration
		ok            bool
	}{
		{"Retry-After", "12", 12 * time.Second, true},
		{"Retry-After", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Retry-After", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Retry-After", "soon", 0, false},
		{"Retry-After", "-1", 0, false},
		{"Retry-After-Ms", "250", 250 * time.Millisecond, true},
	} {
		hd := http.Header{}
		hd.Set(tc.header, tc.value)
		if got, ok := RetryAfter(hd, now); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %s = %v, %t; want %v, %t", tc.header, tc.value, got, ok, tc.want, tc.ok)
		}
	}
	prev := time.Duration(0)
	for a := 1; a < 50; a++ {
		d := Backoff(a, DefaultRetryBase, DefaultRetryCap, 0.999)
		if d < prev || d > DefaultRetryCap {
			t.Fatalf("Backoff(%d) = %v after %v", a, d, prev)
		}
		prev = d
	}
	if d := Backoff(1, time.Second, time.Minute, 0); d != 500*time.Millisecond {
		t.Errorf("Backoff(1) low end = %v, want 500ms", d)
	}
}

func TestDisplayURLHidesPasswordAndQuery(t *testing.T) {
	got := DisplayURL("https://user:pw@host/v1?api-key=" + secret)
	if strings.Contains(got, secret) || strings.Contains(got, "pw") || !strings.Contains(got, "host/v1") {
		t.Errorf("DisplayURL = %s", got)
	}
}
