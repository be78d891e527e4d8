package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/search"
)

func TestSearchOverHTTP(t *testing.T) {
	ts := newTestServer(t, nil)
	r := post(t, ts.url+"/v1/search", readerToken, `{"query":"carry over","layers":["handbook"],"top_k":3,"metadata_filter":{"page":"2"},"explain":true}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var resp struct {
		Status  string
		Results []map[string]any
	}
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != "ok" || len(resp.Results) != 1 || resp.Results[0]["file"] != "leave-policy.md" || resp.Results[0]["lines"] != "12-14" {
		t.Errorf("unexpected response %s", r.body)
	}
	got := ts.search.calls[0]
	if got.Query != "carry over" || got.TopK != 3 || got.Layers[0] != "handbook" || got.MetadataFilter["page"] != "2" || !got.Explain {
		t.Errorf("the searcher got %+v", got)
	}
	// top_k defaults to 5.
	post(t, ts.url+"/v1/search", readerToken, `{"query":"x"}`)
	if k := ts.search.calls[1].TopK; k != search.DefaultTopK {
		t.Errorf("default top_k %d, want %d", k, search.DefaultTopK)
	}
}

func TestInvalidArgumentsNameTheArgument(t *testing.T) {
	ts := newTestServer(t, nil)
	cases := []struct{ body, arg string }{
		{`{}`, "query"},
		{`{"query":""}`, "query"},
		{`{"query":"   "}`, "query"},
		{`{"query":7}`, "query"},
		{fmt.Sprintf(`{"query":%q}`, strings.Repeat("a", search.MaxQuery+1)), "query"},
		{`{"query":"x","top_k":0}`, "top_k"},
		{`{"query":"x","top_k":51}`, "top_k"},
		{`{"query":"x","top_k":-1}`, "top_k"},
		{`{"query":"x","top_k":2.5}`, "top_k"},
		{`{"query":"x","top_k":"5"}`, "top_k"},
		{`{"query":"x","layers":"handbook"}`, "layers"},
		{`{"query":"x","layers":[1]}`, "layers"},
		{`{"query":"x","layers":[""]}`, "layers"},
		{`{"query":"x","metadata_filter":["page"]}`, "metadata_filter"},
		{`{"query":"x","metadata_filter":{"page":3}}`, "metadata_filter"},
		{`{"query":"x","explain":"yes"}`, "explain"},
		{`{"query":"x","mode":"extractive"}`, "mode"},
		{`["x"]`, "arguments"},
		// PostgreSQL text cannot hold a NUL: these got 503 "unavailable:
		// lexical search" with Retry-After.
		{`{"query":"carry\u0000over"}`, "query"},
		{`{"query":"x","layers":["hand\u0000book"]}`, "layers"},
		{`{"query":"x","metadata_filter":{"te\u0000am":"x"}}`, "metadata_filter"},
		{`{"query":"x","metadata_filter":{"team":"pay\u0000ments"}}`, "metadata_filter"},
		{`{"query":`, "body"},
	}
	for _, c := range cases {
		r := post(t, ts.url+"/v1/search", readerToken, c.body)
		if r.status != 400 {
			t.Errorf("%s: status %d, want 400: %s", c.body, r.status, r.body)
			continue
		}
		e := r.errorBody(t)
		if e.Code != "invalid_argument" || e.Argument != c.arg || !strings.HasPrefix(e.Message, c.arg+":") {
			t.Errorf("%s: error %+v, want one naming %q", c.body, e, c.arg)
		}
	}
	if n := len(ts.search.calls); n != 0 {
		t.Errorf("invalid requests reached the searcher %d times", n)
	}
	// null counts as left out.
	if r := post(t, ts.url+"/v1/search", readerToken, `{"query":"x","layers":null,"top_k":null}`); r.status != 200 {
		t.Errorf("null arguments: status %d: %s", r.status, r.body)
	}
}

func TestTokens(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, c := range []struct {
		token string
		want  int
	}{{"", 401}, {"wrong-token-0123456789", 401}, {readerToken + "x", 401}, {readerToken, 200}, {adminToken, 200}} {
		r := post(t, ts.url+"/v1/search", c.token, `{"query":"x"}`)
		if r.status != c.want {
			t.Errorf("token %q: status %d, want %d", c.token, r.status, c.want)
		}
		if c.want == 401 {
			if r.header.Get("WWW-Authenticate") == "" || r.errorBody(t).Code != "unauthorized" {
				t.Errorf("token %q: 401 without WWW-Authenticate or error body: %s", c.token, r.body)
			}
		}
	}
	// The MCP endpoint needs a token too.
	r := post(t, ts.url+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if r.status != 401 {
		t.Errorf("/mcp without a token: status %d", r.status)
	}
	if strings.Contains(ts.logs.String(), readerToken) || strings.Contains(ts.logs.String(), adminToken) {
		t.Errorf("a token reached the log")
	}
}

func TestAdminOnlyToolRefusesReaders(t *testing.T) {
	ts := newTestServer(t, nil)
	r := post(t, ts.url+"/v1/test-admin", readerToken, `{}`)
	if r.status != 403 || !strings.Contains(r.errorBody(t).Message, "admins only") {
		t.Errorf("reader: status %d: %s", r.status, r.body)
	}
	if r := post(t, ts.url+"/v1/test-admin", adminToken, `{}`); r.status != 200 {
		t.Errorf("admin: status %d: %s", r.status, r.body)
	}
}

func TestOrigin(t *testing.T) {
	ts := newTestServer(t, func(c *Config, _ *Deps) { c.AllowedOrigins = []string{"https://app.example.com"} })
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"https://evil.example", 403},
		{"null", 403},
		{"http://127.0.0.1.evil.example", 403},
		{"http://localhost:3000", 200},
		{"http://127.0.0.1:6274", 200},
		{"https://app.example.com", 200},
		{"", 200},
	} {
		for _, path := range []string{"/mcp", "/v1/search"} {
			body := init
			if path != "/mcp" {
				body = `{"query":"x"}`
			}
			h := map[string]string{"Accept": "application/json, text/event-stream"}
			if c.origin != "" {
				h["Origin"] = c.origin
			}
			r := do(t, http.MethodPost, ts.url+path, readerToken, strings.NewReader(body), h)
			if r.status != c.want {
				t.Errorf("%s with Origin %q: status %d, want %d: %s", path, c.origin, r.status, c.want, r.body)
			}
		}
	}
}

// TestSameOrigin: with tokens, a page of this server under its own host
// name (the explorer behind https://kb.example.com) may call the API
// without QUERYD_ALLOWED_ORIGINS; another host's page may not, and
// without tokens a page whose host name points here is refused as before
// (DNS rebinding).
func TestSameOrigin(t *testing.T) {
	call := func(ts *testServer, host, origin string) int {
		req, err := http.NewRequest(http.MethodPost, ts.url+"/v1/search", strings.NewReader(`{"query":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+readerToken)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ts := newTestServer(t, nil)
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"kb.example.com", "https://kb.example.com", 200},
		{"kb.example.com:8377", "http://kb.example.com:8377", 200},
		{"kb.example.com", "https://evil.example", 403},
		{"kb.example.com", "https://kb.example.com:444", 403},
		{"kb.example.com", "null", 403},
	} {
		if got := call(ts, c.host, c.origin); got != c.want {
			t.Errorf("Host %s, Origin %s: status %d, want %d", c.host, c.origin, got, c.want)
		}
	}
	open := newTestServer(t, func(c *Config, _ *Deps) { c.Tokens = &Tokens{} })
	if got := call(open, "rebound.example:8377", "http://rebound.example:8377"); got != 403 {
		t.Errorf("no tokens, a rebound host's own page: status %d, want 403", got)
	}
}

