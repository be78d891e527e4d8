package uie2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

const (
	layer       = "explorer"
	readerToken = "e2e-ui-reader-token-51c2be07aa"
	adminToken  = "e2e-ui-admin-token-9d04f1c3b7"
	// chromium is Debian's package (scripts/setup-browser.sh).
	chromium = "/usr/bin/chromium"
	// scenarioTimeout bounds one browser scenario, start to screenshot.
	scenarioTimeout = 60 * time.Second
)

// env is what every scenario shares: the binaries, a database with the
// fixture layer ingested, and one queryd serve with a reader token.
type env struct {
	root, node, e2eDir, shots string
	bin, dbName, base         string
	queryd                    *exec.Cmd
	logs                      *bytes.Buffer
}

var (
	setupOnce sync.Once
	shared    *env
	setupErr  string
)

// setup checks for node, playwright-core and Chromium (skipping, or
// failing under CI=true, without them), then builds, ingests and serves
// once for the package.
func setup(t *testing.T) *env {
	t.Helper()
	root := testenv.RepoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed (scripts/setup.sh installs it)")
	}
	e2eDir := filepath.Join(testenv.VarDir(t), "e2e")
	testenv.Require(t, filepath.Join(e2eDir, "node_modules", "playwright-core", "package.json"),
		"playwright-core (run scripts/setup-e2e.sh)")
	testenv.Require(t, chromium, "Debian's Chromium (run scripts/setup-browser.sh)")
	dbtest.URL(t) // skips, or fails under CI, when there is no database
	setupOnce.Do(func() { setupErr = start(root, node, e2eDir) })
	if setupErr != "" {
		t.Fatal(setupErr)
	}
	return shared
}

// TestMain stops queryd and drops what the shared setup made.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if code != 0 && shared.logs != nil {
			fmt.Fprintf(os.Stderr, "queryd serve log:\n%s\n", shared.logs.String())
		}
		shared.stop()
	}
	os.Exit(code)
}

// start sets shared before anything that needs cleaning up, so that
// TestMain stops and drops what it made even when a step fails.
func start(root, node, e2eDir string) string {
	bin, err := os.MkdirTemp("", "stratakb-e2e-ui-bin")
	if err != nil {
		return err.Error()
	}
	e := &env{root: root, node: node, e2eDir: e2eDir, bin: bin, shots: filepath.Join(root, "var", "e2e", "screenshots")}
	shared = e
	if err := os.MkdirAll(e.shots, 0o755); err != nil {
		return err.Error()
	}
	for _, pkg := range []string{"ingestd", "queryd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "./"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Sprintf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	querydURL, err := e.ingest(filepath.Join("e2e", "ui", "testdata", "explorer"))
	if err != nil {
		return err.Error()
	}
	if err := e.serve(querydURL); err != nil {
		return err.Error()
	}
	return ""
}

// ingest creates a database, runs `ingestd add` on dir into it as the
// owner and returns the URL queryd connects with (as the queryd role).
// ingestd add exits non-zero when a file failed, as the fixture's
// broken-scan.pdf does: its report is checked instead.
func (e *env) ingest(dir string) (string, error) {
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("connect as the test database's owner: %w", err)
	}
	defer admin.Close(ctx)
	e.dbName = fmt.Sprintf("t_e2e_ui_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.dbName); err != nil {
		return "", fmt.Errorf("create database %s: %w", e.dbName, err)
	}
	u, _ := url.Parse(base)
	u.Path = "/" + e.dbName
	add := exec.Command(filepath.Join(e.bin, "ingestd"), "add", dir, "--layer", layer, "--wait",
		"--description", "Fixture layer of the explorer's browser tests")
	add.Dir, add.Env = e.root, append(withoutDatabaseURLs(os.Environ()), "DATABASE_URL="+u.String())
	out, err := add.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "broken-scan.pdf") {
		return "", fmt.Errorf("ingestd add %s: %w\n%s", dir, err, out)
	}
	// The queryd role comes from the migrations, without a login; the test
	// cluster trusts local connections, so LOGIN is all it needs.
	if _, err := admin.Exec(ctx, "ALTER ROLE queryd LOGIN"); err != nil {
		return "", fmt.Errorf("let the queryd role log in: %w", err)
	}
	u.User = url.User("queryd")
	return u.String(), nil
}

// serve starts `queryd serve` on a free loopback port with a reader token,
// and waits for /healthz.
func (e *env) serve(querydURL string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(filepath.Join(e.bin, "queryd"), "serve")
	cmd.Dir = e.root
	cmd.Env = append(withoutDatabaseURLs(os.Environ()), "QUERYD_DATABASE_URL="+querydURL,
		"QUERYD_ADDR="+addr, "QUERYD_TOKENS=reader:"+readerToken+",admin:"+adminToken)
	for key, def := range map[string]string{"STRATA_MODEL_DIR": filepath.Join(embed.ModelsDir, embed.DefaultLocalModel), "ONNXRUNTIME_LIB": embed.DefaultLibraryPath} {
		if os.Getenv(key) == "" {
			cmd.Env = append(cmd.Env, key+"="+filepath.Join(e.root, def))
		}
	}
	e.logs = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = e.logs, e.logs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start queryd serve: %w", err)
	}
	e.queryd = cmd
	e.base = "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(e.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("queryd serve not healthy: %v\n%s", err, e.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends queryd (SIGTERM, then SIGKILL after 15 s), removes the
// binaries and drops the database.
func (e *env) stop() {
	if e.queryd != nil && e.queryd.Process != nil {
		_ = e.queryd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = e.queryd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = e.queryd.Process.Kill()
		}
	}
	_ = os.RemoveAll(e.bin)
	if e.dbName == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c, err := pgx.Connect(ctx, os.Getenv("TEST_DATABASE_URL")); err == nil {
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+e.dbName+" WITH (FORCE)")
		c.Close(ctx)
	}
}

func withoutDatabaseURLs(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "QUERYD_DATABASE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}

// browse runs the node script e2e/ui/NAME.cjs against the server, which
// opens path in Chromium, saves var/e2e/screenshots/NAME.png (or SHOT's
// name) and prints what it saw as JSON into out. extra are more
// environment variables for the script.
func (e *env) browse(t *testing.T, script, path string, out any, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, filepath.Join(e.root, "e2e", "ui", script+".cjs"))
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), "STRATA_E2E_DIR="+e.e2eDir, "CHROMIUM="+chromium, "BASE_URL="+e.base,
		"PAGE_PATH="+path, "TOKEN="+readerToken, "SHOT="+filepath.Join(e.shots, script+".png"))
	cmd.Env = append(cmd.Env, extra...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s.cjs: %v\nstdout: %s\nstderr: %s", script, err, b, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node %s.cjs printed no JSON: %v\n%s\nstderr: %s", script, err, b, stderr.String())
	}
	t.Logf("screenshot: %s", filepath.Join(e.shots, script+".png"))
}

// seen is what every scenario reports besides its own findings: problems
// the browser reported (console errors, CSP violations, failed requests,
// uncaught exceptions) and the security headers of the page's response.
type seen struct {
	Problems []string          `json:"problems"`
	Headers  map[string]string `json:"headers"`
}

func (s seen) check(t *testing.T) {
	t.Helper()
	for _, p := range s.Problems {
		t.Errorf("the browser reported: %s", p)
	}
	if csp := s.Headers["content-security-policy"]; !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("the page came without the strict CSP: %q", csp)
	}
}
