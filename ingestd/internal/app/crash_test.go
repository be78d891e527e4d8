package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/testenv"
)

// childEnv is set when the test binary runs as ingestd itself, so a test can
// start ingestd as a separate process and kill it with SIGKILL.
const childEnv = "STRATAKB_TEST_INGESTD_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// fakeModel is the model name ingestd gives the fake endpoint's vectors.
const fakeModel = "openai_compatible:slow-fake@8"

// slowEmbedder is an OpenAI-compatible /v1/embeddings endpoint that takes
// delay per request and returns vectors made from each text's hash.
func slowEmbedder(t *testing.T, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var served atomic.Int64
	srv := httptest.NewServer(testenv.HashEmbeddings("slow-fake", delay, func() { served.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &served
}

// child runs ingestd as a separate process of this test binary.
func (c *cli) child(ctx context.Context, embedURL string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	c.t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), childEnv+"=1", "DATABASE_URL="+c.url, "INGEST_WORKERS=2",
		"EMBEDDING_PROVIDER=openai_compatible", "EMBEDDING_BASE_URL="+embedURL, "EMBEDDING_MODEL=slow-fake",
		"EMBEDDING_DIMENSIONS=8", "EMBEDDING_BATCH_SIZE=4", "EMBEDDING_MAX_RETRIES=0")
	return cmd, &out
}

// TestKillDuringEmbeddingThenRerunFinishes is the crash scenario: kill -9 of
// `ingestd add --wait` while it embeds, then the same command again. The
// rerun must take over what the killed process left, exit 0 within the
// deadline with every file ingested and every chunk embedded, and status
// must show no run "running".
func TestKillDuringEmbeddingThenRerunFinishes(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	const files = 24
	for i := 0; i < files; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# Procedure %d\n\n", i)
		for p := 0; p < 4; p++ {
			fmt.Fprintf(&b, "Step %d of procedure %d: the operator checks valve %d-%d, writes the pressure in the log, "+
				"and waits for the second operator to confirm the reading before the line is opened again. "+
				"Deviations above five percent are reported to the shift lead of site %d on the same day.\n\n", p, i, i, p, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("proc-%02d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, served := slowEmbedder(t, 150*time.Millisecond)
	pool := c.pool()

	// First run: killed once some vectors are stored and others pending.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	first, out := c.child(ctx, srv.URL, "add", dir, "--layer", "ops", "--wait")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var stored, pending int
		err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM strata.embeddings WHERE model = $1),
			(SELECT count(*) FROM strata.chunks c WHERE NOT EXISTS (SELECT 1 FROM strata.embeddings e
				WHERE e.model = $1 AND e.content_hash = c.content_hash))`, fakeModel).Scan(&stored, &pending)
		if err == nil && stored > 0 && pending > 0 {
			break
		}
		select {
		case <-ctx.Done():
			_ = first.Process.Kill()
			t.Fatalf("the first run never got to embedding (stored %d, pending %d, %v)\n%s", stored, pending, err, out)
		case <-tick.C:
		}
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = first.Wait()
	t.Logf("killed the first run after %d embedding requests", served.Load())

	// Status right after the kill: nothing may read as running.
	code, status, errOut := c.run("status")
	if code != 0 {
		t.Fatalf("status exited %d: %s", code, errOut)
	}
	if strings.Contains(status, "running 20") {
		t.Errorf("status after the kill shows a run of the dead process as running:\n%s", status)
	}
	var orphans int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE state = 'running'`).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if orphans > 0 && !strings.Contains(status, "worker is gone since") {
		t.Errorf("%d jobs of the dead process are left running, but status does not say its worker is gone:\n%s", orphans, status)
	}
	t.Logf("status after the kill (%d jobs left running):\n%s", orphans, status)

	// The same command again, with a deadline.
	start := time.Now()
	second, out := c.child(ctx, srv.URL, "add", dir, "--layer", "ops", "--wait")
	err := second.Run()
	if ctx.Err() != nil {
		t.Fatalf("the rerun did not finish within the deadline:\n%s", out)
	}
	if err != nil {
		t.Fatalf("the rerun failed: %v\n%s", err, out)
	}
	t.Logf("rerun finished in %s:\n%s", time.Since(start).Round(time.Millisecond), out)

	var docs, chunks, missing, unfinished int
	var complete bool
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM strata.documents WHERE status = 'ok'),
		(SELECT count(*) FROM strata.chunks),
		(SELECT count(*) FROM strata.chunks c WHERE NOT EXISTS (SELECT 1 FROM strata.embeddings e
			WHERE e.model = $1 AND e.content_hash = c.content_hash)),
		(SELECT count(*) FROM strata.ingest_runs WHERE status IN ('walking', 'running')),
		coalesce((SELECT bool_and(complete) FROM strata.layer_models WHERE model = $1), false)`, fakeModel).Scan(
		&docs, &chunks, &missing, &unfinished, &complete); err != nil {
		t.Fatal(err)
	}
	if docs != files || chunks < files*2 || missing != 0 || !complete {
		t.Errorf("after the rerun: %d of %d files stored, %d chunks, %d without a vector, model complete %v",
			docs, files, chunks, missing, complete)
	}
	if unfinished != 0 {
		t.Errorf("%d runs are left unfinished", unfinished)
	}
	code, status, _ = c.run("status")
	if code != 0 || strings.Contains(status, "running 20") || strings.Contains(status, "interrupted") ||
		!strings.Contains(status, fakeModel+" 0 pending") {
		t.Errorf("status after the rerun (exit %d):\n%s", code, status)
	}
}

// TestStatusOfARunWhoseWorkerDied: a run left "running" by a process that is
// gone (its jobs still marked running, as kill -9 leaves them) reads as
// interrupted, with when the worker was last seen, not as running.
func TestStatusOfARunWhoseWorkerDied(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nSome text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := c.runEnv(map[string]string{"STRATA_MODEL_DIR": filepath.Join(t.TempDir(), "none")},
		"add", dir, "--layer", "d"); code != 0 {
		t.Fatalf("add exited %d\n%s\n%s", code, out, errOut)
	}
	ctx := context.Background()
	pool := c.pool()
	// The state a killed `ingestd add --wait` leaves: its worker row with a
	// recent heartbeat but no lock held, its run still "walking", the walk
	// job running under its client ID.
	if _, err := pool.Exec(ctx, `INSERT INTO strata.ingest_workers (client_id, host, pid, heartbeat_at)
		VALUES ('ingestd_dead_1', 'host', 1, now() - interval '2 seconds')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE strata.ingest_runs SET worker_id = 'ingestd_dead_1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'running', attempt = 1, attempted_at = now(),
		attempted_by = ARRAY['ingestd_dead_1'] WHERE kind = 'ingest_layer'`); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("status")
	if code != 0 {
		t.Fatalf("status exited %d: %s", code, errOut)
	}
	if strings.Contains(out, "walking 20") || strings.Contains(out, "running 20") ||
		!strings.Contains(out, "interrupted 20") || !strings.Contains(out, "its worker is gone since") {
		t.Errorf("status of a run whose worker died:\n%s", out)
	}
}
