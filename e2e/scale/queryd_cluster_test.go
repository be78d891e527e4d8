package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	root := testenv.RepoRoot(tb)
	model := filepath.Join(root, embed.ModelsDir, embed.DefaultLocalModel)
	testenv.Require(tb, model, "the local embedding model (make setup)")
	testenv.Require(tb, filepath.Join(root, embed.DefaultLibraryPath), "ONNX Runtime (make setup)")
	ownerURL := dbtest.NewDatabase(tb)

	bin := tb.TempDir()
	for _, pkg := range []string{"ingestd", "queryd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "./"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	add := exec.Command(filepath.Join(bin, "ingestd"), "add", "fixtures/handbook", "--layer", mqLayer, "--wait")
	add.Dir, add.Env = root, append(mqEnv(), "DATABASE_URL="+ownerURL)
	if out, err := add.CombinedOutput(); err != nil {
		tb.Fatalf("ingestd add: %v\n%s", err, out)
	}

	keys := tb.TempDir()
	env := append(mqEnv(), "QUERYD_DATABASE_URL="+dbtest.QuerydURL(tb, ownerURL),
		"QUERYD_SESSION_KEY_FILE="+filepath.Join(keys, "mcp-session.key"),
		"QUERYD_RECEIPT_KEY_FILE="+filepath.Join(keys, "receipt-ed25519.key"),
		"STRATA_MODEL_DIR="+model, "ONNXRUNTIME_LIB="+filepath.Join(root, embed.DefaultLibraryPath),
		"LOG_LEVEL=warn")
	c := &mqCluster{root: root}
	for i := range n {
		addr := mqFreeAddr(tb)
		c.backends = append(c.backends, "http://"+addr)
		c.pids = append(c.pids, mqStart(tb, fmt.Sprintf("queryd %d", i), root,
			append(env, "QUERYD_ADDR="+addr), filepath.Join(bin, "queryd"), "serve"))
	}
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
	return c
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

func mqFreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
