package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/caller"
)

func key(b byte) []byte { return []byte(strings.Repeat(string(rune('a'+b)), sessionKeyBytes)) }

func TestSessionIDsAreSignedAndExpire(t *testing.T) {
	a, b, other := newSessions([][]byte{key(1)}), newSessions([][]byte{key(1)}), newSessions([][]byte{key(2)})
	id := a.Generate()
	if _, err := b.Validate(id); err != nil {
		t.Fatalf("a process with the same key refused %s: %v", id, err)
	}
	if _, err := other.Validate(id); err == nil {
		t.Error("a process with another key accepted the id")
	}
	// Changing any part of the id breaks its signature: a later expiry,
	// another random part, or a truncated signature.
	parts := strings.Split(id, ".")
	for _, bad := range []string{
		parts[0] + ".99999999999." + parts[2],
		parts[0][:len(parts[0])-1] + "0." + parts[1] + "." + parts[2],
		parts[0] + "." + parts[1] + "." + parts[2][:10],
		"mcp-session-0b7d3c1e-8a4f-4c2e-9d6b-5f1a2e3c4d5e", "", "..", "mcp-session-.x.y",
	} {
		if bad == id {
			continue
		}
		if _, err := b.Validate(bad); err == nil {
			t.Errorf("a forged id was accepted: %q", bad)
		}
	}
	now := time.Now().Add(sessionLifetime + time.Second)
	b.now = func() time.Time { return now }
	if _, err := b.Validate(id); err == nil {
		t.Error("an id past its lifetime is still accepted")
	}
}

func TestSessionKeyRotation(t *testing.T) {
	old := newSessions([][]byte{key(1)})
	rotated := newSessions([][]byte{key(2), key(1)}) // the new key signs, the old one still verifies
	done := newSessions([][]byte{key(2)})            // the old key removed after a lifetime
	oldID, newID := old.Generate(), rotated.Generate()
	if !rotated.known(oldID) {
		t.Error("after the rotation, an id signed with the old key is refused")
	}
	if !done.known(newID) || done.known(oldID) {
		t.Errorf("with the old key removed: new id known %v (want true), old id known %v (want false)", done.known(newID), done.known(oldID))
	}
}

func TestEndedSessionsAreBounded(t *testing.T) {
	s := newSessions(nil)
	s.max = 3
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	var ids []string
	for range 5 {
		ids = append(ids, s.Generate())
		now = now.Add(time.Minute)
	}
	for _, id := range ids[:3] {
		s.Terminate(id)
	}
	if s.known(ids[0]) || s.known(ids[2]) {
		t.Error("an ended session is still accepted by the process that ended it")
	}
	s.Terminate(ids[3]) // full: drops ids[0], the one closest to expiry
	if len(s.ended) != 3 || !s.known(ids[0]) || s.known(ids[3]) {
		t.Errorf("past the bound: %d ended ids, ids[0] known %v, ids[3] known %v; want 3, true, false", len(s.ended), s.known(ids[0]), s.known(ids[3]))
	}
	// Expired entries go first, and an expired id is refused anyway.
	now = now.Add(sessionLifetime - 3*time.Minute)
	s.Terminate(ids[4])
	if len(s.ended) != 2 || s.known(ids[1]) || s.known(ids[4]) {
		t.Errorf("after expiry: %d ended ids (want 2), ids[1] known %v, ids[4] known %v", len(s.ended), s.known(ids[1]), s.known(ids[4]))
	}
	// Ending an id the server never issued stores nothing.
	s.Terminate("mcp-session-00.1.x")
	if len(s.ended) != 2 {
		t.Errorf("a forged id was stored as ended: %d entries", len(s.ended))
	}
}

func TestSessionKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets", "mcp-session.key")
	// Processes starting together all end up with the one key written.
	var wg sync.WaitGroup
	got := make([][][]byte, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := loadSessionKeys(path)
			if err != nil {
				t.Error(err)
			}
			got[i] = k
		}()
	}
	wg.Wait()
	for i := range got {
		if len(got[i]) != 1 || string(got[i][0]) != string(got[0][0]) {
			t.Fatalf("loader %d got another key than loader 0", i)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	first, _ := os.ReadFile(path)
	rotated := "# new key first\n" + strings.Repeat("ab", sessionKeyBytes) + "\n\n" + string(first)
	if err := os.WriteFile(path, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := loadSessionKeys(path); err != nil || len(k) != 2 || string(k[1]) != string(got[0][0]) {
		t.Fatalf("rotated file: %d keys, %v", len(k), err)
	}
	if err := os.WriteFile(path, []byte("# comment\nabcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSessionKeys(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a short key: %v, want an error naming line 2", err)
	}
}

// An MCP session started on one server goes on on another that reads the
// same key file: tools/list and tools/call, and a GET event stream. A
// DELETE on one is refused there afterwards; the other still accepts the
// id until it expires (sessions.go says why).
func TestSessionMovesBetweenServers(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "mcp-session.key")
	withKey := func(c *Config, _ *Deps) { c.SessionKeyFile = keyFile }
	a, b := newTestServer(t, withKey), newTestServer(t, withKey)
	lone := newTestServer(t, nil) // its own key: a separate deployment
	sid := initSession(t, a.url)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if status, _, body := mcpPost(t, b.url, sid, list); status != 200 || !strings.Contains(body, ToolSearch) {
		t.Fatalf("tools/list on the other server: status %d: %s", status, body)
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"strata_search","arguments":{"query":"notice period"}}}`
	if status, _, body := mcpPost(t, b.url, sid, call); status != 200 || !strings.Contains(body, `"result"`) || strings.Contains(body, `"isError":true`) {
		t.Fatalf("tools/call on the other server: status %d: %s", status, body)
	}
	if status, _, _ := mcpPost(t, lone.url, sid, list); status != http.StatusNotFound {
		t.Errorf("a server with another key: status %d, want 404", status)
	}
	if got := getStream(t, b.url, sid); got != http.StatusOK {
		t.Errorf("GET event stream on the other server: status %d, want 200", got)
	}
	if got := getStream(t, lone.url, sid); got != http.StatusNotFound {
		t.Errorf("GET event stream on a server with another key: status %d, want 404", got)
	}
	if got := deleteSession(t, a.url, sid); got != http.StatusOK {
		t.Fatalf("DELETE: status %d", got)
	}
	if status, _, _ := mcpPost(t, a.url, sid, list); status != http.StatusNotFound {
		t.Errorf("the server that ended the session: status %d, want 404", status)
	}
	if status, _, _ := mcpPost(t, b.url, sid, list); status != http.StatusOK {
		t.Errorf("the other server, which does not know of the DELETE: status %d, want 200 (documented)", status)
	}
}

func getStream(t *testing.T, url, sid string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The stream is open once its headers came; nothing needs to arrive
	// on it.
	resp.Body.Close()
	return resp.StatusCode
}

func deleteSession(t *testing.T, url, sid string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// What the client declared at initialize stays in the process that served
// it: a tool on another process sees a session without sampling, which is
// why QUERY_REWRITE_PROVIDER=mcp_sampling needs a balancer that routes by
// Mcp-Session-Id (docs/scale.md).
func TestSamplingStaysWithTheInitializingServer(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "mcp-session.key")
	probe := Tool{
		Name: "test_has_sampler", Description: "Says whether the session offers sampling.",
		Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Call: func(ctx context.Context, _ json.RawMessage) (Outcome, error) {
			return Outcome{Value: map[string]bool{"sampler": caller.SamplerFrom(ctx) != nil}}, nil
		},
	}
	var urls []string
	for range 2 {
		cfg := DefaultConfig()
		cfg.SessionKeyFile = keyFile
		var err error
		if cfg.Tokens, err = ParseTokens("test", "reader:"+readerToken); err != nil {
			t.Fatal(err)
		}
		s, err := newServer(cfg, Deps{Searcher: &fakeSearcher{}}, []Tool{probe})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	status, sid, body := mcpPost(t, urls[0], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != 200 || sid == "" {
		t.Fatalf("initialize: status %d: %s", status, body)
	}
	mcpPost(t, urls[0], sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_has_sampler","arguments":{}}}`
	for i, want := range []string{`\"sampler\":true`, `\"sampler\":false`} {
		if status, _, body := mcpPost(t, urls[i], sid, call); status != 200 || !strings.Contains(body, want) {
			t.Errorf("server %d: status %d, %s; want %s", i, status, body, want)
		}
	}
}
