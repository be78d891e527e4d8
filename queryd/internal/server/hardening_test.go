package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// realServer serves on a loopback TCP listener through Serve, with the
// http.Server settings and the connection bound `queryd serve` has (the
// httptest server of newTestServer has neither).
func realServer(t *testing.T, mutate func(*Config)) (addr string, logs *logBuffer) {
	t.Helper()
	cfg := DefaultConfig()
	var err error
	if cfg.Tokens, err = ParseTokens("test", "reader:"+readerToken); err != nil {
		t.Fatal(err)
	}
	cfg.ShutdownTimeout = 2 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	logs = &logBuffer{}
	s, err := New(cfg, Deps{Searcher: &fakeSearcher{}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return ln.Addr().String(), logs
}

// halfBody opens a connection and sends a POST's headers, announcing a body
// of 200 bytes, and the first 100 of them.
func halfBody(t *testing.T, addr, path, token string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: 200\r\n\r\n%s",
		path, addr, auth, `{"query":"`+strings.Repeat("a", 90))
	return c
}

// answer reads the response on c within d: its status, or 0 when the
// server closed the connection without one. It fails the test when the
// server neither answers nor closes in time.
func answer(t *testing.T, c net.Conn, d time.Duration) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("no answer and no close within %s", d)
	}
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// closed reports whether the server has closed c (reading gives EOF or a
// reset) within d.
func closed(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// The issue: with tokens configured, a client that sent headers and part of
// a body never got its 401; 1,500 such connections held 1,510 goroutines.
func TestHalfSentBodyWithoutTokenGets401AtOnce(t *testing.T) {
	// A read timeout far longer than the test: the 401 must not wait for it.
	addr, _ := realServer(t, func(c *Config) { c.ReadTimeout = time.Minute })
	for _, path := range []string{"/v1/search", "/mcp"} {
		c := halfBody(t, addr, path, "")
		began := time.Now()
		if got := answer(t, c, 3*time.Second); got != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", path, got)
		}
		if !closed(c, 3*time.Second) {
			t.Errorf("%s: the connection stays open after the 401", path)
		}
		t.Logf("%s: 401 and close after %s", path, time.Since(began).Round(time.Millisecond))
	}
}

func TestHalfSentBodyIsCutOffAfterReadTimeout(t *testing.T) {
	addr, _ := realServer(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	for _, path := range []string{"/v1/search", "/mcp"} {
		c := halfBody(t, addr, path, readerToken)
		began := time.Now()
		got := answer(t, c, 5*time.Second)
		if got != 0 && got != http.StatusRequestTimeout {
			t.Errorf("%s: status %d, want 408 or a closed connection", path, got)
		}
		if !closed(c, 3*time.Second) {
			t.Errorf("%s: the connection stays open after the read timeout", path)
		}
		took := time.Since(began)
		t.Logf("%s: status %d and close after %s", path, got, took.Round(time.Millisecond))
		if took < 300*time.Millisecond {
			t.Errorf("%s: cut off after %s, before the read timeout", path, took)
		}
	}
	// Headers that never end are cut off too.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/search HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
	if !closed(c, 5*time.Second) {
		t.Error("a connection whose headers never end stays open")
	}
}

func TestConnectionsPerClientAreBounded(t *testing.T) {
	addr, logs := realServer(t, func(c *Config) { c.MaxConnsPerClient = 4 })
	var held []net.Conn
	for range 4 {
		c := halfBody(t, addr, "/v1/search", readerToken)
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond) // let the server accept them
	holdReserve(t, addr)
	refused := 0
	for range 16 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := answer(t, c, 3*time.Second); got == http.StatusServiceUnavailable {
			refused++
		}
		c.Close()
	}
	if refused != 16 {
		t.Errorf("%d of 16 connections past the bound of 4 were refused with 503", refused)
	}
	if !strings.Contains(logs.String(), "QUERYD_MAX_CONNS_PER_CLIENT") {
		t.Errorf("no warning names QUERYD_MAX_CONNS_PER_CLIENT: %s", logs.String())
	}
	// A connection closed gives its place back.
	held[0].Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after one of four connections closed, a new one is still refused: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holdReserve takes the address's reserve connections for monitoring with
// requests whose headers never end.
func holdReserve(t *testing.T, addr string) {
	t.Helper()
	for range monitorReserve {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n", addr)
	}
	time.Sleep(100 * time.Millisecond)
}

// get sends one GET on a fresh connection and returns the status.
func get(t *testing.T, addr, path string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
	return answer(t, c, 3*time.Second)
}

// TestMonitoringAnswersPastTheConnectionBound: with an address at
// QUERYD_MAX_CONNS_PER_CLIENT, /healthz and /metrics answered 503, so
// monitoring could not see an overloaded server (issue 32, item 12). They
// answer on the address's reserve; anything else there is refused, and
// past the reserve everything is.
func TestMonitoringAnswersPastTheConnectionBound(t *testing.T) {
	addr, _ := realServer(t, func(c *Config) { c.MaxConnsPerClient = 4 })
	for range 4 {
		halfBody(t, addr, "/v1/search", readerToken)
	}
	time.Sleep(100 * time.Millisecond)
	for _, path := range []string{"/healthz", "/metrics", "/healthz"} {
		if got := get(t, addr, path); got != http.StatusOK {
			t.Errorf("GET %s with the address at its bound: %d, want 200", path, got)
		}
	}
	c := halfBody(t, addr, "/v1/search", readerToken)
	if got := answer(t, c, 3*time.Second); got != http.StatusServiceUnavailable {
		t.Errorf("a search on a monitoring connection: %d, want 503", got)
	}
	if got := get(t, addr, "/openapi.json"); got != http.StatusServiceUnavailable {
		t.Errorf("GET /openapi.json on a monitoring connection: %d, want 503", got)
	}
	time.Sleep(300 * time.Millisecond) // the server closes the connections above
	holdReserve(t, addr)
	if got := get(t, addr, "/healthz"); got != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz past the reserve: %d, want 503", got)
	}
}

