package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/provider"
)

const testKey = "rk-test-5e4d3c2b1a09"

type seen struct {
	Path string
	Auth string
	Body map[string]json.RawMessage
	Docs []string
}

type fake struct {
	mu     sync.Mutex
	reqs   []seen
	sleeps []time.Duration
}

func (f *fake) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

// score is the relevance the fake model gives a passage "p<N>": N/100.
func score(text string) float64 {
	n, _ := strconv.Atoi(strings.TrimPrefix(text, "p"))
	return float64(n) / 100
}

// start serves respond and builds an HTTP reranker against it; waits before
// retries are recorded, not slept.
func start(t *testing.T, format string, respond func(n int, w http.ResponseWriter, docs []string), edit func(*Config)) (*HTTP, *fake) {
	t.Helper()
	f := &fake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		_ = json.Unmarshal(raw, &body)
		var docs []string
		if format == FormatCohere {
			_ = json.Unmarshal(body["documents"], &docs)
		} else {
			_ = json.Unmarshal(body["texts"], &docs)
		}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, seen{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body, Docs: docs})
		f.mu.Unlock()
		respond(n, w, docs)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.Provider, cfg.Format, cfg.BaseURL, cfg.APIKey, cfg.Model = ProviderHTTP, format, srv.URL, testKey, "BAAI/bge-reranker-base"
	if edit != nil {
		edit(&cfg)
	}
	h, err := newHTTP(cfg, nil, func(pc *provider.Config) {
		pc.Sleep = func(ctx context.Context, d time.Duration) error {
			f.mu.Lock()
			f.sleeps = append(f.sleeps, d)
			f.mu.Unlock()
			return ctx.Err()
		}
	})
	if err != nil {
		t.Fatalf("newHTTP: %v", err)
	}
	return h, f
}

// answer writes the scores of docs (mapped by scoreOf) in the format, best
// first as real servers do, so the client must reorder them.
func answer(format string, scoreOf func(string) float64) func(int, http.ResponseWriter, []string) {
	return func(_ int, w http.ResponseWriter, docs []string) {
		idx := make([]int, len(docs))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return scoreOf(docs[idx[a]]) > scoreOf(docs[idx[b]]) })
		w.Header().Set("Content-Type", "application/json")
		if format == FormatCohere {
			var res []map[string]any
			for _, i := range idx {
				res = append(res, map[string]any{"index": i, "relevance_score": scoreOf(docs[i])})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "r1", "results": res, "meta": map[string]any{}})
			return
		}
		var res []map[string]any
		for _, i := range idx {
			res = append(res, map[string]any{"index": i, "score": scoreOf(docs[i])})
		}
		_ = json.NewEncoder(w).Encode(res)
	}
}

func passages(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("p%d", (i*37)%100))
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFormatsReorderByIndex(t *testing.T) {
	for _, format := range []string{FormatTEI, FormatCohere} {
		t.Run(format, func(t *testing.T) {
			h, f := start(t, format, answer(format, score), nil)
			ps := passages(5)
			got, err := h.Rerank(context.Background(), "notice period", ps)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				if !near(got[i], score(p)) {
					t.Fatalf("scores = %v for %v: passage %d should score %v", got, ps, i, score(p))
				}
			}
			r := f.requests()[0]
			if r.Auth != "Bearer "+testKey {
				t.Errorf("Authorization = %q", r.Auth)
			}
			if string(r.Body["query"]) != `"notice period"` || fmt.Sprint(r.Docs) != fmt.Sprint(ps) {
				t.Errorf("request = %v", r.Body)
			}
			switch format {
			case FormatTEI:
				if r.Path != "/rerank" || string(r.Body["truncate"]) != "true" || string(r.Body["raw_scores"]) != "false" {
					t.Errorf("TEI request: path %s, body %v", r.Path, r.Body)
				}
			case FormatCohere:
				if r.Path != "/v1/rerank" || string(r.Body["model"]) != `"BAAI/bge-reranker-base"` || string(r.Body["top_n"]) != "5" {
					t.Errorf("Cohere request: path %s, body %v", r.Path, r.Body)
				}
			}
			if h.Name() != "http:"+format+":BAAI/bge-reranker-base" {
				t.Errorf("Name() = %s", h.Name())
			}
		})
	}
}

