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

// dbshDirs skips without PostgreSQL 15's server binaries and returns the
// repository root and a new folder under /tmp the postgres user can enter
// (a test's own temporary folder is private to root).
func dbshDirs(t *testing.T) (root, dir string) {
	t.Helper()
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/pg_ctl"); err != nil {
		testenv.Missing(t, "PostgreSQL 15 server binaries (make setup)")
	}
	dir, err := os.MkdirTemp("/tmp", "stratakb-dbsh-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return testenv.RepoRoot(t), dir
}

// TestDBScriptKeepsPortAndRoles runs scripts/db.sh the way `make db-start`
// and `make db-stop` do, on a cluster of its own: the port is chosen once,
// outside Linux's ephemeral range, and kept across a stop and a start; TCP
// connections need the generated passwords, which db.sh never prints; the
// queryd role logs in with its own.
func TestDBScriptKeepsPortAndRoles(t *testing.T) {
	root, dir := dbshDirs(t)
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

// TestDBScriptRestartsAnUpgradedServer: when the PostgreSQL package is
// upgraded while the cluster runs (the first `make setup` can upgrade
// postgresql-15 along with the server headers), the running server keeps its
// old executable but loads the new version's libraries, and the first
// PL/pgSQL function fails with an undefined symbol. `db.sh start` then
// restarts it instead of reporting it as running. The upgrade is simulated
// on a relocated copy of the server's binaries: the running postgres file is
// replaced by a new file, as dpkg does.
func TestDBScriptRestartsAnUpgradedServer(t *testing.T) {
	const sysBin = "/usr/lib/postgresql/15/bin"
	root, dir := dbshDirs(t)
	copyExe := func(name, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(sysBin, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// install makes a relocated installation under dir/NAME: bin copied,
	// lib linked, the share folder linked entry by entry (without pgvector's
	// files when vector is false), so the binaries find their libraries and
	// share folder relative to themselves. It returns the bin folder.
	install := func(name string, vector bool) string {
		t.Helper()
		base := filepath.Join(dir, name)
		bin := filepath.Join(base, "lib", "postgresql", "15", "bin")
		ext := filepath.Join(base, "share", "postgresql", "15", "extension")
		for _, d := range []string{bin, ext} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		link := func(from, to string) {
			if err := os.Symlink(from, to); err != nil {
				t.Fatal(err)
			}
		}
		link("/usr/lib/postgresql/15/lib", filepath.Join(base, "lib", "postgresql", "15", "lib"))
		for _, sub := range []string{"", "extension"} {
			entries, err := os.ReadDir(filepath.Join("/usr/share/postgresql/15", sub))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if sub == "" && e.Name() == "extension" || sub != "" && !vector && strings.HasPrefix(e.Name(), "vector") {
					continue
				}
				link(filepath.Join("/usr/share/postgresql/15", sub, e.Name()),
					filepath.Join(base, "share", "postgresql", "15", sub, e.Name()))
			}
		}
		for _, exe := range []string{"postgres", "pg_ctl", "initdb", "psql", "pg_config"} {
			copyExe(exe, filepath.Join(bin, exe))
		}
		return bin
	}
	noVector := install("novector", false)
	bin := install("inst", true)
	pgDir := filepath.Join(dir, "pg")
	dbsh := func(verb string) string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "db.sh"), verb, pgDir)
		cmd.Env = append(os.Environ(), "PG_BIN="+bin, "DB_ENV_FILE="+filepath.Join(dir, "db.env"),
			"DB_NAME=dbsh_upgrade", "DB_THROWAWAY=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("db.sh %s: %v\n%s", verb, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "db.sh"), "stop", pgDir)
		cmd.Env = append(os.Environ(), "PG_BIN="+bin, "DB_ENV_FILE="+filepath.Join(dir, "db.env"))
		_ = cmd.Run()
		_ = os.RemoveAll(dir)
	})
	serverPID := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(pgDir, "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, _, _ := strings.Cut(string(b), "\n")
		return pid
	}

	// Without pgvector, start fails before anything runs.
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "db.sh"), "start", pgDir)
	cmd.Env = append(os.Environ(), "PG_BIN="+noVector, "DB_ENV_FILE="+filepath.Join(dir, "db.env"), "DB_THROWAWAY=1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "pgvector is not installed") {
		t.Errorf("db.sh start without pgvector: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(pgDir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("a server runs after the pgvector error (postmaster.pid: %v)", err)
	}

	dbsh("start")
	before := serverPID()
	if out := dbsh("start"); !strings.Contains(out, "already running") {
		t.Fatalf("second start of an unchanged server:\n%s", out)
	}
	// The upgrade: a new file takes the executable's name.
	tmp := filepath.Join(bin, "postgres.new")
	copyExe("postgres", tmp)
	if err := os.Rename(tmp, filepath.Join(bin, "postgres")); err != nil {
		t.Fatal(err)
	}
	if exe, _ := os.Readlink("/proc/" + before + "/exe"); !strings.HasSuffix(exe, " (deleted)") {
		t.Fatalf("the simulated upgrade left the server's executable as %q", exe)
	}
	out := dbsh("start")
	if !strings.Contains(out, "restarted") {
		t.Errorf("db.sh start after an upgrade did not restart the server:\n%s", out)
	}
	after := serverPID()
	if after == before {
		t.Errorf("the server's pid is still %s", before)
	}
	if exe, err := os.Readlink("/proc/" + after + "/exe"); err != nil || strings.HasSuffix(exe, " (deleted)") {
		t.Errorf("the restarted server runs %q (%v), want the file on disk", exe, err)
	}
}
