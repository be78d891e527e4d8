package e2e

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/internal/testenv"
)

// TestDBScriptKeepsPortAndRoles runs scripts/db.sh the way `make db-start`
// and `make db-stop` do, on a cluster of its own: the port is chosen once,
// outside Linux's ephemeral range, and kept across a stop and a start; TCP
// connections need the generated passwords, which db.sh never prints; the
// queryd role logs in with its own.
func TestDBScriptKeepsPortAndRoles(t *testing.T) {
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/pg_ctl"); err != nil {
		testenv.Missing(t, "PostgreSQL 15 server binaries (make setup)")
	}
	root := testenv.RepoRoot(t)
	dir, err := os.MkdirTemp("/tmp", "stratakb-dbsh-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(dir, "env", "db.env")
	dbsh := func(verb string) string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "db.sh"), verb, filepath.Join(dir, "pg"))
		cmd.Env = append(os.Environ(), "DB_ENV_FILE="+envFile, "DB_NAME=dbsh_test", "DB_THROWAWAY=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("db.sh %s: %v\n%s", verb, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "db.sh"), "stop", filepath.Join(dir, "pg"))
		cmd.Env = append(os.Environ(), "DB_ENV_FILE="+envFile)
		_ = cmd.Run()
		_ = os.RemoveAll(dir)
	})
	readEnv := func() map[string]string {
		t.Helper()
		b, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				m[k] = v
			}
		}
		return m
	}

	out1 := dbsh("start")
	env1 := readEnv()
	owner, err := url.Parse(env1["DATABASE_URL"])
	if err != nil || env1["QUERYD_DATABASE_URL"] == "" {
		t.Fatalf("db.env: %v %v", env1, err)
	}
	port, _ := strconv.Atoi(owner.Port())
	if port >= 32768 && port <= 60999 || port == 0 {
		t.Errorf("port %d is inside Linux's ephemeral range 32768-60999", port)
	}
	pw, _ := owner.User.Password()
	q, _ := url.Parse(env1["QUERYD_DATABASE_URL"])
	qpw, _ := q.User.Password()
	if len(pw) < 20 || len(qpw) < 20 || pw == qpw {
		t.Errorf("passwords: owner %d characters, queryd %d, equal %v", len(pw), len(qpw), pw == qpw)
	}
	for _, secret := range []string{pw, qpw} {
		if strings.Contains(out1, secret) {
			t.Errorf("db.sh start printed a password:\n%s", out1)
		}
	}
	for _, name := range []string{"postgres", "queryd"} {
		fi, err := os.Stat(filepath.Join(dir, "env", "secrets", name+".password"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s's password file: %v %v, want mode 600", name, fi, err)
		}
	}
	if fi, err := os.Stat(envFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("db.env: %v %v, want mode 600", fi, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(u string) error {
		c, err := pgx.Connect(ctx, u)
		if err == nil {
			c.Close(ctx)
		}
		return err
	}
	if err := connect(env1["DATABASE_URL"]); err != nil {
		t.Errorf("connect as the owner: %v", err)
	}
	var role string
	if c, err := pgx.Connect(ctx, env1["QUERYD_DATABASE_URL"]); err != nil {
		t.Errorf("connect as queryd: %v", err)
	} else {
		_ = c.QueryRow(ctx, "SELECT current_user").Scan(&role)
		c.Close(ctx)
	}
	if role != "queryd" {
		t.Errorf("QUERYD_DATABASE_URL connects as %q, want queryd", role)
	}
	noPw := *owner
	noPw.User = url.User("postgres")
	if err := connect(noPw.String()); err == nil {
		t.Errorf("the owner connected over TCP without a password")
	}

	// Stop and start: the same port, the same passwords, even when a free
	// port below it has appeared in between.
	dbsh("stop")
	if port > 15432 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port-1))
		if err == nil {
			defer ln.Close()
		}
	}
	dbsh("start")
	env2 := readEnv()
	if env2["DATABASE_URL"] != env1["DATABASE_URL"] || env2["QUERYD_DATABASE_URL"] != env1["QUERYD_DATABASE_URL"] {
		t.Errorf("db.env changed across a restart:\nbefore %v\nafter  %v", env1, env2)
	}
	if err := connect(env2["QUERYD_DATABASE_URL"]); err != nil {
		t.Errorf("connect as queryd after a restart: %v", err)
	}
}
