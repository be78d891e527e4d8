package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestDocID(t *testing.T) {
	for in, want := range map[string]string{
		"qmd://scifact/d4983.md": "4983",
		"scifact/d12.md":         "12",
		"10009203.txt":           "10009203",
	} {
		if got := docID(in); got != want {
			t.Errorf("docID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRPCResult(t *testing.T) {
	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"structuredContent\":{\"results\":[{\"file\":\"d1.md\"}]}}}\n\n"
	res, err := rpcResult([]byte(sse))
	if err != nil || !strings.Contains(string(res), "d1.md") {
		t.Fatalf("SSE frame: %s, %v", res, err)
	}
	if _, err := rpcResult([]byte(`{"jsonrpc":"2.0","id":2,"error":{"message":"no such tool"}}`)); err == nil ||
		!strings.Contains(err.Error(), "no such tool") {
		t.Errorf("a JSON-RPC error was not reported: %v", err)
	}
	if _, err := rpcResult([]byte(`{"jsonrpc":"2.0","id":2,"result":{"isError":true,"content":[]}}`)); err == nil {
		t.Error("a tool error was not reported")
	}
}

// TestDriveStrataREST drives a stand-in for queryd's /v1/search with 3
// clients: every query is sent once, and the run keeps each answer's
// documents in order, each once.
func TestDriveStrataREST(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Query string }
		if r.URL.Path != "/v1/search" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen[body.Query]++
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"ok","results":[{"file":"7.txt"},{"file":"7.txt"},{"file":"3.txt"}]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	qs := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qs, []byte("{\"_id\":\"1\",\"text\":\"a\"}\n{\"_id\":2,\"text\":\"b\"}\n{\"_id\":\"3\",\"text\":\"c\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run.trec")
	c := config{target: "strata", mode: "rest", url: srv.URL, layer: "l", queries: qs, clients: 3, top: 10, run: run}
	if err := runQuiet(t, c); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen["a"] != 1 || seen["b"] != 1 || seen["c"] != 1 {
		t.Errorf("queries sent: %v, want a, b and c once each", seen)
	}
	data, err := os.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "2 Q0 7 1 999 strata-rest\n2 Q0 3 2 998 strata-rest\n") ||
		strings.Count(string(data), "\n") != 6 {
		t.Errorf("run file:\n%s", data)
	}
}

// runQuiet runs c with stdout sent to a file, so that the result line does
// not mix with the test's output.
func runQuiet(t *testing.T, c config) error {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = old }()
	return run(c)
}

func TestNearestRank(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	if got := nearestRank(s, 95); got != 19 {
		t.Errorf("p95 of 1..20 = %v, want 19", got)
	}
	if got := median(s); got != 10.5 {
		t.Errorf("median of 1..20 = %v, want 10.5", got)
	}
}
