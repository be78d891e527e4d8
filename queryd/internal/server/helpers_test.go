package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/search"
)

const (
	readerToken = "reader-token-0123456789"
	adminToken  = "admin-token-0123456789ab"
)

// fakeSearcher answers strata_search without a database; the tests of
// search itself run against PostgreSQL in package search and in e2e.
type fakeSearcher struct {
	mu    sync.Mutex
	calls []search.Request
	delay time.Duration
	err   error
	block chan struct{} // when set, Search waits for it (or ctx)
}

func (f *fakeSearcher) Search(ctx context.Context, req search.Request) (*search.Response, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.mu.Unlock()
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	page := 2
	return &search.Response{Status: "ok", Query: req.Query, SearchedLayers: []string{"handbook"}, Results: []search.Result{{
		ChunkID: 7, Ref: "d3:120-180", Layer: "handbook", File: "leave-policy.md", Page: &page,
		Lines: "12-14", ClausePath: "Leave > Carry-over", Text: "Up to 5 unused days may be carried over.", Score: 1,
	}}}, nil
}

// adminOnlyTool stands in for strata_reset_learning until it exists.
func adminOnlyTool() Tool {
	return Tool{
		Name: "test_admin_only", Description: "An admin-only tool for tests.", AdminOnly: true, HTTPPath: "/v1/test-admin",
		Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Call: func(context.Context, json.RawMessage) (Outcome, error) {
			return Outcome{Value: map[string]string{"status": "ok"}}, nil
		},
	}
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testServer struct {
	*Server
	url    string
	search *fakeSearcher
	logs   *logBuffer
}

// newTestServer serves on a loopback httptest server with the reader and
// admin tokens, the fake searcher and the admin-only test tool.
func newTestServer(t *testing.T, mutate func(*Config, *Deps)) *testServer {
	t.Helper()
	cfg := DefaultConfig()
	var err error
	cfg.Tokens, err = ParseTokens("test", "reader:"+readerToken+",admin:"+adminToken)
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSearcher{}
	logs := &logBuffer{}
	deps := Deps{Searcher: fs, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	if mutate != nil {
		mutate(&cfg, &deps)
	}
	s, err := newServer(cfg, deps, []Tool{adminOnlyTool()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	if f, ok := deps.Searcher.(*fakeSearcher); ok {
		fs = f
	}
	return &testServer{Server: s, url: hs.URL, search: fs, logs: logs}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) errorBody(t *testing.T) apiError {
	t.Helper()
	var e struct{ Error apiError }
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Code == "" {
		t.Fatalf("status %d: body is not an error: %s", r.status, r.body)
	}
	return e.Error
}

func do(t *testing.T, method, url, token string, body io.Reader, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}
}

func post(t *testing.T, url, token, body string) response {
	t.Helper()
	return do(t, http.MethodPost, url, token, strings.NewReader(body), nil)
}

var errSQL = errors.New(`ERROR: relation "strata.chunks" does not exist (SQLSTATE 42P01) in SELECT c.id FROM strata.chunks`)

var _ = qerr.KindOf
