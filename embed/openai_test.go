package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "sk-test-7f3a9c1e5b2d4f6a8c0e"

// fakeVec is the deterministic, unnormalised vector the fake server returns
// for text.
func fakeVec(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := h.Sum64()
	v := make([]float32, dims)
	for j := range v {
		v[j] = float32((seed>>(uint(j)%56))&0xff) + 1
	}
	return v
}

func unit(v []float32) []float32 {
	out := append([]float32(nil), v...)
	Normalize(out)
	return out
}

// wireRequest is a request as the fake server saw it.
type wireRequest struct {
	Auth string
	Path string
	Body map[string]json.RawMessage
	In   []string
}

// fakeEndpoint records requests and answers each with respond, which gets
// the 0-based request number.
type fakeEndpoint struct {
	mu      sync.Mutex
	reqs    []wireRequest
	respond func(n int, w http.ResponseWriter, r *http.Request, in []string)
}

func (f *fakeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]json.RawMessage
	_ = json.Unmarshal(raw, &body)
	var in []string
	_ = json.Unmarshal(body["input"], &in)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, wireRequest{Auth: r.Header.Get("Authorization"), Path: r.URL.Path, Body: body, In: in})
	f.mu.Unlock()
	f.respond(n, w, r, in)
}

func (f *fakeEndpoint) requests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wireRequest(nil), f.reqs...)
}

// writeVectors answers in the OpenAI wire format with fakeVec vectors, in
// reverse order so that the client must reorder them by index.
func writeVectors(w http.ResponseWriter, in []string, dims int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(in))
	for i := len(in) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, fakeVec(in[i], dims)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  "test-model",
		"usage":  map[string]int{"prompt_tokens": len(in), "total_tokens": len(in)},
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil},
	})
}

type harness struct {
	o      *OpenAI
	fake   *fakeEndpoint
	sleeps []time.Duration
	logs   *bytes.Buffer
}

// newHarness starts a fake endpoint and an OpenAI provider pointed at it,
// whose waits are recorded instead of slept.
func newHarness(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request, in []string), edit func(*Config)) *harness {
	t.Helper()
	h := &harness{fake: &fakeEndpoint{respond: respond}, logs: &bytes.Buffer{}}
	srv := httptest.NewServer(h.fake)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.Provider = ProviderOpenAI
	cfg.BaseURL = srv.URL + "/v1"
	cfg.ModelName = "test-model"
	cfg.BatchSize = DefaultRemoteBatchSize
	cfg.APIKey = testKey
	if edit != nil {
		edit(&cfg)
	}
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o, err := NewOpenAI(cfg, logger)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	var mu sync.Mutex
	o.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		h.sleeps = append(h.sleeps, d)
		mu.Unlock()
		return ctx.Err()
	}
	o.rand = func() float64 { return 0.5 }
	h.o = o
	return h
}

func ok(dims int) func(int, http.ResponseWriter, *http.Request, []string) {
	return func(_ int, w http.ResponseWriter, _ *http.Request, in []string) { writeVectors(w, in, dims) }
}

