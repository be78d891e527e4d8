package scale

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/rrproxy"
	"github.com/stratakb/stratakb/internal/testenv"
)

// TestMultiQueryd runs three `queryd serve` processes of one deployment
// behind a round-robin proxy (issue 30, item 2): an MCP session of the
// official TypeScript SDK goes on whichever process answers, searches and
// answers are the same from each, a receipt one issued opens on the
// others, and feedback on one's answer, given to another, shows in a third's learning
// stats.
func TestMultiQueryd(t *testing.T) {
	c := mqNewCluster(t, 3)
	client := &http.Client{Timeout: 30 * time.Second}

	t.Run("MCPSessionMovesBetweenProcesses", func(t *testing.T) { mqSessionAcrossProcesses(t, c) })

	t.Run("SameAnswersFromEachProcess", func(t *testing.T) {
		for _, q := range []struct{ path, key string }{{"/v1/search", "query"}, {"/v1/ask", "question"}} {
			var first any
			for i, b := range c.backends {
				got := mqStable(mqCall(t, client, b, q.path, map[string]any{q.key: mqQuery, "layers": []string{mqLayer}}))
				if i == 0 {
					first = got
					continue
				}
				if !reflect.DeepEqual(first, got) {
					a, _ := json.Marshal(first)
					g, _ := json.Marshal(got)
					t.Errorf("%s from process %d differs from process 0:\n%s\n%s", q.path, i, g, a)
				}
			}
		}
	})

	t.Run("ReceiptOpensOnAnotherProcess", func(t *testing.T) {
		ask := mqCall(t, client, c.backends[0], "/v1/ask", map[string]any{"question": mqQuery, "layers": []string{mqLayer}})
		ref := mqFirstRef(t, ask)
		v := mqCall(t, client, c.backends[0], "/v1/verify", map[string]any{"draft": mqDraft, "passages": []string{ref}})
		id, _ := v["receipt_id"].(string)
		if id == "" {
			t.Fatalf("strata_verify on process 0 gave no receipt: %v", v)
		}
		byPath := mqCall(t, client, c.backends[1], "/v1/receipts/"+id, nil)
		byTool := mqCall(t, client, c.backends[2], "/v1/receipt", map[string]any{"receipt_id": id})
		for name, r := range map[string]map[string]any{"GET /v1/receipts/{id} on process 1": byPath, "POST /v1/receipt on process 2": byTool} {
			sig, _ := r["signature"].(map[string]any)
			if sig["state"] != "valid" || r["status"] != v["status"] {
				t.Errorf("%s: signature %v, status %v; want valid and %v as issued", name, sig, r["status"], v["status"])
			}
		}
	})

	t.Run("FeedbackShowsInAnotherProcessStats", func(t *testing.T) {
		before := mqFeedback(t, client, c.backends[2])
		a := mqCall(t, client, c.backends[0], "/v1/ask", map[string]any{"question": mqQuery, "layers": []string{mqLayer}})
		iid, _ := a["interaction_id"].(string)
		if iid == "" {
			t.Fatalf("strata_ask on process 0 recorded no interaction: %v", a)
		}
		mqCall(t, client, c.backends[1], "/v1/feedback", map[string]any{"interaction_id": iid, "helpful": true})
		// No refresh to wait for: each process reads the stats from
		// PostgreSQL when asked.
		after := mqFeedback(t, client, c.backends[2])
		if after["ratings"] != before["ratings"]+1 || after["helpful"] != before["helpful"]+1 {
			t.Errorf("process 2's stats after feedback to process 1 on process 0's answer: %v, before %v; want one more rating, helpful", after, before)
		}
	})
}

