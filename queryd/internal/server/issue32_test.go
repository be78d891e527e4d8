package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/verify"
	"github.com/stratakb/stratakb/schema"
)

// invalidTextBodies are search arguments whose strings are not UTF-8, with
// the argument at fault; \xHH stands for the raw byte (see rawBytes).
var invalidTextBodies = []struct{ arg, body string }{
	{"query", `{"query": "leave carry-over \xff\xfe"}`},
	{"query", `{"query": "leave \ud800 carry-over"}`},
	{"query", `{"query": "leave \udc00"}`},
	{"layers", `{"query": "leave", "layers": ["hand\xc3book"]}`},
	{"metadata_filter", `{"query": "leave", "metadata_filter": {"owner": "h\xe9r"}}`},
	{"metadata_filter", `{"query": "leave", "metadata_filter": {"\xe9": "x"}}`},
}

// rawBytes turns each \xHH of s into the byte HH: JSON has no \x escape.
func rawBytes(s string) string {
	return regexp.MustCompile(`\\x[0-9a-f]{2}`).ReplaceAllStringFunc(s, func(m string) string {
		b, _ := strconv.ParseUint(m[2:], 16, 8)
		return string([]byte{byte(b)})
	})
}

// TestInvalidUTF8IsRefusedOverHTTPAndMCP: text that is not UTF-8 inside a
// JSON string argument was turned into U+FFFD by encoding/json and served
// (issue 32, item 9). It is refused with 400 naming the argument over HTTP,
// and with the tool's invalid-argument result over MCP (HTTP and stdio),
// before the tool runs; escaped pairs and plain escapes still work.
func TestInvalidUTF8IsRefusedOverHTTPAndMCP(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, tc := range invalidTextBodies {
		r := post(t, ts.url+"/v1/search", readerToken, rawBytes(tc.body))
		if r.status != 400 || r.errorBody(t).Argument != tc.arg || !strings.Contains(r.errorBody(t).Message, "UTF-8") {
			t.Errorf("HTTP %q: status %d: %s", tc.body, r.status, r.body)
		}
	}
	sid := initSession(t, ts.url)
	var stdioMsgs []string
	for i, tc := range invalidTextBodies {
		msg := `{"jsonrpc":"2.0","id":` + string(rune('a'+i)) + `,"method":"tools/call","params":{"name":"strata_search","arguments":` + rawBytes(tc.body) + `}}`
		msg = strings.Replace(msg, `"id":`+string(rune('a'+i)), `"id":"`+string(rune('a'+i))+`"`, 1)
		stdioMsgs = append(stdioMsgs, msg)
		status, _, body := mcpPost(t, ts.url, sid, msg)
		if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, `\"argument\":\"`+tc.arg+`\"`) ||
			!strings.Contains(body, `"id":"`+string(rune('a'+i))+`"`) {
			t.Errorf("MCP over HTTP %q: status %d: %s", tc.body, status, body)
		}
	}
	if n := len(ts.search.calls); n != 0 {
		t.Errorf("the search ran %d times on text that is not UTF-8: %+v", n, ts.search.calls)
	}
	s, err := New(DefaultConfig(), Deps{Searcher: &fakeSearcher{}})
	if err != nil {
		t.Fatal(err)
	}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for i, out := range stdio(t, s, append([]string{init}, stdioMsgs...)...)[1:] {
		if !strings.Contains(out, `"isError":true`) || !strings.Contains(out, `\"argument\":\"`+invalidTextBodies[i].arg+`\"`) {
			t.Errorf("MCP over stdio %q: %s", invalidTextBodies[i].body, out)
		}
	}
	// Valid text passes: an escaped surrogate pair, an escaped backslash
	// before a u, and plain non-ASCII.
	for _, body := range []string{`{"query": "leave \ud83d\ude00"}`, `{"query": "C:\\ud800 path"}`, `{"query": "Urlaubsübertrag"}`} {
		if r := post(t, ts.url+"/v1/search", readerToken, body); r.status != 200 {
			t.Errorf("HTTP %s: status %d: %s", body, r.status, r.body)
		}
	}
}