func TestOpenAIReordersByIndexAndNormalises(t *testing.T) {
	h := newHarness(t, ok(6), nil)
	if got := h.o.Model(); got.Name != "openai_compatible:test-model" || got.Dims != 0 {
		t.Fatalf("Model() before any answer = %+v, want name openai_compatible:test-model and unknown dims", got)
	}
	texts := []string{"notice period", "termination for cause", "governing law"}
	vecs, err := h.o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vecs), len(texts))
	}
	for i, text := range texts {
		want := unit(fakeVec(text, 6))
		for j := range want {
			if math.Abs(float64(vecs[i][j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d (%q) = %v, want %v: not the text's own vector", i, text, vecs[i], want)
			}
		}
		var norm float64
		for _, x := range vecs[i] {
			norm += float64(x) * float64(x)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("vector %d has squared norm %v, want 1", i, norm)
		}
	}
	if got := h.o.Model().Dims; got != 6 {
		t.Errorf("Model().Dims after an answer = %d, want 6", got)
	}

	reqs := h.fake.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/embeddings" {
		t.Errorf("posted to %s, want /v1/embeddings", r.Path)
	}
	if r.Auth != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the bearer key", r.Auth)
	}
	if string(r.Body["model"]) != `"test-model"` || string(r.Body["encoding_format"]) != `"float"` {
		t.Errorf("request body = %v, want model test-model and encoding_format float", r.Body)
	}
	if _, has := r.Body["dimensions"]; has {
		t.Errorf("request sends dimensions although EMBEDDING_DIMENSIONS is unset: %v", r.Body)
	}
	if strings.Join(r.In, "|") != strings.Join(texts, "|") {
		t.Errorf("input = %q, want %q", r.In, texts)
	}
}

func TestOpenAIWithoutKeySendsNoAuthorization(t *testing.T) {
	h := newHarness(t, ok(3), func(c *Config) { c.APIKey = "" })
	if _, err := h.o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.requests()[0].Auth; got != "" {
		t.Errorf("Authorization = %q with no key set, want none", got)
	}
}

func TestOpenAISendsDimensionsAndNamesThem(t *testing.T) {
	h := newHarness(t, ok(8), func(c *Config) { c.Dimensions = 8 })
	if got := h.o.Model(); got.Name != "openai_compatible:test-model@8" || got.Dims != 8 {
		t.Fatalf("Model() = %+v, want openai_compatible:test-model@8 with 8 dims", got)
	}
	if _, err := h.o.Embed(context.Background(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if got := string(h.fake.requests()[0].Body["dimensions"]); got != "8" {
		t.Errorf("dimensions in request = %q, want 8", got)
	}
}

func TestOpenAIEmptyInputs(t *testing.T) {
	h := newHarness(t, ok(3), nil)
	vecs, err := h.o.Embed(context.Background(), nil)
	if err != nil || len(vecs) != 0 {
		t.Fatalf("Embed(nil) = %d vectors, %v; want none and no error", len(vecs), err)
	}
	if n := len(h.fake.requests()); n != 0 {
		t.Fatalf("Embed(nil) made %d requests, want 0", n)
	}
	if _, err := h.o.Embed(context.Background(), []string{"", "x"}); err != nil {
		t.Fatal(err)
	}
	if in := h.fake.requests()[0].In; in[0] != " " {
		t.Errorf("empty text sent as %q, want a single space (OpenAI refuses empty input)", in[0])
	}
}

func TestOpenAIBatchesByCountAndSize(t *testing.T) {
	h := newHarness(t, ok(4), func(c *Config) { c.BatchSize = 3 })
	var texts []string
	for i := range 10 {
		texts = append(texts, fmt.Sprintf("text number %d", i))
	}
	vecs, err := h.o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.fake.requests()
	var sizes []int
	for _, r := range reqs {
		sizes = append(sizes, len(r.In))
	}
	if fmt.Sprint(sizes) != "[3 3 3 1]" {
		t.Errorf("request sizes = %v, want [3 3 3 1]", sizes)
	}
	for i, text := range texts {
		if want := unit(fakeVec(text, 4)); math.Abs(float64(vecs[i][0]-want[0])) > 1e-6 {
			t.Fatalf("vector %d does not belong to %q after batching", i, text)
		}
	}

	h = newHarness(t, ok(4), func(c *Config) { c.BatchSize = 100; c.MaxRequestChars = 100 })
	forty := strings.Repeat("x", 39)
	texts = []string{forty + "a", forty + "b", forty + "c", strings.Repeat("y", 150), forty + "d"}
	if _, err := h.o.Embed(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	sizes = nil
	for _, r := range h.fake.requests() {
		sizes = append(sizes, len(r.In))
	}
	if fmt.Sprint(sizes) != "[2 1 1 1]" {
		t.Errorf("with a 100-byte cap, request sizes = %v, want [2 1 1 1] (the 150-byte text alone)", sizes)
	}
}

func TestSplitBatches(t *testing.T) {
	for _, tc := range []struct {
		lens       []int
		maxN, maxB int
		want       string
	}{
		{nil, 3, 100, "[]"},
		{[]int{1, 1, 1}, 3, 100, "[[0 3]]"},
		{[]int{1, 1, 1, 1}, 3, 100, "[[0 3] [3 4]]"},
		{[]int{60, 60, 30}, 10, 100, "[[0 1] [1 3]]"},
		{[]int{200, 1}, 10, 100, "[[0 1] [1 2]]"},
		{[]int{0, 0, 0}, 10, 2, "[[0 2] [2 3]]"}, // empty texts still count
	} {
		var texts []string
		for _, n := range tc.lens {
			texts = append(texts, strings.Repeat("a", n))
		}
		if got := fmt.Sprint(splitBatches(texts, tc.maxN, tc.maxB)); got != tc.want {
			t.Errorf("splitBatches(%v, %d, %d) = %s, want %s", tc.lens, tc.maxN, tc.maxB, got, tc.want)
		}
	}
}

func TestOpenAIHonoursRetryAfterSeconds(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, r *http.Request, in []string) {
		if n == 0 {
			w.Header().Set("Retry-After", "7")
			writeError(w, http.StatusTooManyRequests, "rate limit reached")
			return
		}
		writeVectors(w, in, 3)
	}, nil)
	if _, err := h.o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("Embed after one 429: %v", err)
	}
	if fmt.Sprint(h.sleeps) != "[7s]" {
		t.Errorf("waits = %v, want [7s] as Retry-After asked", h.sleeps)
	}
	if n := len(h.fake.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestOpenAIHonoursRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, func(n int, w http.ResponseWriter, r *http.Request, in []string) {
		if n == 0 {
			w.Header().Set("Retry-After", now.Add(45*time.Second).Format(http.TimeFormat))
			writeError(w, http.StatusTooManyRequests, "slow down")
			return
		}
		writeVectors(w, in, 3)
	}, nil)
	h.o.now = func() time.Time { return now }
	if _, err := h.o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(h.sleeps) != "[45s]" {
		t.Errorf("waits = %v, want [45s] until the Retry-After date", h.sleeps)
	}
}