func TestLogitsGoThroughSigmoid(t *testing.T) {
	logit := func(s string) float64 { return score(s)*10 - 5 } // -5..5
	h, _ := start(t, FormatTEI, answer(FormatTEI, logit), nil)
	ps := []string{"p10", "p50", "p90"}
	got, err := h.Rerank(context.Background(), "q", ps)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if want := 1 / (1 + math.Exp(-logit(p))); !near(got[i], want) {
			t.Errorf("passage %s: %v, want sigmoid(%v) = %v", p, got[i], logit(p), want)
		}
	}
	// With RawScores, scores inside [0, 1] are logits too, and TEI is
	// asked for raw scores.
	h, f := start(t, FormatTEI, answer(FormatTEI, score), func(c *Config) { c.RawScores = true })
	got, err = h.Rerank(context.Background(), "q", ps)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got[1], Sigmoid(0.5)) || string(f.requests()[0].Body["raw_scores"]) != "true" {
		t.Errorf("RawScores: %v, request %v; want sigmoid(0.5) and raw_scores true", got, f.requests()[0].Body)
	}
	if !near(Sigmoid(0), 0.5) || Sigmoid(-1000) != 0 || Sigmoid(1000) != 1 || math.IsNaN(Sigmoid(-1000)) {
		t.Errorf("Sigmoid is off at 0 or the extremes")
	}
}

func TestBatching(t *testing.T) {
	for _, format := range []string{FormatTEI, FormatCohere} {
		h, f := start(t, format, answer(format, score), func(c *Config) { c.BatchSize = 32 })
		ps := passages(70)
		got, err := h.Rerank(context.Background(), "q", ps)
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for _, r := range f.requests() {
			sizes = append(sizes, len(r.Docs))
		}
		if fmt.Sprint(sizes) != "[32 32 6]" {
			t.Errorf("%s: batch sizes %v, want [32 32 6]", format, sizes)
		}
		for i, p := range ps {
			if !near(got[i], score(p)) {
				t.Fatalf("%s: passage %d (%s) scored %v after batching, want %v", format, i, p, got[i], score(p))
			}
		}
	}
}

func TestBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		format, body, want string
	}{
		{FormatTEI, `[{"index":0,"score":0.9}]`, "have no score"},
		{FormatTEI, `[{"index":0,"score":0.9},{"index":0,"score":0.1}]`, "appears twice"},
		{FormatTEI, `[{"index":0,"score":0.9},{"index":7,"score":0.1}]`, "outside"},
		{FormatTEI, `[{"index":0,"score":0.9},{"index":1}]`, "lacks its index or score"},
		{FormatTEI, `{"results":[]}`, "not a TEI /rerank response"},
		{FormatCohere, `{"results":[{"index":1,"relevance_score":0.2}]}`, "have no score"},
		{FormatCohere, `[{"index":0,"score":0.9}]`, "not a /v1/rerank response"},
		{FormatCohere, `{"message":"ok"}`, "not a /v1/rerank response"},
	} {
		h, f := start(t, tc.format, func(_ int, w http.ResponseWriter, _ []string) { _, _ = io.WriteString(w, tc.body) }, nil)
		_, err := h.Rerank(context.Background(), "q", []string{"p1", "p2"})
		if !IsResponseError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: err = %v, want a ResponseError saying %q", tc.format, tc.body, err, tc.want)
		}
		if len(f.requests()) != 1 {
			t.Errorf("a bad answer was retried")
		}
	}
}

func TestRetriesAndFailures(t *testing.T) {
	// 429 with Retry-After, then 503, then the answer.
	h, f := start(t, FormatCohere, func(n int, w http.ResponseWriter, docs []string) {
		switch n {
		case 0:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			answer(FormatCohere, score)(n, w, docs)
		}
	}, nil)
	got, err := h.Rerank(context.Background(), "q", []string{"p30"})
	if err != nil || !near(got[0], 0.3) || len(f.requests()) != 3 || len(f.sleeps) != 2 || f.sleeps[0] != time.Second {
		t.Errorf("after 429 and 503: %v, %v over %d requests, waits %v", got, err, len(f.requests()), f.sleeps)
	}
	// A 400 is not retried, and the key the server echoes is removed.
	h, f = start(t, FormatTEI, func(_ int, w http.ResponseWriter, _ []string) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, `{"error":"batch size 64 > maximum allowed batch size 32 for key `+testKey+`","error_type":"Validation"}`)
	}, nil)
	_, err = h.Rerank(context.Background(), "q", []string{"p1"})
	var se *provider.StatusError
	if !errors.As(err, &se) || se.StatusCode != 413 || len(f.requests()) != 1 || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "maximum allowed batch size") {
		t.Errorf("413: err = %v over %d requests", err, len(f.requests()))
	}
	// A slow endpoint times out.
	h, _ = start(t, FormatTEI, func(_ int, w http.ResponseWriter, _ []string) { time.Sleep(400 * time.Millisecond) },
		func(c *Config) { c.Timeout = 100 * time.Millisecond; c.MaxRetries = 0 })
	_, err = h.Rerank(context.Background(), "q", []string{"p1"})
	if !errors.Is(err, provider.ErrTimeout) || !strings.Contains(err.Error(), "RERANKING_TIMEOUT") {
		t.Errorf("slow endpoint: err = %v, want a timeout naming RERANKING_TIMEOUT", err)
	}
}

