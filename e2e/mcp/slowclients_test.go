package mcpe2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// openFDs counts the open file descriptors of a process.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}

// halfBodies opens n connections to addr, each sending a POST's headers
// with Content-Length 200 and 100 bytes of body, and returns them.
func halfBodies(t *testing.T, addr string, n int, token string) []net.Conn {
	t.Helper()
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	req := fmt.Sprintf("POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%sContent-Length: 200\r\n\r\n%s",
		addr, auth, `{"query":"`+strings.Repeat("a", 90))
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial after %d connections: %v", len(conns), err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	return conns
}

// statuses reads each connection's response within d: the status codes
// counted, with 0 for a connection closed without one and -1 for one still
// open and silent at the end.
func statuses(conns []net.Conn, d time.Duration) map[int]int {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(deadline)
			code := 0
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				code = -1
			} else if err == nil {
				code = resp.StatusCode
				resp.Body.Close()
			}
			mu.Lock()
			got[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// The issue: with tokens configured, 1,500 clients that sent headers and
// half a body held 1,510 goroutines and 1,516 descriptors for over 150 s,
// none of them ever answered.
func TestSlowClientsCannotHoldQuerydServe(t *testing.T) {
	e := setup(t)
	base, _, pid := e.serveProc(t, "QUERYD_READ_TIMEOUT=2s")
	addr := strings.TrimPrefix(base, "http://")
	before := openFDs(t, pid)
	const n = 1500

	t.Run("without a token", func(t *testing.T) {
		began := time.Now()
		got := statuses(halfBodies(t, addr, n, ""), 10*time.Second)
		t.Logf("%d half-sent requests without a token: %v (status: count) in %s", n, got, time.Since(began).Round(time.Millisecond))
		if got[http.StatusUnauthorized]+got[http.StatusServiceUnavailable] != n {
			t.Errorf("want every connection answered 401 (or 503 past the per-client bound), got %v", got)
		}
	})

	t.Run("with a token", func(t *testing.T) {
		conns := halfBodies(t, addr, n, readerToken)
		time.Sleep(500 * time.Millisecond)
		held := openFDs(t, pid) - before
		began := time.Now()
		got := statuses(conns, 10*time.Second)
		t.Logf("%d half-sent requests with a token: %d descriptors held while they waited; %v (status: count) in %s",
			n, held, got, time.Since(began).Round(time.Millisecond))
		if held > 100 {
			t.Errorf("%d slow clients held %d descriptors, want at most the per-client bound (64) and a few", n, held)
		}
		if got[-1] > 0 || got[http.StatusRequestTimeout]+got[http.StatusServiceUnavailable]+got[0] != n {
			t.Errorf("want every connection cut off by QUERYD_READ_TIMEOUT (408) or refused (503), got %v", got)
		}
	})
	// Everything is given back.
	deadline := time.Now().Add(5 * time.Second)
	for openFDs(t, pid) > before+5 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := openFDs(t, pid); after > before+5 {
		t.Errorf("descriptors: %d before, %d after the slow clients left", before, after)
	}
}