// The issue: a refused 900 KB query was logged whole on every request, and
// a 3 MB one over stdio too.
func TestRequestLogCutsLongArguments(t *testing.T) {
	check := func(t *testing.T, logs string, n int) {
		t.Helper()
		if len(logs) > 4000 {
			t.Errorf("the log holds %d bytes for one request", len(logs))
		}
		if !strings.Contains(logs, fmt.Sprintf("[cut, %d bytes in all]", n)) || !strings.Contains(logs, `"query":"aaaa`) {
			t.Errorf("the log does not show the query's start and length: %.500s", logs)
		}
	}
	t.Run("http", func(t *testing.T) {
		ts := newTestServer(t, nil)
		q := strings.Repeat("a", 900_000)
		r := post(t, ts.url+"/v1/search", readerToken, `{"query":"`+q+`"}`)
		if r.status != 400 {
			t.Fatalf("status %d", r.status)
		}
		check(t, ts.logs.String(), len(q))
	})
	t.Run("stdio", func(t *testing.T) {
		logs := &logBuffer{}
		s, err := New(DefaultConfig(), Deps{Searcher: &fakeSearcher{}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		q := strings.Repeat("a", 3_000_000)
		replies := stdio(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"strata_search","arguments":{"query":"`+q+`"}}}`)
		if !strings.Contains(replies[0], `"isError":true`) {
			t.Fatalf("reply %.300s", replies[0])
		}
		check(t, logs.String(), len(q))
	})
	if got := logArg("überlong "+strings.Repeat("ü", 400), 300, true); !strings.HasSuffix(got, "…[cut, 810 bytes in all]") || !strings.HasPrefix(got, "überlong") {
		t.Errorf("logArg cut %q", got)
	}
}

// stdio sends each message to ServeStdio and returns one reply per
// message, in order of arrival.
func stdio(t *testing.T, s *Server, msgs ...string) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 16<<20)
	var out []string
	for _, m := range msgs {
		go func() { _, _ = io.WriteString(inW, m+"\n") }()
		got := make(chan bool, 1)
		go func() { got <- sc.Scan() }()
		select {
		case ok := <-got:
			if !ok {
				t.Fatalf("stdio ended: %v", sc.Err())
			}
			out = append(out, sc.Text())
		case <-time.After(10 * time.Second):
			t.Fatalf("no reply to %.200s", m)
		}
	}
	return out
}

type rpcResponse struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func decodeRPC(t *testing.T, body string) rpcResponse {
	t.Helper()
	var r rpcResponse
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &r); err != nil {
		t.Fatalf("not a JSON-RPC response: %v: %s", err, body)
	}
	return r
}

// mcpPost posts one message to /mcp with the session id (when set) and
// returns the status, the session id the server gave, and the body.
func mcpPost(t *testing.T, url, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+readerToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	// A response over SSE: the JSON is on the data line.
	if i := strings.Index(text, "data: "); strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && i >= 0 {
		text = strings.SplitN(text[i+6:], "\n", 2)[0]
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), text
}

// initSession runs the classic initialize handshake and returns the
// session id.
func initSession(t *testing.T, url string) string {
	t.Helper()
	status, sid, body := mcpPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != 200 || sid == "" {
		t.Fatalf("initialize: status %d, session %q: %s", status, sid, body)
	}
	if status, _, body := mcpPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("initialized: status %d: %s", status, body)
	}
	return sid
}

func TestMCPSessionIDsAreChecked(t *testing.T) {
	ts := newTestServer(t, nil)
	sid := initSession(t, ts.url)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if status, _, body := mcpPost(t, ts.url, sid, list); status != 200 || !strings.Contains(body, ToolSearch) {
		t.Fatalf("tools/list on the session: status %d: %s", status, body)
	}
	// A well-formed id this server never issued.
	if status, _, body := mcpPost(t, ts.url, "mcp-session-0b7d3c1e-8a4f-4c2e-9d6b-5f1a2e3c4d5e", list); status != http.StatusNotFound {
		t.Errorf("an id the server never issued: status %d, want 404: %s", status, body)
	}
	del := func() int {
		req, _ := http.NewRequest(http.MethodDelete, ts.url+"/mcp", nil)
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
	if got := del(); got != http.StatusOK {
		t.Fatalf("DELETE of the session: status %d", got)
	}
	if status, _, body := mcpPost(t, ts.url, sid, list); status != http.StatusNotFound {
		t.Errorf("the session after DELETE: status %d, want 404: %s", status, body)
	}
	if got := del(); got != http.StatusNotFound {
		t.Errorf("DELETE of an ended session: status %d, want 404", got)
	}
}

// Before: a batch got -32700 parse error, a request with an id and no
// method got 202 over HTTP, and the prompt without its question -32603.
func TestMalformedJSONRPCGetsTheRightError(t *testing.T) {
	cases := []struct {
		name, msg string
		code      int
		status    int
	}{
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","id":4,"method":"tools/list"}]`, -32600, 400},
		{"id without method", `{"jsonrpc":"2.0","id":5}`, -32600, 400},
		{"prompt without question", `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"answer_from_documents","arguments":{}}}`, -32602, 200},
		{"prompt with a blank question", `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"answer_from_documents","arguments":{"question":"  "}}}`, -32602, 200},
	}
	t.Run("http", func(t *testing.T) {
		ts := newTestServer(t, nil)
		sid := initSession(t, ts.url)
		for _, c := range cases {
			status, _, body := mcpPost(t, ts.url, sid, c.msg)
			r := decodeRPC(t, body)
			if status != c.status || r.Error == nil || r.Error.Code != c.code {
				t.Errorf("%s: status %d, %s; want status %d and code %d", c.name, status, body, c.status, c.code)
			}
		}
		if status, _, body := mcpPost(t, ts.url, sid, `{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"answer_from_documents","arguments":{"question":"How long is notice?"}}}`); status != 200 || !strings.Contains(body, "How long is notice?") {
			t.Errorf("the prompt with a question: status %d: %s", status, body)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		s, err := New(DefaultConfig(), Deps{Searcher: &fakeSearcher{}})
		if err != nil {
			t.Fatal(err)
		}
		msgs := []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`}
		for _, c := range cases {
			msgs = append(msgs, c.msg)
		}
		replies := stdio(t, s, msgs...)
		for i, c := range cases {
			r := decodeRPC(t, replies[i+1])
			if r.Error == nil || r.Error.Code != c.code {
				t.Errorf("%s: %s; want code %d", c.name, replies[i+1], c.code)
			}
		}
	})
}

func TestToolPathAnswers405ToOtherMethods(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		r := do(t, m, ts.url+"/v1/search", readerToken, nil, nil)
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
			t.Errorf("%s /v1/search: status %d, Allow %q; want 405 and Allow: POST", m, r.status, r.header.Get("Allow"))
		}
	}
	if r := do(t, http.MethodGet, ts.url+"/v1/nothing", readerToken, nil, nil); r.status != http.StatusNotFound {
		t.Errorf("GET /v1/nothing: status %d, want 404", r.status)
	}
}
