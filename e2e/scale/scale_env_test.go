package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/testenv"
)

// scaleToken is the bearer token of the queryd processes the tests start.
const scaleToken = "e2e-scale-reader-4b7d1e09a2"

// fakeModel is the vector name ingestd and queryd give the fake
// embedder's vectors (fakeEmbedder).
const fakeModel = "openai_compatible:scale-fake@8"

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// TestMain removes the binaries the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds ingestd and queryd once for the package and returns
// their folder.
func binaries(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "stratakb-e2e-scale-bin")
		if binErr != nil {
			return
		}
		// One go build for both: they compile and link in parallel.
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./ingestd", "./queryd")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./ingestd ./queryd: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// fakeEmbedder is an OpenAI-compatible /v1/embeddings endpoint whose
// vectors are made from each text's hash: the same text always gets the
// same vector, so two ingests of one folder store identical vectors. It
// listens on addr ("127.0.0.1:0", or an address processes in a network
// namespace can reach) and takes delay per request.
func fakeEmbedder(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(testenv.HashEmbeddings("scale-fake", delay, nil))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// embedEnv is the environment that points a daemon at the fake embedder.
func embedEnv(url string) []string {
	return []string{"EMBEDDING_PROVIDER=openai_compatible", "EMBEDDING_BASE_URL=" + url, "EMBEDDING_MODEL=scale-fake",
		"EMBEDDING_DIMENSIONS=8", "EMBEDDING_BATCH_SIZE=8", "EMBEDDING_MAX_RETRIES=0"}
}

// baseEnv is this process's environment without the database settings,
// so that only what a test sets reaches the daemons.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.Contains(name, "DATABASE_URL") || strings.HasPrefix(name, "QUERYD_") || strings.HasPrefix(name, "EMBEDDING_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// proc is a daemon the test started; it is stopped at the test's end.
type proc struct {
	cmd    *exec.Cmd
	log    *testenv.SyncBuffer
	exited chan error
}

// start runs argv with env, logging to a buffer shown when the test
// fails, and stops it (SIGTERM, then SIGKILL) when the test ends.
func start(t *testing.T, name string, env []string, argv ...string) *proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = testenv.RepoRoot(t)
	p := &proc{cmd: cmd, log: &testenv.SyncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.log.String())
		}
	})
	return p
}

// stop ends the process: SIGTERM, then SIGKILL after 15 s.
func (p *proc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// kill ends the process with SIGKILL, as a crash does.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	<-p.exited
}

// call sends a JSON request to queryd's HTTP API (body nil: GET) and
// returns the status and the body; status 0 and the error when no answer
// came.
func call(t *testing.T, base, path string, body any) (int, []byte) {
	t.Helper()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		method, rd = http.MethodPost, bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+scaleToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// waitFor polls cond every 20 ms until it holds or timeout passes, and
// returns how long it took.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not after %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}
