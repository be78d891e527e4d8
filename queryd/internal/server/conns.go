package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// clientLimit wraps a listener so that one client address holds at most max
// open connections. A connection past the bound gets a 503 with Retry-After
// and is closed at once, before the HTTP server spends a goroutine on it.
//
// Past the bound, each address has a small reserve (monitorReserve) of
// connections that serve only GET /healthz and /metrics: monitoring must
// see a server its clients overload (issue 32, item 12: both answered 503
// under 64 clients). Any other request on a reserve connection gets the
// same 503 and the connection is closed.
// Addresses are compared without the port; behind a reverse proxy every
// connection comes from the proxy's address, so raise or lift the bound
// (QUERYD_MAX_CONNS_PER_CLIENT=0) there.
type clientLimit struct {
	net.Listener
	max int
	log *slog.Logger

	mu       sync.Mutex
	active   map[string]int
	reserved map[string]int // reserve connections open, per address

	refused    atomic.Int64
	lastWarned atomic.Int64 // unix nanoseconds of the last warning
}

func limitPerClient(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	return &clientLimit{Listener: ln, max: max, log: log, active: map[string]int{}, reserved: map[string]int{}}
}

// monitorReserve is how many connections past QUERYD_MAX_CONNS_PER_CLIENT
// one address may open for /healthz and /metrics.
const monitorReserve = 4

// monitorPaths are what a reserve connection serves.
var monitorPaths = map[string]bool{"/healthz": true, "/metrics": true}

func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := c.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		l.mu.Lock()
		if l.active[host] >= l.max {
			if l.reserved[host] >= monitorReserve {
				l.mu.Unlock()
				l.refuse(c, host)
				continue
			}
			l.reserved[host]++
			l.mu.Unlock()
			return &countedConn{Conn: c, monitorOnly: true, release: func() { l.release(l.reserved, host) }}, nil
		}
		l.active[host]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(l.active, host) }}, nil
	}
}

func (l *clientLimit) release(counts map[string]int, host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if counts[host]--; counts[host] <= 0 {
		delete(counts, host)
	}
}

// msgTooManyConns is what a connection past the bound is told.
const msgTooManyConns = "too many connections from this address (QUERYD_MAX_CONNS_PER_CLIENT); close some or retry in a moment"

// refusal is the whole answer to a connection past the bound.
var refusal = func() string {
	const body = `{"error":{"code":"unavailable","message":"` + msgTooManyConns + `"}}` + "\n"
	return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nRetry-After: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		http.StatusServiceUnavailable, http.StatusText(http.StatusServiceUnavailable), retryAfterSeconds, len(body), body)
}()

// refuse answers and closes a connection past the bound, off the accept
// loop, and warns at most once a minute with the count.
func (l *clientLimit) refuse(c net.Conn, host string) {
	n := l.refused.Add(1)
	now := time.Now().UnixNano()
	if last := l.lastWarned.Load(); now-last > int64(time.Minute) && l.lastWarned.CompareAndSwap(last, now) {
		l.log.Warn("connections refused: a client is over QUERYD_MAX_CONNS_PER_CLIENT",
			slog.String("client", host), slog.Int("max", l.max), slog.Int64("refused_total", n))
	}
	go func() {
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, refusal)
		_ = c.Close()
	}()
}

// countedConn gives its slot back once, when it is closed. A monitorOnly
// connection holds a reserve slot: it serves monitorPaths only.
type countedConn struct {
	net.Conn
	once        sync.Once
	release     func()
	monitorOnly bool
}

type monitorOnlyKey struct{}

// connContext marks the requests of a reserve connection
// (http.Server.ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*countedConn); ok && cc.monitorOnly {
		return context.WithValue(ctx, monitorOnlyKey{}, true)
	}
	return ctx
}

// refusedOnReserve reports whether r came on a reserve connection and asks
// for something other than GET /healthz or /metrics.
func refusedOnReserve(r *http.Request) bool {
	only, _ := r.Context().Value(monitorOnlyKey{}).(bool)
	return only && !(r.Method == http.MethodGet && monitorPaths[r.URL.Path])
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