func TestOpenAIBacksOffOn503ThenSucceeds(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, r *http.Request, in []string) {
		if n < 2 {
			writeError(w, http.StatusServiceUnavailable, "model is loading")
			return
		}
		writeVectors(w, in, 3)
	}, nil)
	vecs, err := h.o.Embed(context.Background(), []string{"a", "b"})
	if err != nil || len(vecs) != 2 {
		t.Fatalf("Embed after two 503s = %d vectors, %v", len(vecs), err)
	}
	// With the jitter fixed at its middle: 3/4 of 500ms, then of 1s.
	if fmt.Sprint(h.sleeps) != "[375ms 750ms]" {
		t.Errorf("waits = %v, want exponential back-off [375ms 750ms]", h.sleeps)
	}
	if !strings.Contains(h.logs.String(), "model is loading") {
		t.Errorf("the retry was not logged with the server's message:\n%s", h.logs)
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	o := &OpenAI{rand: func() float64 { return 0 }}
	if got := o.backoff(1); got != 250*time.Millisecond {
		t.Errorf("backoff(1) low end = %v, want 250ms", got)
	}
	o.rand = func() float64 { return 0.999999 }
	prev := time.Duration(0)
	for a := 1; a <= 40; a++ {
		d := o.backoff(a)
		if d > retryCap || d < prev {
			t.Fatalf("backoff(%d) = %v after %v: must grow and stay under %v", a, d, prev, retryCap)
		}
		prev = d
	}
}

