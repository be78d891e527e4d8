package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// The handbook, ingested once per cluster, and what the tests ask it.
const (
	mqLayer = "handbook"
	mqQuery = "How many unused leave days can be carried over?"
	mqDraft = "Up to 5 unused days may be carried into the next calendar year [S1]."
)

// mqCluster is several `queryd serve` processes of one deployment: one
// database (the handbook ingested by the real ingestd, with the local
// model), one session key file and one receipt key file, each process on
// its own loopback port.
type mqCluster struct {
	root     string
	backends []string // base URLs, http://127.0.0.1:PORT
	pids     []int
}

// mqNewCluster builds the binaries, ingests the handbook into a new
// database and starts n queryd processes on it. Everything is stopped and
// removed when tb ends, failed or not.
func mqNewCluster(tb testing.TB, n int) *mqCluster {
	tb.Helper()
	d := mqDeploy(tb, nil)
	c := &mqCluster{root: d.root}
	d.start(tb, c, n, "queryd", d.env(tb, dbtest.QuerydURL(tb, d.ownerURL)))
	c.waitHealthy(tb)
	return c
}

// mqDeployment is what the clusters of one test share: the repository,
// the built binaries, the local model, the database with the handbook
// ingested, and one folder of keys.
type mqDeployment struct {
	root, bin, model, ownerURL, keys string
}

// mqDeploy builds ingestd and queryd, and ingests the handbook into a new
// database with the real ingestd and the local model; beforeIngest, when
// set, runs once the database exists (a standby made then replays the
// ingest).
func mqDeploy(tb testing.TB, beforeIngest func()) mqDeployment {
	tb.Helper()
	root := testenv.RepoRoot(tb)
	d := mqDeployment{root: root, bin: tb.TempDir(), keys: tb.TempDir(),
		model: filepath.Join(root, embed.ModelsDir, embed.DefaultLocalModel)}
	testenv.Require(tb, d.model, "the local embedding model (make setup)")
	testenv.Require(tb, filepath.Join(root, embed.DefaultLibraryPath), "ONNX Runtime (make setup)")
	d.ownerURL = dbtest.NewDatabase(tb)
	for _, pkg := range []string{"ingestd", "queryd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(d.bin, pkg), "./"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	if beforeIngest != nil {
		beforeIngest()
	}
	add := exec.Command(filepath.Join(d.bin, "ingestd"), "add", "fixtures/handbook", "--layer", mqLayer, "--wait")
	add.Dir, add.Env = root, append(mqEnv(), "DATABASE_URL="+d.ownerURL)
	if out, err := add.CombinedOutput(); err != nil {
		tb.Fatalf("ingestd add: %v\n%s", err, out)
	}
	return d
}

// env is a queryd process's environment on the database at querydURL:
// one session key and one receipt key for every process, the local model.
func (d mqDeployment) env(tb testing.TB, querydURL string, extra ...string) []string {
	tb.Helper()
	env := append(mqEnv(), "QUERYD_DATABASE_URL="+querydURL,
		"QUERYD_SESSION_KEY_FILE="+filepath.Join(d.keys, "mcp-session.key"),
		"QUERYD_RECEIPT_KEY_FILE="+filepath.Join(d.keys, "receipt-ed25519.key"),
		"STRATA_MODEL_DIR="+d.model, "ONNXRUNTIME_LIB="+filepath.Join(d.root, embed.DefaultLibraryPath),
		"LOG_LEVEL=warn")
	return append(env, extra...)
}

// start starts n `queryd serve` of c with env, each on a free loopback
// port, named name and its number in the log.
func (d mqDeployment) start(tb testing.TB, c *mqCluster, n int, name string, env []string) {
	tb.Helper()
	for i := range n {
		addr := testenv.FreeAddr(tb)
		c.backends = append(c.backends, "http://"+addr)
		c.pids = append(c.pids, mqStart(tb, fmt.Sprintf("%s %d", name, i), d.root,
			append(append([]string{}, env...), "QUERYD_ADDR="+addr), filepath.Join(d.bin, "queryd"), "serve"))
	}
}

// waitHealthy waits until every process of c answers /healthz.
func (c *mqCluster) waitHealthy(tb testing.TB) {
	tb.Helper()
	for i, b := range c.backends {
		mqWait(tb, 60*time.Second, fmt.Sprintf("queryd %d at %s to answer /healthz", i, b), func() bool {
			resp, err := http.Get(b + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
}

// mqEnv is the test's environment without database URLs or queryd
// settings, so that nothing of the caller's own set-up leaks in.
func mqEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "DATABASE_URL" || strings.HasPrefix(k, "QUERYD_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// mqLog collects a process's output, shown when the test fails.
type mqLog struct{ bytes.Buffer }

// mqStart runs argv and stops it (SIGTERM, then SIGKILL of its group after
// 10 s) when tb ends; it returns the process id.
func mqStart(tb testing.TB, name, dir string, env []string, argv ...string) int {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	log := &mqLog{}
	cmd.Stdout, cmd.Stderr = &mqLocked{w: log}, &mqLocked{w: log}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if tb.Failed() {
			tb.Logf("%s log:\n%s", name, log.String())
		}
	})
	return cmd.Process.Pid
}

// mqLocked serialises the writes of a process's stdout and stderr.
type mqLocked struct{ w io.Writer }

var mqLogMu = make(chan struct{}, 1)

func (l *mqLocked) Write(p []byte) (int, error) {
	mqLogMu <- struct{}{}
	defer func() { <-mqLogMu }()
	return l.w.Write(p)
}

func mqWait(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not after %s", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mqCall sends body (nil: GET) to base+path and decodes the JSON answer
// into a generic value; it fails the test on anything but 200.
func mqCall(tb testing.TB, client *http.Client, base, path string, body any) map[string]any {
	tb.Helper()
	status, b := mqDo(tb, client, base, path, body)
	if status != http.StatusOK {
		tb.Fatalf("%s%s: status %d: %s", base, path, status, b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("%s%s: %v: %s", base, path, err, b)
	}
	return v
}

func mqDo(tb testing.TB, client *http.Client, base, path string, body any) (int, []byte) {
	tb.Helper()
	status, b, err := mqSend(client, base, path, body)
	if err != nil {
		tb.Fatal(err)
	}
	return status, b
}

// mqSend is mqDo for goroutines other than the test's: it returns the
// error instead of failing the test.
func mqSend(client *http.Client, base, path string, body any) (int, []byte, error) {
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		method, rd = http.MethodPost, bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s%s: %w", method, base, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