func TestOversizedRequests(t *testing.T) {
	ts := newTestServer(t, func(c *Config, _ *Deps) { c.MaxRequestBytes = 2048 })
	big := `{"query":"` + strings.Repeat("a", 4096) + `"}`
	for _, path := range []string{"/v1/search", "/mcp"} {
		r := post(t, ts.url+path, readerToken, big)
		if r.status != 413 || r.errorBody(t).Code != "too_large" {
			t.Errorf("%s: status %d: %s", path, r.status, r.body)
		}
	}
	// Without a Content-Length (chunked), the limit applies while reading.
	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, big); pw.Close() }()
	r := do(t, http.MethodPost, ts.url+"/v1/search", readerToken, pr, nil)
	if r.status != 413 {
		t.Errorf("chunked: status %d: %s", r.status, r.body)
	}
}

func TestRetryAfterFollowsTheError(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{0, "1"}, {250 * time.Millisecond, "1"}, {3500 * time.Millisecond, "4"}} {
		ts := newTestServer(t, func(_ *Config, d *Deps) {
			d.Searcher = &fakeSearcher{err: &qerr.Error{Kind: qerr.Unavailable, Msg: "the database is unreachable", RetryAfter: c.after}}
		})
		r := post(t, ts.url+"/v1/search", readerToken, `{"query":"x"}`)
		if r.status != 503 || r.header.Get("Retry-After") != c.want {
			t.Errorf("RetryAfter %s: status %d, Retry-After %q, want 503 and %q", c.after, r.status, r.header.Get("Retry-After"), c.want)
		}
	}
}

