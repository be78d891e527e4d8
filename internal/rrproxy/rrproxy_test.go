package rrproxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRoundRobinAndRecord(t *testing.T) {
	var urls []string
	for i := range 3 {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "backend %d got %s", i, b)
		}))
		t.Cleanup(s.Close)
		urls = append(urls, s.URL)
	}
	p := New(t, true, urls...)
	for n := range 6 {
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Mcp-Session-Id", "s1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf("backend %d got {", n%3)
		if !strings.HasPrefix(string(b), want) || resp.Header.Get(BackendHeader) != fmt.Sprint(n%3) {
			t.Errorf("request %d: %q (header %q), want it from backend %d with the body intact", n, b, resp.Header.Get(BackendHeader), n%3)
		}
	}
	hits := p.Hits()
	if len(hits) != 6 || hits[4].Backend != 1 || hits[4].RPC != "tools/list" || hits[4].Session != "s1" || hits[4].Status != 200 {
		t.Errorf("hits: %+v", hits)
	}
}

// An event stream passes through as it is written, not when it ends.
func TestStreamsPassAtOnce(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(s.Close)
	defer close(release)
	p := New(t, true, s.URL)
	resp, err := http.Get(p.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if l != "data: first\n" {
			t.Errorf("first line %q", l)
		}
		if h := p.Hits(); len(h) != 1 || h[0].Status != http.StatusOK {
			t.Errorf("the open stream's hit: %+v, want status 200 while it is open", h)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event did not come through while the stream stayed open")
	}
}
