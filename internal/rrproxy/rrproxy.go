// Package rrproxy is a test helper: a round-robin HTTP reverse proxy on a
// loopback port in front of several servers, as a load balancer without
// session affinity is. Each request goes to the next server in turn; the
// proxy records where each went, and says so in the X-Rrproxy-Backend
// response header. It streams (server-sent events pass through as they
// come). Only tests and benchmarks import it.
package rrproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// BackendHeader is the response header naming the backend (its index in
// the list New was given) that answered.
const BackendHeader = "X-Rrproxy-Backend"

// maxPeek bounds the request body read to find a JSON-RPC method.
const maxPeek = 1 << 20

// Hit is one request as the proxy passed it on.
type Hit struct {
	Backend int    // index of the backend that got it
	Method  string // HTTP method
	Path    string
	Session string // the Mcp-Session-Id request header
	// RPC is the JSON-RPC method of a POST body ("initialize",
	// "tools/call"), empty for a response or a body that is not JSON-RPC.
	RPC    string
	Status int // 0 until the backend answers
}

// Proxy forwards to its backends in turn.
type Proxy struct {
	// URL is the proxy's base URL (http://127.0.0.1:PORT).
	URL      string
	backends []*httputil.ReverseProxy
	next     atomic.Uint64
	mu       sync.Mutex
	hits     []Hit
	record   bool
}

// New starts a proxy in front of backends (base URLs); it stops when the
// test ends. With record set it keeps every Hit (a benchmark leaves it off).
func New(t testing.TB, record bool, backends ...string) *Proxy {
	t.Helper()
	if len(backends) == 0 {
		t.Fatal("rrproxy: no backends")
	}
	p := &Proxy{record: record}
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatalf("rrproxy: backend %q: %v", b, err)
		}
		idx := strconv.Itoa(i)
		rp := &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(u)
				r.Out.Host = u.Host
			},
			// Flush at once: MCP answers over server-sent events.
			FlushInterval: -1,
			Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
			ModifyResponse: func(resp *http.Response) error {
				resp.Header.Set(BackendHeader, idx)
				return nil
			},
		}
		p.backends = append(p.backends, rp)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// ServeHTTP passes r to the next backend.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int((p.next.Add(1) - 1) % uint64(len(p.backends)))
	if !p.record {
		p.backends[i].ServeHTTP(w, r)
		return
	}
	h := Hit{Backend: i, Method: r.Method, Path: r.URL.Path, Session: r.Header.Get("Mcp-Session-Id")}
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
		r.Body.Close()
		if err != nil {
			http.Error(w, "rrproxy: read body: "+err.Error(), http.StatusBadGateway)
			return
		}
		var msg struct{ Method string }
		if len(body) <= maxPeek && json.Unmarshal(body, &msg) == nil {
			h.RPC = msg.Method
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	p.mu.Lock()
	n := len(p.hits)
	p.hits = append(p.hits, h)
	p.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w, set: func(code int) {
		p.mu.Lock()
		p.hits[n].Status = code
		p.mu.Unlock()
	}}
	p.backends[i].ServeHTTP(sw, r)
}

// Hits returns the requests passed on so far, in the order they came; one
// whose backend has not begun to answer has Status 0.
func (p *Proxy) Hits() []Hit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Hit(nil), p.hits...)
}

// statusWriter reports the status a backend answers with as soon as it
// is written (an event stream's is, long before the stream ends). Unwrap
// lets the reverse proxy flush through it.
type statusWriter struct {
	http.ResponseWriter
	set     func(int)
	written bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.written {
		s.written = true
		s.set(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.written {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