func TestOpenAIPermanentErrorOn400(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		writeError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens")
	}, nil)
	_, err := h.o.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, ErrPermanent) {
		t.Fatalf("400 answer: err = %v, want one matching ErrPermanent", err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "maximum context length") || apiErr.Type != "invalid_request_error" {
		t.Fatalf("400 answer: err = %#v, want *APIError with status 400 and the server's message", err)
	}
	if !strings.Contains(err.Error(), "maximum context length is 8192 tokens") {
		t.Errorf("error %q does not carry the server's message", err)
	}
	if n := len(h.fake.requests()); n != 1 || len(h.sleeps) != 0 {
		t.Errorf("a 400 was retried: %d requests, waits %v", n, h.sleeps)
	}
}

func TestOpenAIGivesUpAfterMaxRetries(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		writeError(w, http.StatusInternalServerError, "boom")
	}, func(c *Config) { c.MaxRetries = 2 })
	_, err := h.o.Embed(context.Background(), []string{"a"})
	if err == nil || errors.Is(err, ErrPermanent) {
		t.Fatalf("500s: err = %v, want a transient error", err)
	}
	if n := len(h.fake.requests()); n != 3 {
		t.Errorf("%d requests with EMBEDDING_MAX_RETRIES=2, want 3", n)
	}
	if !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error %q does not say it gave up, or lost the server's message", err)
	}
}

func TestOpenAIReturnsLongRetryAfterToCaller(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		w.Header().Set("Retry-After", "3600")
		writeError(w, http.StatusTooManyRequests, "quota exceeded")
	}, nil)
	_, err := h.o.Embed(context.Background(), []string{"a"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Hour {
		t.Fatalf("err = %v, want *APIError with RetryAfter 1h", err)
	}
	if errors.Is(err, ErrPermanent) {
		t.Errorf("a 429 counts as permanent: %v", err)
	}
	if len(h.sleeps) != 0 || len(h.fake.requests()) != 1 {
		t.Errorf("waited %v over %d requests; an hour-long Retry-After must come back at once", h.sleeps, len(h.fake.requests()))
	}
}

func TestOpenAIDoesNotWaitPastDeadline(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, "busy")
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := h.o.Embed(ctx, []string{"a"})
	if err == nil || len(h.sleeps) != 0 || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("err = %v after waits %v; want the 503 back at once, since the deadline comes first", err, h.sleeps)
	}
}

func TestOpenAIRejectsBadResponses(t *testing.T) {
	for _, tc := range []struct {
		name string
		dims int
		body string
		want string
	}{
		{"too few vectors", 0, `{"data":[{"index":0,"embedding":[1,2,3]}]}`, "got 1 vectors for 2 texts"},
		{"too many vectors", 0, `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1]},{"index":2,"embedding":[1]}]}`, "got 3 vectors for 2 texts"},
		{"mixed sizes", 0, `{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2]}]}`, "vector 1 has 2 dimensions"},
		{"not EMBEDDING_DIMENSIONS", 4, `{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, "EMBEDDING_DIMENSIONS=4"},
		{"duplicate index", 0, `{"data":[{"index":1,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`, "appears twice"},
		{"index out of range", 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":5,"embedding":[1,2]}]}`, "outside"},
		{"zero vector", 0, `{"data":[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[1,2]}]}`, "no direction"},
		{"not JSON", 0, `<html>gateway</html>`, "not an embeddings response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
				_, _ = io.WriteString(w, tc.body)
			}, func(c *Config) { c.Dimensions = tc.dims })
			_, err := h.o.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a permanent error saying %q", err, tc.want)
			}
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Errorf("err = %T, want *ResponseError in the chain", err)
			}
			if n := len(h.fake.requests()); n != 1 {
				t.Errorf("a bad response was retried: %d requests", n)
			}
		})
	}
}