func TestEndpointPaths(t *testing.T) {
	for _, tc := range []struct{ format, base, want string }{
		{FormatTEI, "http://127.0.0.1:8080", "http://127.0.0.1:8080/rerank"},
		{FormatTEI, "http://127.0.0.1:8080/", "http://127.0.0.1:8080/rerank"},
		{FormatCohere, "https://api.jina.ai", "https://api.jina.ai/v1/rerank"},
		{FormatCohere, "https://api.jina.ai/v1", "https://api.jina.ai/v1/rerank"},
		{FormatCohere, "http://127.0.0.1:7997/rerank", "http://127.0.0.1:7997/rerank"},
		{FormatCohere, "https://api.cohere.com/v2/rerank", "https://api.cohere.com/v2/rerank"},
	} {
		u, err := Config{Format: tc.format, BaseURL: tc.base}.endpoint()
		if err != nil || u.String() != tc.want {
			t.Errorf("%s %s: %v, %v; want %s", tc.format, tc.base, u, err, tc.want)
		}
	}
}

func TestLocalOnly(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Provider, cfg.BaseURL, cfg.LocalOnly = ProviderHTTP, "https://api.jina.ai/v1", true
	cfg.Format, cfg.Model = FormatCohere, "jina-reranker-v2-base-multilingual"
	_, err := NewHTTP(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") || !strings.Contains(err.Error(), "RERANKING_BASE_URL") {
		t.Errorf("remote endpoint under STRATA_LOCAL_ONLY: err = %v, want a refusal naming both variables", err)
	}
	cfg.BaseURL = "http://10.1.2.3:8080"
	if _, err := NewHTTP(cfg, nil); err == nil {
		t.Error("a private address was allowed under STRATA_LOCAL_ONLY")
	}
	h, _ := start(t, FormatTEI, answer(FormatTEI, score), func(c *Config) { c.LocalOnly = true })
	if _, err := h.Rerank(context.Background(), "q", []string{"p1"}); err != nil {
		t.Errorf("a loopback endpoint under STRATA_LOCAL_ONLY: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Provider = "cohere" }, "RERANKING_PROVIDER"},
		{func(c *Config) { c.Provider = ProviderHTTP }, "RERANKING_BASE_URL: required"},
		{func(c *Config) { c.Provider, c.BaseURL, c.Format = ProviderHTTP, "http://x", "jina" }, "RERANKING_FORMAT"},
		{func(c *Config) { c.Provider, c.BaseURL, c.Format = ProviderHTTP, "http://x", FormatCohere }, "RERANKING_MODEL"},
		{func(c *Config) { c.Provider, c.BaseURL = ProviderHTTP, "localhost:8080" }, "RERANKING_BASE_URL"},
		{func(c *Config) { c.Provider, c.BaseURL, c.BatchSize = ProviderHTTP, "http://x", 0 }, "RERANKING_BATCH_SIZE"},
		{func(c *Config) { c.Provider, c.BaseURL, c.Timeout = ProviderHTTP, "http://x", 0 }, "RERANKING_TIMEOUT"},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want an error naming %s", c, err, tc.want)
		}
	}
	off := DefaultConfig()
	off.Enabled, off.Provider = false, "nonsense"
	if err := off.Validate(); err != nil {
		t.Errorf("reranking off: %v", err)
	}
	k := DefaultConfig()
	k.APIKey = testKey
	if s := fmt.Sprintf("%v %+v %#v", k, k, k); strings.Contains(s, testKey) {
		t.Errorf("Config prints its key: %s", s)
	}
}

type features struct {
	got []Candidate
}

func (f *features) Name() string { return "features" }
func (f *features) Rerank(context.Context, string, []string) ([]float64, error) {
	return nil, errors.New("wants candidates")
}
func (f *features) RerankCandidates(_ context.Context, _ string, c []Candidate) ([]float64, error) {
	f.got = c
	out := make([]float64, len(c))
	for i := range c {
		out[i] = Sigmoid(c[i].Features["bm25"])
	}
	return out, nil
}

