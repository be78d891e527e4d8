package scale

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// host is where a daemon of a multi-process test runs: a network
// namespace of its own, joined to the test's namespace by a veth pair,
// or, where namespaces are not permitted, this machine's loopback.
type host struct {
	name string
	// ns is the network namespace ("" on loopback); prefix runs a command
	// in it.
	ns string
	// gateway is the test's end of the veth pair (127.0.0.1 on loopback):
	// the address the host reaches PostgreSQL and the embedder at.
	gateway string
}

// prefix is what runs argv on the host.
func (h host) prefix(argv ...string) []string {
	if h.ns == "" {
		return argv
	}
	return append([]string{"ip", "netns", "exec", h.ns}, argv...)
}

// newHosts makes n hosts. With `ip netns add` permitted (root), each is a
// network namespace with a veth pair to the test's namespace on a /30 of
// its own; they are deleted when the test ends. Otherwise they are
// loopback, and the log says so.
func newHosts(t *testing.T, n int) []host {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	if why := netnsUnavailable(tag); why != "" {
		t.Logf("hosts: processes on loopback (network namespaces not permitted here: %s)", why)
		hosts := make([]host, n)
		for i := range hosts {
			hosts[i] = host{name: fmt.Sprintf("loopback-%d", i), gateway: "127.0.0.1"}
		}
		return hosts
	}
	octet := 16 + int(b[0])%200
	hosts := make([]host, n)
	for i := range hosts {
		ns := fmt.Sprintf("strata-%s-%d", tag, i)
		out, in := fmt.Sprintf("st%s%dh", tag, i), fmt.Sprintf("st%s%dn", tag, i)
		gw, addr := fmt.Sprintf("10.231.%d.%d", octet, 4*i+1), fmt.Sprintf("10.231.%d.%d", octet, 4*i+2)
		t.Cleanup(func() {
			_ = exec.Command("ip", "netns", "del", ns).Run()
			_ = exec.Command("ip", "link", "del", out).Run()
		})
		for _, args := range [][]string{
			{"netns", "add", ns},
			{"link", "add", out, "type", "veth", "peer", "name", in},
			{"link", "set", in, "netns", ns},
			{"addr", "add", gw + "/30", "dev", out},
			{"link", "set", out, "up"},
			{"netns", "exec", ns, "ip", "addr", "add", addr + "/30", "dev", in},
			{"netns", "exec", ns, "ip", "link", "set", in, "up"},
			{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
		} {
			if b, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, b)
			}
		}
		hosts[i] = host{name: ns + " (" + addr + ")", ns: ns, gateway: gw}
	}
	t.Logf("hosts: network namespaces %s and the rest, each with a veth pair on 10.231.%d.0/30+", hosts[0].ns, octet)
	return hosts
}

// netnsUnavailable tries `ip netns add` and says why it cannot be used,
// or "" when it can.
func netnsUnavailable(tag string) string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip command"
	}
	probe := "strata-probe-" + tag
	if b, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return strings.TrimSpace(string(b))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return ""
}

// forward listens on addr and passes each connection through to target
// (host:port), until the test ends: PostgreSQL, on loopback, reached
// from a namespace through the veth address.
func forward(t *testing.T, addr, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("forward %s: %v", addr, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(u, c); u.Close() })
			wg.Go(func() { _, _ = io.Copy(c, u); c.Close() })
		}
	})
	return ln.Addr().String()
}
