// Package tcpproxy is a test helper: a TCP proxy on a loopback port that
// stands between a client and PostgreSQL, so that a test can take the
// database away and bring it back, and count the connections the client
// opens. Only tests import it.
package tcpproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Mode is what the proxy does with a connection.
type Mode int32

const (
	// Forward passes connections through to the target.
	Forward Mode = iota
	// AcceptAndClose accepts each connection and hangs up at once, as a
	// server that is stopping does.
	AcceptAndClose
	// Refuse closes the listening socket: connections are refused.
	Refuse
)

// Proxy forwards from Addr to its target in its current Mode.
type Proxy struct {
	t        testing.TB
	target   string
	addr     string
	mode     atomic.Int32
	accepted atomic.Int64
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

// New starts a proxy to target (host:port) in Forward mode; it stops, and
// cuts what it forwards, when the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcpproxy: listen: %v", err)
	}
	p := &Proxy{t: t, target: target, addr: ln.Addr().String()}
	p.serve(ln)
	t.Cleanup(func() { p.Set(Refuse) })
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Accepted counts the connections accepted (forwarded or hung up on) since
// the proxy started or the last ResetAccepted.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// ResetAccepted sets Accepted back to zero.
func (p *Proxy) ResetAccepted() { p.accepted.Store(0) }

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			if Mode(p.mode.Load()) != Forward {
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// Set switches the mode and cuts the connections already forwarded, as a
// database that stops does. Leaving Refuse listens again on the same port.
func (p *Proxy) Set(m Mode) {
	p.mode.Store(int32(m))
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	ln := p.ln
	if m == Refuse && ln != nil {
		p.ln = nil
	}
	p.mu.Unlock()
	if m == Refuse && ln != nil {
		ln.Close()
	}
	if m != Refuse && ln == nil {
		l, err := net.Listen("tcp", p.addr)
		if err != nil {
			p.t.Fatalf("tcpproxy: listen again on %s: %v", p.addr, err)
		}
		p.serve(l)
	}
}