func TestBusyServerAnswers503(t *testing.T) {
	block := make(chan struct{})
	ts := newTestServer(t, func(c *Config, d *Deps) {
		c.MaxConcurrent, c.QueueWait = 1, 50*time.Millisecond
		d.Searcher = &fakeSearcher{block: block}
	})
	first := make(chan response)
	go func() { first <- post(t, ts.url+"/v1/search", readerToken, `{"query":"slow"}`) }()
	waitFor(t, func() bool { ts.search.mu.Lock(); defer ts.search.mu.Unlock(); return len(ts.search.calls) == 1 })
	r := post(t, ts.url+"/v1/search", readerToken, `{"query":"second"}`)
	if r.status != 503 || r.header.Get("Retry-After") == "" || r.errorBody(t).Code != "unavailable" {
		t.Errorf("second search while the only slot is taken: status %d, Retry-After %q: %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	close(block)
	if r := <-first; r.status != 200 {
		t.Errorf("first search: status %d", r.status)
	}
	// A waiting request gets the slot when it frees up within the wait.
	ts2 := newTestServer(t, func(c *Config, d *Deps) {
		c.MaxConcurrent, c.QueueWait = 1, 2*time.Second
		d.Searcher = &fakeSearcher{delay: 100 * time.Millisecond}
	})
	done := make(chan response, 2)
	for range 2 {
		go func() { done <- post(t, ts2.url+"/v1/search", readerToken, `{"query":"x"}`) }()
	}
	for range 2 {
		if r := <-done; r.status != 200 {
			t.Errorf("queued search: status %d", r.status)
		}
	}
}

func TestRequestTimeout(t *testing.T) {
	ts := newTestServer(t, func(c *Config, d *Deps) {
		c.RequestTimeout = 50 * time.Millisecond
		d.Searcher = &fakeSearcher{block: make(chan struct{})}
	})
	r := post(t, ts.url+"/v1/search", readerToken, `{"query":"x"}`)
	if r.status != 503 || !strings.Contains(r.errorBody(t).Message, "took longer than 50ms") {
		t.Errorf("status %d: %s", r.status, r.body)
	}
}

func TestInternalErrorsLeakNothing(t *testing.T) {
	ts := newTestServer(t, func(_ *Config, d *Deps) { d.Searcher = &fakeSearcher{err: fmt.Errorf("search: %w", errSQL)} })
	r := post(t, ts.url+"/v1/search", readerToken, `{"query":"x"}`)
	if r.status != 500 || strings.Contains(string(r.body), "SELECT") || strings.Contains(string(r.body), "strata.") {
		t.Errorf("status %d, body leaks: %s", r.status, r.body)
	}
	if !strings.Contains(ts.logs.String(), "SQLSTATE 42P01") {
		t.Errorf("the server log should keep the cause: %s", ts.logs.String())
	}
	// A panic in a tool is an internal fault too.
	ts = newTestServer(t, nil)
	panicky := ts.tools[0]
	panicky.Call = func(context.Context, json.RawMessage) (Outcome, error) { panic("boom at 0xdeadbeef") }
	if _, err := ts.call(context.Background(), panicky, nil); err == nil || publicError(err).Code != "internal" {
		t.Errorf("panic: %v", err)
	}
}

func TestLoopbackOnlyWithoutTokens(t *testing.T) {
	s, err := New(DefaultConfig(), Deps{Searcher: &fakeSearcher{}})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	for _, c := range []struct {
		remote string
		want   int
	}{{"192.0.2.7:5555", 403}, {"[2001:db8::1]:5555", 403}, {"127.0.0.1:5555", 200}, {"[::1]:5555", 200}} {
		req := httptest.NewRequest(http.MethodPost, "/v1/search", strings.NewReader(`{"query":"x"}`))
		req.RemoteAddr = c.remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.want {
			t.Errorf("remote %s: status %d, want %d: %s", c.remote, w.Code, c.want, w.Body)
		}
	}
}

func TestHealthz(t *testing.T) {
	ts := newTestServer(t, func(_ *Config, d *Deps) { d.DB = pinger{} })
	r := do(t, http.MethodGet, ts.url+"/healthz", "", nil, nil)
	var h Health
	_ = json.Unmarshal(r.body, &h)
	if r.status != 200 || h.Status != "ok" || h.Database.Status != "ok" || h.EmbeddingModel.Status != "not configured" {
		t.Errorf("healthy: status %d: %s", r.status, r.body)
	}
	ts = newTestServer(t, func(_ *Config, d *Deps) { d.DB = pinger{errSQL}; d.Model = model{} })
	r = do(t, http.MethodGet, ts.url+"/healthz", "", nil, nil)
	h = Health{}
	_ = json.Unmarshal(r.body, &h)
	if r.status != 503 || h.Status != "unavailable" || h.Database.Status != "unavailable" || h.EmbeddingModel.Name != "use-lite" {
		t.Errorf("database down: status %d: %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), "SQLSTATE") {
		t.Errorf("health leaks the database error: %s", r.body)
	}
	ts = newTestServer(t, func(_ *Config, d *Deps) { d.DB = pinger{}; d.Model = model{errSQL} })
	r = do(t, http.MethodGet, ts.url+"/healthz", "", nil, nil)
	h = Health{}
	_ = json.Unmarshal(r.body, &h)
	if r.status != 200 || h.Status != "degraded" || h.EmbeddingModel.Status != "unavailable" {
		t.Errorf("model down: status %d: %s", r.status, r.body)
	}
}

type pinger struct{ err error }

func (p pinger) Ping(context.Context) error { return p.err }

type model struct{ err error }

func (m model) ModelHealth(context.Context) (string, error) { return "use-lite", m.err }

func TestMetrics(t *testing.T) {
	ts := newTestServer(t, nil)
	post(t, ts.url+"/v1/search", readerToken, `{"query":"x"}`)
	post(t, ts.url+"/v1/search", readerToken, `{"query":"x","top_k":99}`)
	ts.Metrics().CacheHit()
	ts.Metrics().ObserveChannel("fulltext", 2*time.Millisecond)
	r := do(t, http.MethodGet, ts.url+"/metrics", "", nil, nil)
	for _, want := range []string{
		`queryd_requests_total{status="ok",tool="strata_search",transport="http"} 1`,
		`queryd_requests_total{status="invalid_argument",tool="strata_search",transport="http"} 1`,
		`queryd_request_duration_seconds_count{tool="strata_search"} 2`,
		`queryd_search_cache_hits_total 1`,
		`queryd_search_channel_duration_seconds_count{channel="fulltext"} 1`,
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	ts := newTestServer(t, nil)
	r := do(t, http.MethodGet, ts.url+"/openapi.json", "", nil, nil)
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v", err)
	}
	// Every tool queryd can serve is documented, also one this server
	// leaves out because its dependency is not configured; every tool it
	// serves is among them.
	want := map[string]string{"/healthz": "get", "/metrics": "get", "/openapi.json": "get", "/mcp": "post"}
	for _, p := range explorePaths {
		want[p] = "get"
	}
	for _, d := range toolDefs {
		if d.tool.HTTPPath != "" {
			want[d.tool.HTTPPath] = "post"
		}
		if d.tool.Name == ToolGetReceipt {
			want["/v1/receipts/{id}"] = "get" // the receipt by its address too
		}
	}
	for _, tool := range ts.tools {
		if _, ok := want[tool.HTTPPath]; tool.HTTPPath != "" && tool.Name != "test_admin_only" && !ok {
			t.Errorf("%s is served at %s but not documented", tool.Name, tool.HTTPPath)
		}
	}
	for path, method := range want {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("openapi.json does not describe %s %s", method, path)
		}
	}
	for path := range doc.Paths {
		if _, ok := want[path]; !ok {
			t.Errorf("openapi.json describes %s, which is not served", path)
		}
	}
}

func TestRequestLogScrubsQueries(t *testing.T) {
	ts := newTestServer(t, nil)
	post(t, ts.url+"/v1/search", readerToken, `{"query":"transfer to DE89 3704 0044 0532 0130 00 rejected"}`)
	logs := ts.logs.String()
	for _, want := range []string{`"tool":"strata_search"`, `"status":"ok"`, `"results":1`, `"duration_ms":`, `"role":"reader"`, `[IBAN]`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s: %s", want, logs)
		}
	}
	if strings.Contains(logs, "3704") {
		t.Errorf("log holds the IBAN: %s", logs)
	}
	ts = newTestServer(t, func(c *Config, _ *Deps) { c.RawQueries = true })
	post(t, ts.url+"/v1/search", readerToken, `{"query":"transfer to DE89 3704 0044 0532 0130 00 rejected"}`)
	if !strings.Contains(ts.logs.String(), "DE89 3704") {
		t.Errorf("LEARNING_STORE_RAW_QUERIES=true should keep the query: %s", ts.logs.String())
	}
}

func TestShutdownLetsRequestsFinish(t *testing.T) {
	cfg := DefaultConfig()
	fs := &fakeSearcher{delay: 300 * time.Millisecond}
	s, err := New(cfg, Deps{Searcher: fs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	got := make(chan response, 1)
	go func() { got <- post(t, url+"/v1/search", "", `{"query":"x"}`) }()
	waitFor(t, func() bool { fs.mu.Lock(); defer fs.mu.Unlock(); return len(fs.calls) == 1 })
	stop() // what SIGTERM does through signal.NotifyContext
	if r := <-got; r.status != 200 {
		t.Errorf("the request in flight got status %d: %s", r.status, r.body)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Errorf("the server still accepts connections after shutdown")
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	env := map[string]string{
		"QUERYD_ADDR": "127.0.0.1:9999", "QUERYD_TOKENS": "reader:" + readerToken,
		"QUERYD_ALLOWED_ORIGINS": "https://a.example, https://b.example/", "QUERYD_REQUEST_TIMEOUT": "5s",
		"QUERYD_MAX_CONCURRENT_SEARCHES": "3", "LEARNING_STORE_RAW_QUERIES": "true",
		"QUERYD_READ_TIMEOUT": "3s", "QUERYD_MAX_CONNS_PER_CLIENT": "7",
	}
	c, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" || c.Tokens.Role(readerToken) != RoleReader || len(c.AllowedOrigins) != 2 ||
		c.AllowedOrigins[1] != "https://b.example" || c.RequestTimeout != 5*time.Second || c.MaxConcurrent != 3 || !c.RawQueries ||
		c.ReadTimeout != 3*time.Second || c.MaxConnsPerClient != 7 {
		t.Errorf("config %+v", c)
	}
	for k, v := range map[string]string{
		"QUERYD_ADDR": "nonsense", "QUERYD_TOKENS": "owner:" + readerToken, "QUERYD_REQUEST_TIMEOUT": "soon",
		"QUERYD_MAX_CONCURRENT_SEARCHES": "0", "QUERYD_ALLOWED_ORIGINS": "*", "QUERYD_TOKEN_FILE": "/nonexistent/tokens",
		"QUERYD_READ_TIMEOUT": "0s", "QUERYD_MAX_CONNS_PER_CLIENT": "-1",
	} {
		_, err := LoadConfig(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%q: error %v should name the variable", k, v, err)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