func TestApplyAndFallback(t *testing.T) {
	ps := []string{"p10", "p80", "p40"}
	h, _ := start(t, FormatTEI, answer(FormatTEI, score), nil)
	o := Apply(context.Background(), h, "q", ps)
	if !o.Reranked || o.Degraded != "" || o.Err != nil || !near(o.Scores[1], 0.8) || o.Reranker != h.Name() {
		t.Errorf("a working reranker: %+v", o)
	}
	down, _ := start(t, FormatTEI, func(_ int, w http.ResponseWriter, _ []string) { w.WriteHeader(http.StatusBadGateway) },
		func(c *Config) { c.MaxRetries = 0 })
	o = Apply(context.Background(), down, "q", ps)
	if o.Reranked || o.Err == nil || !strings.Contains(o.Degraded, "failed") || fmt.Sprint(o.Scores) != fmt.Sprint([]float64{1, 2.0 / 3, 1.0 / 3}) {
		t.Errorf("a failing reranker: %+v, want passthrough scores [1 2/3 1/3], degraded, with the error", o)
	}
	o = Apply(context.Background(), Passthrough{Reason: DisabledReason}, "q", ps)
	if o.Reranked || o.Degraded != DisabledReason || o.Err != nil || o.Reranker != "passthrough" || o.Scores[0] != 1 {
		t.Errorf("reranking off: %+v", o)
	}
	if o = Apply(context.Background(), nil, "q", ps); o.Reranked || o.Degraded == "" || len(o.Scores) != 3 {
		t.Errorf("no reranker: %+v", o)
	}
	// A reranker answering outside [0, 1] or the wrong count is a failure.
	bad := fixed{scores: []float64{0.5, 1.5, 0.1}}
	if o = Apply(context.Background(), bad, "q", ps); o.Reranked || !strings.Contains(o.Degraded, "not a probability") {
		t.Errorf("score 1.5: %+v", o)
	}
	if o = Apply(context.Background(), fixed{scores: []float64{0.5}}, "q", ps); o.Reranked {
		t.Errorf("one score for three passages: %+v", o)
	}
	f := &features{}
	o = ApplyCandidates(context.Background(), f, "q", []Candidate{{Text: "a", Features: map[string]float64{"bm25": 2}}, {Text: "b"}})
	if !o.Reranked || len(f.got) != 2 || !near(o.Scores[0], Sigmoid(2)) || !near(o.Scores[1], 0.5) {
		t.Errorf("a CandidateReranker did not get the features: %+v", o)
	}
	if o = ApplyCandidates(context.Background(), h, "q", []Candidate{{Text: "p20"}}); !o.Reranked || !near(o.Scores[0], 0.2) {
		t.Errorf("ApplyCandidates with a plain Reranker: %+v", o)
	}
}

type fixed struct{ scores []float64 }

func (f fixed) Name() string                                                { return "fixed" }
func (f fixed) Rerank(context.Context, string, []string) ([]float64, error) { return f.scores, nil }

func TestNew(t *testing.T) {
	off := DefaultConfig()
	off.Enabled = false
	if r, err := New(off, nil, nil); err != nil || r.Name() != "passthrough" {
		t.Errorf("RERANKING_ENABLED=false: %v, %v", r, err)
	}
	if r, err := New(DefaultConfig(), nil, nil); err == nil || r == nil || r.Name() != "passthrough" {
		t.Errorf("no offline reranker: %v, %v; want a passthrough and the error", r, err)
	}
	if r, err := New(DefaultConfig(), nil, func() (Reranker, error) { return nil, errors.New("weights missing") }); err == nil || !strings.Contains(r.(Passthrough).Degraded(), "weights missing") {
		t.Errorf("offline fails to load: %v, %v", r, err)
	}
	if r, err := New(DefaultConfig(), nil, func() (Reranker, error) { return fixed{}, nil }); err != nil || r.Name() != "fixed" {
		t.Errorf("offline loads: %v, %v", r, err)
	}
	bad := DefaultConfig()
	bad.Provider = ProviderHTTP
	remote := DefaultConfig()
	remote.Provider, remote.BaseURL, remote.LocalOnly = ProviderHTTP, "http://203.0.113.8:8080", true
	if r, err := New(remote, nil, nil); err == nil || r != nil {
		t.Errorf("a refused endpoint: %#v, %v; want only the error", r, err)
	}
	if r, err := New(bad, nil, nil); err == nil || r != nil {
		t.Errorf("a configuration error: %v, %v; want only the error", r, err)
	}
}