// int4Spans reads spans as the store does, through PostgreSQL's int
// offsets: an offset past 2^31-1 fails the query with an error that is
// not the caller's kind (pgx: "unable to encode … greater than maximum
// value for int4").
type int4Spans struct{ calls int }

func (f *int4Spans) Spans(_ context.Context, refs []schema.Ref) ([]store.Span, error) {
	f.calls++
	out := make([]store.Span, len(refs))
	for i, r := range refs {
		if r.Start > math.MaxInt32 || r.End > math.MaxInt32 {
			return nil, fmt.Errorf("read span %s: failed to encode args[1]: %d is greater than maximum value for int4", r, r.Start)
		}
		out[i] = store.Span{Ref: r, SectionEnd: -1}
	}
	return out, nil
}

// TestHugeRefOffsetIsInvalid: a ref with an offset of 2^31 or more got 503
// with Retry-After ("could not read the passages; retry"), which a client
// retries forever (issue 32, item 8). It is an invalid argument: 400
// naming passages, and the store is not asked.
func TestHugeRefOffsetIsInvalid(t *testing.T) {
	spans := &int4Spans{}
	ts := newTestServer(t, func(_ *Config, d *Deps) { d.Verifier = verify.New(verify.Options{Spans: spans}) })
	for _, ref := range []string{"d1:2147483648-2147483650", "d1:0-2147483648", "d1:0-9223372036854775807", "d1:4294967296-4294967300~9f86d081"} {
		r := post(t, ts.url+"/v1/verify", readerToken, `{"draft": "Leave carries over [S1].", "passages": ["`+ref+`"]}`)
		if r.status != 400 || r.header.Get("Retry-After") != "" || r.errorBody(t).Argument != "passages" {
			t.Errorf("ref %s: status %d, Retry-After %q: %s", ref, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	if spans.calls != 0 {
		t.Errorf("the store was asked %d times for refs past 2^31", spans.calls)
	}
	// The largest offset PostgreSQL's int holds is still a ref.
	if r := post(t, ts.url+"/v1/verify", readerToken, `{"draft": "Leave carries over [S1].", "passages": ["d1:0-2147483647"]}`); r.status != 200 {
		t.Errorf("ref d1:0-2147483647: status %d: %s", r.status, r.body)
	}
}

// TestDatabaseOutageIsLoggedOnce: while the database was down, each refused
// request logged a line of its own (36 MB in 8 s under 8 clients; issue
// 32, item 11). The outage is logged when it begins, then a count every
// few seconds, then the recovery with the total; requests still get their
// 503 and their metrics.
func TestDatabaseOutageIsLoggedOnce(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.outage.every = 150 * time.Millisecond
	ts.search.err = store.Unreachable(store.ErrUnreachable)
	const n = 60
	for i := range n {
		r := post(t, ts.url+"/v1/search", readerToken, `{"query": "leave"}`)
		if r.status != 503 {
			t.Fatalf("request %d while the database is down: status %d: %s", i, r.status, r.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ts.search.mu.Lock()
	ts.search.err = nil
	ts.search.mu.Unlock()
	if r := post(t, ts.url+"/v1/search", readerToken, `{"query": "leave"}`); r.status != 200 {
		t.Fatalf("after the database is back: status %d: %s", r.status, r.body)
	}
	var began, summaries, back, perRequest, refused int
	for _, line := range strings.Split(strings.TrimSpace(ts.logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "the database is unreachable"):
			began++
			refused++
		case msg == "the database is still unreachable":
			summaries++
			refused += int(rec["refused"].(float64))
		case msg == "the database is reachable again":
			back++
			refused += int(rec["refused"].(float64))
			if int(rec["refused_total"].(float64)) != n {
				t.Errorf("the recovery line counts %v refusals, want %d: %s", rec["refused_total"], n, line)
			}
		case msg == "tool call" && rec["status"] == "unavailable":
			perRequest++
		}
	}
	if began != 1 || back != 1 || perRequest != 0 || summaries < 1 || summaries > n/10 || refused != n {
		t.Errorf("outage log: %d begin, %d summaries, %d recovery, %d per-request lines, %d refusals counted (want 1, a few, 1, 0, %d):\n%s",
			began, summaries, back, perRequest, refused, n, ts.logs.String())
	}
}
