package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
)

func TestMain(m *testing.M) {
	// A queryd serve running on this machine must not answer the tests'
	// command lines: only a test that sets QUERYD_ADDR uses one.
	defaultRemoteAddr = ""
	os.Exit(m.Run())
}

// TestCLIUsesARunningServer: with a queryd serve at QUERYD_ADDR, `queryd
// search` and `queryd ask` print what they print in-process, and the server
// ran them; with --local, or with no server there, they run in-process.
func TestCLIUsesARunningServer(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	root := filepath.Join(t.TempDir(), "rules")
	testenv.WriteFiles(t, root, map[string]string{"leave.md": "# Leave\n\n## 3 Carry-over\n\n" +
		"Up to five unused leave days may be carried into the next calendar year. Days carried over lapse at the end of March.\n",
		"travel.md": "# Travel\n\nTrain tickets are booked through the travel desk. Flights need a manager's approval.\n"})
	ingesttest.Ingest(t, owner, jobs.Layer{Name: "rules", Root: root}, ingesttest.Options{})
	exRoot := filepath.Join(t.TempDir(), "policies")
	testenv.WriteFiles(t, exRoot, map[string]string{"leave.md": "# Leave\n\n## 3 Carry-over\n\n" +
		"Up to five unused leave days may be carried into the next calendar year. Days carried over lapse at the end of March.\n"})
	ingesttest.Ingest(t, owner, jobs.Layer{Name: "policies", Root: exRoot, AnswerMode: "extractive"}, ingesttest.Options{})
	addr := testenv.FreeAddr(t)
	env := map[string]string{"QUERYD_DATABASE_URL": qurl, "STRATA_MODEL_DIR": t.TempDir(), "QUERYD_ADDR": addr}
	getenv := func(k string) string { return env[k] }
	run := func(args ...string) (string, string, error) {
		var out, errOut strings.Builder
		err := Run(ctx, args, getenv, strings.NewReader(""), &out, &errOut)
		return out.String(), errOut.String(), err
	}
	question := "How many unused leave days may be carried into the next calendar year?"

	// No server: in-process, silently.
	localSearch, stderr, err := run("search", question)
	if err != nil || stderr != "" {
		t.Fatalf("search with no server: %v\n%s", err, stderr)
	}
	localAsk, _, err := run("ask", question, "--json", "--layers", "rules")
	if err != nil {
		t.Fatalf("ask with no server: %v", err)
	}
	// An extractive answer (its concise JSON leaves the passages out) with
	// its receipt: each run issues its own receipt id.
	receiptID := regexp.MustCompile(`"rcpt_[^"]*"`)
	localExtractive, _, err := run("ask", question, "--json", "--layers", "policies")
	if err != nil || !receiptID.MatchString(localExtractive) {
		t.Fatalf("extractive ask with no server: %v\n%s", err, localExtractive)
	}

	srvCtx, stop := context.WithCancel(ctx)
	var serveLog testenv.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(srvCtx, []string{"serve"}, getenv, nil, io.Discard, &serveLog) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queryd serve did not come up at %s: %v\n%s", addr, err, serveLog.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	served := func(tool string) int {
		return strings.Count(serveLog.String(), `"tool":"`+tool+`"`)
	}

	remoteSearch, _, err := run("search", question)
	if err != nil {
		t.Fatalf("search with a server: %v", err)
	}
	if remoteSearch != localSearch {
		t.Errorf("search through the server printed\n%s\nin-process\n%s", remoteSearch, localSearch)
	}
	if n := served("strata_search"); n != 1 {
		t.Errorf("the server ran %d searches, want 1; its log:\n%s", n, serveLog.String())
	}
	remoteAsk, _, err := run("ask", question, "--json", "--layers", "rules")
	if err != nil {
		t.Fatalf("ask with a server: %v", err)
	}
	if remoteAsk != localAsk {
		t.Errorf("ask through the server printed\n%s\nin-process\n%s", remoteAsk, localAsk)
	}
	remoteExtractive, _, err := run("ask", question, "--json", "--layers", "policies")
	if err != nil {
		t.Fatalf("extractive ask with a server: %v", err)
	}
	if a, b := receiptID.ReplaceAllString(remoteExtractive, "RCPT"), receiptID.ReplaceAllString(localExtractive, "RCPT"); a != b {
		t.Errorf("extractive ask through the server printed\n%s\nin-process\n%s", a, b)
	}
	if n := served("strata_ask"); n != 2 {
		t.Errorf("the server ran %d asks, want 2", n)
	}
	if _, _, err := run("ask", question, "--local", "--json"); err != nil {
		t.Fatal(err)
	}
	// --local ran here: the server's count did not move.
	if n := served("strata_ask"); n != 2 {
		t.Errorf("ask --local reached the server (%d asks)", n)
	}
	if again, _, err := run("search", question, "--local"); err != nil || again != localSearch {
		t.Errorf("search --local: %v\n%s", err, again)
	}
	if n := served("strata_search"); n != 1 {
		t.Errorf("search --local reached the server (%d searches)", n)
	}

	// A request the server refuses as invalid (a layer that does not
	// exist) is reported as in-process, not run again here.
	_, _, remoteErr := run("search", question, "--layers", "nosuch")
	if n := served("strata_search"); n != 2 {
		t.Errorf("the server ran %d searches, want 2", n)
	}
	_, _, localErr := run("search", question, "--layers", "nosuch", "--local")
	var ue usageError
	if !errors.As(remoteErr, &ue) || localErr == nil || remoteErr.Error() != localErr.Error() {
		t.Errorf("an unknown layer: through the server %v, in-process %v", remoteErr, localErr)
	}
}