func TestOpenAIAcceptsMissingIndexAndBase64(t *testing.T) {
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		// [3, 4] as little-endian float32s is AABAQAAAgEA=.
		_, _ = io.WriteString(w, `{"data":[{"embedding":"AABAQAAAgEA="},{"embedding":[0,2]}]}`)
	}, nil)
	vecs, err := h.o.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(vecs) != "[[0.6 0.8] [0 1]]" {
		t.Errorf("vectors = %v, want [[0.6 0.8] [0 1]]", vecs)
	}
}

func TestOpenAIRefusesDimensionChangeBetweenCalls(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, _ *http.Request, in []string) {
		writeVectors(w, in, 4+n)
	}, nil)
	if _, err := h.o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	_, err := h.o.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "earlier ones had 4") {
		t.Fatalf("err = %v, want a permanent error about the changed size", err)
	}
}

func TestOpenAIContextCancelDuringBackoff(t *testing.T) {
	got := make(chan struct{}, 1)
	h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, "busy")
		select {
		case got <- struct{}{}:
		default:
		}
	}, nil)
	h.o.sleep = sleepCtx // really wait, so that only the cancellation can end it
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	_, err := h.o.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Embed took %v to notice the cancellation", d)
	}
}

func TestOpenAIRetriesNetworkFailure(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, _ *http.Request, in []string) {
		if n == 0 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		writeVectors(w, in, 3)
	}, nil)
	if _, err := h.o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("Embed after a dropped connection: %v", err)
	}
	if len(h.sleeps) != 1 || len(h.fake.requests()) != 2 {
		t.Errorf("waits %v over %d requests, want one retry", h.sleeps, len(h.fake.requests()))
	}
}

func TestOpenAIRetriesAttemptTimeout(t *testing.T) {
	h := newHarness(t, func(n int, w http.ResponseWriter, r *http.Request, in []string) {
		if n == 0 {
			<-r.Context().Done() // never answer the first attempt
			return
		}
		writeVectors(w, in, 3)
	}, nil)
	h.o.cfg.Timeout = 50 * time.Millisecond
	if _, err := h.o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("Embed after one timed-out attempt: %v", err)
	}
	if !strings.Contains(h.logs.String(), "EMBEDDING_TIMEOUT") {
		t.Errorf("the timed-out attempt was not logged as such:\n%s", h.logs)
	}
}

func TestOpenAIKeyNeverInLogsOrErrors(t *testing.T) {
	echo := "Incorrect API key provided: " + testKey + ". Authorization: Bearer " + testKey
	for _, status := range []int{http.StatusUnauthorized, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			h := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
				writeError(w, status, echo)
			}, func(c *Config) { c.MaxRetries = 1 })
			_, err := h.o.Embed(context.Background(), []string{"a"})
			if err == nil {
				t.Fatal("no error from an endpoint that always fails")
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testKey) {
				t.Errorf("error shows the key: %v", err)
			}
			if !strings.Contains(err.Error(), "Incorrect API key provided") {
				t.Errorf("error lost the server's message: %v", err)
			}
			h.o.logger.Info("config", "embedding", h.o.cfg)
			if strings.Contains(h.logs.String(), testKey) {
				t.Errorf("logs show the key:\n%s", h.logs)
			}
			if !strings.Contains(h.logs.String(), "embedding request") {
				t.Errorf("nothing was logged at debug level; the check above proves nothing:\n%s", h.logs)
			}
		})
	}
}

func TestOpenAIOverUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "embed.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	fake := &fakeEndpoint{respond: ok(3)}
	srv := httptest.NewUnstartedServer(fake)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	cfg := DefaultConfig()
	cfg.Provider = ProviderOpenAI
	cfg.BaseURL = "unix://" + sock
	cfg.ModelName = "m"
	cfg.BatchSize = 8
	cfg.LocalOnly = true
	o, err := NewOpenAI(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("Embed over %s: %v", cfg.BaseURL, err)
	}
	if p := fake.requests()[0].Path; p != "/v1/embeddings" {
		t.Errorf("path over the socket = %s, want /v1/embeddings", p)
	}
}

