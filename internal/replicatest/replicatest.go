// Package replicatest gives tests a real hot standby of the throwaway
// PostgreSQL that `make test` starts (TEST_DATABASE_URL): pg_basebackup -R
// into a folder of its own, started on another free loopback port, and
// always stopped and removed when the test ends, failed or not.
//
// The primary must allow replication connections from loopback, as
// scripts/db.sh's clusters do. Without TEST_DATABASE_URL or the PostgreSQL
// binaries (PG_BIN, default /usr/lib/postgresql/15/bin) a test is skipped,
// except under CI=true, where it fails: make setup installs them.
package replicatest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/internal/dbtest"
)

// startTimeout bounds the base backup and the standby's start.
const startTimeout = 60 * time.Second

// Standby is a running hot standby of the test cluster.
type Standby struct {
	// Port is the standby's loopback port.
	Port int
	// Dir holds its data folder (Dir/data), socket and log (Dir/postgres.log).
	Dir string

	bin string
}

// Start makes a hot standby of the cluster at TEST_DATABASE_URL and waits
// until it accepts read-only connections. It is stopped and removed when
// the test ends.
func Start(t testing.TB) *Standby {
	t.Helper()
	primary := dbtest.URL(t)
	bin := binDir(t)
	dir, err := os.MkdirTemp("", "strata-standby-")
	if err != nil {
		t.Fatalf("replicatest: %v", err)
	}
	s := &Standby{Port: freePort(t), Dir: dir, bin: bin}
	t.Cleanup(func() { s.remove(t) })
	if err := s.chownToPostgres(); err != nil {
		t.Fatalf("replicatest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if out, err := s.pg(ctx, "pg_basebackup", "-d", primary, "-D", s.data(), "-R", "-X", "stream",
		"-c", "fast", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("replicatest: pg_basebackup: %v\n%s", err, out)
	}
	if err := s.configure(); err != nil {
		t.Fatalf("replicatest: %v", err)
	}
	s.StartAgain(t)
	return s
}

// binDir is PG_BIN (default PostgreSQL 15's), or skips (fails under CI)
// when pg_basebackup is not there.
func binDir(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_basebackup")); err != nil {
		why := fmt.Sprintf("PostgreSQL server binaries not found in %s (make setup installs them): %v", bin, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return bin
}

// freePort is a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("replicatest: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (s *Standby) data() string { return filepath.Join(s.Dir, "data") }

// configure overrides what the base backup copied from the primary's
// configuration: the port and the socket folder, then the throwaway
// cluster's settings (no fsync).
func (s *Standby) configure() error {
	conf := fmt.Sprintf("\n# replicatest\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n"+
		"hot_standby = on\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n", s.Port, s.Dir)
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("standby configuration: %w", err)
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return fmt.Errorf("standby configuration: %w", err)
	}
	return f.Close()
}

// StartAgain starts the standby (after Stop) and waits until it accepts
// read-only connections.
func (s *Standby) StartAgain(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if out, err := s.pg(ctx, "pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "postgres.log"),
		"-w", "-t", "60", "start").CombinedOutput(); err != nil {
		t.Fatalf("replicatest: start the standby: %v\n%s\n%s", err, out, s.logTail())
	}
	u := s.URL(t, dbtest.URL(t))
	for {
		conn, err := pgx.Connect(ctx, u)
		if err == nil {
			var rec bool
			err = conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec)
			conn.Close(ctx)
			if err == nil && rec {
				return
			}
			if err == nil {
				t.Fatalf("replicatest: the standby on port %d is not in recovery", s.Port)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("replicatest: the standby does not accept connections: %v\n%s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the standby (fast shutdown); StartAgain brings it back.
func (s *Standby) Stop(t testing.TB) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("replicatest: stop the standby: %v", err)
	}
}

func (s *Standby) stop() error {
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err != nil {
		return nil // not running
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := s.pg(ctx, "pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// remove stops the standby and deletes its folder.
func (s *Standby) remove(t testing.TB) {
	if err := s.stop(); err != nil {
		t.Logf("replicatest: stop the standby: %v", err)
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Logf("replicatest: remove %s: %v", s.Dir, err)
	}
}

// URL is u (a URL of the primary: any role, any database) pointed at the
// standby.
func (s *Standby) URL(t testing.TB, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("replicatest: parse %q: %v", u, err)
	}
	p.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	return p.String()
}

// pg runs one of the PostgreSQL programs, as the postgres user when the
// test runs as root (PostgreSQL refuses to run as root).
func (s *Standby) pg(ctx context.Context, prog string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, prog)
	if os.Geteuid() == 0 {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

// chownToPostgres gives the folder to the postgres user when running as
// root, with the mode PostgreSQL wants.
func (s *Standby) chownToPostgres() error {
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs a postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(s.Dir, uid, gid)
}

func (s *Standby) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
