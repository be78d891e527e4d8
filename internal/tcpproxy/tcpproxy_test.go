package tcpproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip dials addr, sends a line and returns the answer or the error.
func roundTrip(addr string) (net.Conn, string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, "", err
	}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		c.Close()
		return nil, "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		c.Close()
		return nil, "", err
	}
	return c, line, nil
}

func TestModes(t *testing.T) {
	t.Parallel()
	p := New(t, echoServer(t))
	c, line, err := roundTrip(p.Addr())
	if err != nil || line != "ping\n" {
		t.Fatalf("forward: %q %v", line, err)
	}

	// Switching cuts the forwarded connection; new ones are hung up on.
	p.Set(AcceptAndClose)
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a forwarded connection survived the switch")
	}
	c.Close()
	var op *net.OpError
	if _, _, err := roundTrip(p.Addr()); err == nil {
		t.Error("accept-and-close answered")
	} else if errors.As(err, &op) && op.Op == "dial" {
		t.Errorf("accept-and-close refused instead of hanging up: %v", err)
	}
	if n := p.Accepted(); n != 2 {
		t.Errorf("accepted %d, want 2", n)
	}
	p.ResetAccepted()

	p.Set(Refuse)
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Error("refuse: the dial went through")
	}
	if n := p.Accepted(); n != 0 {
		t.Errorf("refuse accepted %d", n)
	}

	// Back to forwarding, on the same port.
	p.Set(Forward)
	c, line, err = roundTrip(p.Addr())
	if err != nil || line != "ping\n" {
		t.Fatalf("forward again: %q %v", line, err)
	}
	c.Close()
}
