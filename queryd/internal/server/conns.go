package server

import (
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
// Addresses are compared without the port; behind a reverse proxy every
// connection comes from the proxy's address, so raise or lift the bound
// (QUERYD_MAX_CONNS_PER_CLIENT=0) there.
type clientLimit struct {
	net.Listener
	max int
	log *slog.Logger

	mu     sync.Mutex
	active map[string]int

	refused    atomic.Int64
	lastWarned atomic.Int64 // unix nanoseconds of the last warning
}

func limitPerClient(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	return &clientLimit{Listener: ln, max: max, log: log, active: map[string]int{}}
}

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
			l.mu.Unlock()
			l.refuse(c, host)
			continue
		}
		l.active[host]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *clientLimit) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active[host]--; l.active[host] <= 0 {
		delete(l.active, host)
	}
}

// refusal is the whole answer to a connection past the bound.
var refusal = func() string {
	const body = `{"error":{"code":"unavailable","message":"too many connections from this address (QUERYD_MAX_CONNS_PER_CLIENT); close some or retry in a moment"}}` + "\n"
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

// countedConn gives its slot back once, when it is closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