func TestLoopbackOnlyRefusesRemoteAddresses(t *testing.T) {
	for addr, allowed := range map[string]bool{
		"127.0.0.1:11434":  true,
		"127.9.9.9:80":     true,
		"[::1]:8080":       true,
		"10.0.0.7:443":     false,
		"93.184.216.34:80": false,
		"[2001:db8::1]:80": false,
	} {
		err := loopbackOnly("tcp", addr, nil)
		if (err == nil) != allowed {
			t.Errorf("loopbackOnly(%s) = %v, want allowed=%t", addr, err, allowed)
		}
	}
	if err := loopbackOnly("unix", "/run/x.sock", nil); err != nil {
		t.Errorf("a unix socket was refused: %v", err)
	}
}

func TestOpenAILocalOnlyRefusesRemoteAddressAtConnect(t *testing.T) {
	// A name can pass Validate and later resolve elsewhere; the dialer
	// itself must refuse. Point a validated provider at a non-loopback
	// address (TEST-NET-1, never routed) to see it refuse without trying.
	h := newHarness(t, ok(3), func(c *Config) { c.LocalOnly = true; c.MaxRetries = 3 })
	h.o.ep.url.Host = "192.0.2.1:80"
	start := time.Now()
	_, err := h.o.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") {
		t.Fatalf("err = %v, want a permanent refusal naming STRATA_LOCAL_ONLY", err)
	}
	if d := time.Since(start); d > 2*time.Second || len(h.sleeps) != 0 {
		t.Errorf("refusal took %v and %d retries; it must be immediate", d, len(h.sleeps))
	}
}

func TestOpenAILocalOnlyIgnoresProxy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Provider, cfg.BaseURL, cfg.ModelName, cfg.BatchSize, cfg.LocalOnly = ProviderOpenAI, "http://127.0.0.1:1/v1", "m", 8, true
	o, err := NewOpenAI(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.client.Transport.(*http.Transport).Proxy != nil {
		t.Error("with STRATA_LOCAL_ONLY the transport still follows HTTP_PROXY, which could carry text off the machine")
	}
}

func TestParseErrorBody(t *testing.T) {
	for _, tc := range []struct{ body, msg, typ, code string }{
		{`{"error":{"message":"bad input","type":"invalid_request_error","code":"context_length_exceeded"}}`, "bad input", "invalid_request_error", "context_length_exceeded"},
		{`{"error":{"message":"x","type":"t","code":null}}`, "x", "t", ""},
		{`{"error":{"message":"x","code":429}}`, "x", "", "429"},
		{`{"error":"model \"foo\" not found, try pulling it first"}`, `model "foo" not found, try pulling it first`, "", ""},
		{`{"detail":"Not Found"}`, "Not Found", "", ""},
		{`upstream connect error`, "upstream connect error", "", ""},
	} {
		msg, typ, code := parseErrorBody([]byte(tc.body))
		if msg != tc.msg || typ != tc.typ || code != tc.code {
			t.Errorf("parseErrorBody(%s) = %q, %q, %q; want %q, %q, %q", tc.body, msg, typ, code, tc.msg, tc.typ, tc.code)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header, value string
		want          time.Duration
		ok            bool
	}{
		{"Retry-After", "12", 12 * time.Second, true},
		{"Retry-After", "0", 0, true},
		{"Retry-After", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Retry-After", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Retry-After", "soon", 0, false},
		{"Retry-After", "-3", 0, false},
		{"retry-after-ms", "1500", 1500 * time.Millisecond, true},
	} {
		h := http.Header{}
		h.Set(tc.header, tc.value)
		got, ok := retryAfter(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %s gives %v, %t; want %v, %t", tc.header, tc.value, got, ok, tc.want, tc.ok)
		}
	}
}