// TestCLIServerErrors: a 400 from the server is reported and not retried
// here; a 5xx, or a server that is not there, runs the verb in-process.
func TestCLIServerErrors(t *testing.T) {
	ctx := context.Background()
	var calls int
	var mu sync.Mutex
	status := http.StatusBadRequest
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		st := status
		mu.Unlock()
		if r.URL.Path != "/v1/search" || r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "wrong request", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		io.WriteString(w, `{"error":{"code":"invalid_argument","message":"metadata_filter: too many keys","argument":"metadata_filter"}}`+"\n")
	}))
	defer fake.Close()
	// The database refuses at once: a verb that runs in-process fails
	// there, saying so.
	env := map[string]string{"QUERYD_URL": fake.URL, "QUERYD_TOKEN": "s3cret",
		"QUERYD_DATABASE_URL": "postgres://queryd@" + testenv.FreeAddr(t) + "/stratakb?sslmode=disable&connect_timeout=2", "STRATA_MODEL_DIR": t.TempDir()}
	run := func(args ...string) error {
		return Run(ctx, args, func(k string) string { return env[k] }, nil, io.Discard, io.Discard)
	}
	err := run("search", "leave")
	var ue usageError
	if !errors.As(err, &ue) || err.Error() != "search: metadata_filter: too many keys" {
		t.Errorf("a 400: got %v, want the usage error search: metadata_filter: too many keys", err)
	}
	if calls != 1 {
		t.Errorf("the server was called %d times, want 1", calls)
	}
	status = http.StatusServiceUnavailable
	if err := run("search", "leave"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("a 503: got %v, want the in-process run's unreachable database", err)
	}
	// Nothing listening: in-process.
	env["QUERYD_URL"] = "http://" + testenv.FreeAddr(t)
	start := time.Now()
	if err := run("search", "leave"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("no server: got %v, want the in-process run's unreachable database", err)
	}
	t.Logf("no server: %v", time.Since(start))
}

// TestRemoteBase: loopback addresses only, unless QUERYD_URL names one.
func TestRemoteBase(t *testing.T) {
	for _, tc := range []struct{ url, addr, want string }{
		{"", "127.0.0.1:8377", "http://127.0.0.1:8377"},
		{"", ":9000", "http://127.0.0.1:9000"},
		{"", "0.0.0.0:9000", "http://127.0.0.1:9000"},
		{"", "[::1]:9000", "http://[::1]:9000"},
		{"", "localhost:9000", "http://localhost:9000"},
		{"", "10.0.0.5:8377", ""},
		{"", "127.0.0.1:0", ""},
		{"", "", ""}, // the tests' default
		{"https://kb.example.com/", "10.0.0.5:8377", "https://kb.example.com"},
	} {
		env := map[string]string{"QUERYD_URL": tc.url, "QUERYD_ADDR": tc.addr}
		if got := remoteBase(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("QUERYD_URL=%q QUERYD_ADDR=%q: %q, want %q", tc.url, tc.addr, got, tc.want)
		}
	}
}