// mqSessionAcrossProcesses drives one MCP session through the proxy; each
// request goes to the next process.
func mqSessionAcrossProcesses(t *testing.T, c *mqCluster) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed (scripts/setup.sh installs it)")
	}
	e2eDir := filepath.Join(testenv.VarDir(t), "e2e")
	testenv.Require(t, filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"),
		"the MCP TypeScript SDK (run scripts/setup-e2e.sh)")
	proxy := rrproxy.New(t, true, c.backends...)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(c.root, "e2e", "scale", "multiqueryd_session.cjs"), proxy.URL+"/mcp")
	cmd.Env = append(os.Environ(), "STRATA_E2E_DIR="+e2eDir, "SEARCH_QUERY="+mqQuery, "SEARCH_LAYER="+mqLayer,
		"VERIFY_DRAFT="+mqDraft, "SEARCHES=6")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var got struct {
		Error        string
		SessionFirst string `json:"session_first"`
		SessionLast  string `json:"session_last"`
		Tools        []string
		Calls        []struct {
			Name    string
			IsError bool `json:"is_error"`
			Session string
			Result  map[string]any
		}
	}
	if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil || got.Error != "" {
		t.Fatalf("session: %v, %v, %s\n%s", err, jerr, got.Error, out)
	}
	if got.SessionFirst == "" || got.SessionLast != got.SessionFirst {
		t.Errorf("the session id changed (the client started over): %q, then %q", got.SessionFirst, got.SessionLast)
	}
	want := []string{"strata_search", "strata_search", "strata_search", "strata_search", "strata_search", "strata_search",
		"strata_ask", "strata_verify", "strata_get_receipt", "strata_learning_stats", "strata_feedback", "strata_learning_stats"}
	var names []string
	var searches []any
	for _, call := range got.Calls {
		names = append(names, call.Name)
		if call.IsError {
			t.Errorf("%s failed: %v", call.Name, call.Result)
		}
		if call.Name == "strata_search" {
			searches = append(searches, mqStable(call.Result))
		}
		if call.Name == "strata_get_receipt" {
			if sig, _ := call.Result["signature"].(map[string]any); sig["state"] != "valid" {
				t.Errorf("the receipt opened on another process: signature %v, want valid", sig)
			}
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("calls made: %v, want %v", names, want)
	}
	for i := range searches {
		if !reflect.DeepEqual(searches[i], searches[0]) {
			t.Errorf("search %d answered otherwise than search 0", i)
		}
	}
	stats := func(i int) float64 {
		fb, _ := got.Calls[i].Result["feedback"].(map[string]any)
		n, _ := fb["ratings"].(float64)
		return n
	}
	if stats(11) != stats(9)+1 {
		t.Errorf("learning stats after strata_feedback: %v ratings, before %v; want one more", stats(11), stats(9))
	}
	mqCheckSpread(t, proxy.Hits(), got.SessionFirst, c.backends)
}

// mqCheckSpread checks what the proxy saw: one initialize in all, the
// session's requests on every process, none refused, and an event stream
// of the session open on a process other than the one that initialized.
// The SDK's GET may reach the initializing process (it races the
// session's first POSTs through the round robin); then the test opens one
// itself on a process that neither initialized nor ended the session.
func mqCheckSpread(t *testing.T, hits []rrproxy.Hit, sid string, backends []string) {
	t.Helper()
	n := len(backends)
	inits, streams, served := 0, 0, map[int]int{}
	ended := -1
	for _, h := range hits {
		if h.Method == http.MethodGet && h.Status == http.StatusOK && h.Backend != hits[0].Backend {
			streams++ // the SDK's event stream, open on a process that did not initialize
		}
		t.Logf("process %d: %s %s session=%.20s… status %d", h.Backend, h.Method, h.RPC, h.Session, h.Status)
		if h.RPC == "initialize" {
			inits++
			continue
		}
		if h.Method == http.MethodDelete {
			ended = h.Backend
		}
		if h.Session != sid {
			t.Errorf("a request with session %q, not the session's %q", h.Session, sid)
		}
		if h.Status >= 400 {
			t.Errorf("process %d refused %s %s: status %d", h.Backend, h.Method, h.RPC, h.Status)
		}
		served[h.Backend]++
	}
	if streams == 0 && len(hits) > 0 {
		for b := range n {
			if b != hits[0].Backend && b != ended {
				mqOpenStream(t, backends[b], sid)
				streams++
				break
			}
		}
	}
	if streams != 1 {
		t.Errorf("%d GET event streams opened on another process than the one that initialized, want 1", streams)
	}
	if inits != 1 {
		t.Errorf("%d initialize requests, want 1: the client started over", inits)
	}
	if len(served) != n {
		t.Errorf("the session's requests reached %d of %d processes: %v", len(served), n, served)
	}
}

// mqStable is a response without what differs between two calls by
// design: the ids of the interaction and receipt recorded, the time taken,
// and whether it came from a process's cache.
func mqStable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "interaction_id", "receipt_id", "took_ms", "cached":
				continue
			}
			out[k] = mqStable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mqStable(e)
		}
		return out
	}
	return v
}

func mqFirstRef(t *testing.T, ask map[string]any) string {
	t.Helper()
	ps, _ := ask["passages"].([]any)
	if len(ps) == 0 {
		t.Fatalf("strata_ask found no passage: %v", ask)
	}
	ref, _ := ps[0].(map[string]any)["ref"].(string)
	return ref
}

// mqFeedback is the feedback counts of strata_learning_stats on base.
func mqFeedback(t *testing.T, client *http.Client, base string) map[string]float64 {
	t.Helper()
	st := mqCall(t, client, base, "/v1/learning/stats", map[string]any{})
	fb, _ := st["feedback"].(map[string]any)
	out := map[string]float64{}
	for k, v := range fb {
		out[k], _ = v.(float64)
	}
	return out
}

// mqOpenStream opens the session's GET event stream on one process and
// checks that it is served as one, then closes it.
func mqOpenStream(t *testing.T, backend, sid string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, backend+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET event stream on %s: %v", backend, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("GET event stream on %s: status %d, %s", backend, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Logf("the session's event stream opened on %s, which did not initialize it", backend)
}
