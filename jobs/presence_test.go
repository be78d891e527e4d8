package jobs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/parsers"
)

func migratedPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, _ := dbtest.NewPool(t)
	if err := Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// claim makes a job look fetched by the worker, as River's producer leaves
// it: running, its attempt counted, the client in attempted_by.
func claim(t *testing.T, pool *pgxpool.Pool, jobID int64, clientID string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `UPDATE river.river_job SET state = 'running', attempt = attempt + 1,
		attempted_at = now(), attempted_by = array_append(attempted_by, $2) WHERE id = $1`, jobID, clientID); err != nil {
		t.Fatal(err)
	}
}

func jobState(t *testing.T, pool *pgxpool.Pool, jobID int64) (state, takenFrom string) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `SELECT state::text, coalesce(metadata->>'`+metaTakenFrom+`', '')
		FROM river.river_job WHERE id = $1`, jobID).Scan(&state, &takenFrom); err != nil {
		t.Fatal(err)
	}
	return state, takenFrom
}

// TestKilledWorkerIsSeenGoneAndItsJobsTakenOver plays a kill -9: a worker
// registers, its walk job is running, and its lock connection drops without
// a word. Its run must read as interrupted at once (not "running" until
// River's rescue an hour later), and the next worker to start must make the
// job available again.
func TestKilledWorkerIsSeenGoneAndItsJobsTakenOver(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := UpsertLayer(ctx, pool, Layer{Name: "k", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	dead, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	runID, err := StartIngestWith(ctx, pool, client, l.ID, RunOptions{WorkerID: dead.ClientID})
	if err != nil {
		t.Fatal(err)
	}
	var jobID int64
	if err := pool.QueryRow(ctx, `SELECT id FROM river.river_job WHERE kind = 'ingest_layer'`).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	claim(t, pool, jobID, dead.ClientID)

	lv, err := Liveness(ctx, pool, runID)
	if err != nil {
		t.Fatal(err)
	}
	if state, _ := lv.Describe("walking"); state != "walking" || lv.Running != 1 {
		t.Fatalf("with its worker alive the run reads %q (%+v), want walking", state, lv)
	}
	if got, _ := TakeOverOrphans(ctx, pool, nil); len(got) != 0 {
		t.Fatalf("took over %v from a live worker", got)
	}

	if err := dead.abandon(); err != nil { // the process is killed: its connection and lock go
		t.Fatal(err)
	}
	lv, err = Liveness(ctx, pool, runID)
	if err != nil {
		t.Fatal(err)
	}
	state, detail := lv.Describe("walking")
	if state != "interrupted" || !strings.Contains(detail, "worker is gone since") || lv.Orphaned != 1 {
		t.Fatalf("after the kill the run reads %q %q (%+v), want interrupted, worker gone", state, detail, lv)
	}
	if n, err := ActiveEmbedJobs(ctx, client, pool, l.ID); err != nil || n != 0 {
		t.Fatalf("active embed jobs %d (%v)", n, err)
	}

	next, err := Register(ctx, pool, nil) // a rerun or ingestd serve starts
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(ctx)
	st, from := jobState(t, pool, jobID)
	if st != "available" || from != dead.ClientID {
		t.Fatalf("after a new worker registered the job is %s (taken from %q), want available, taken from %s", st, from, dead.ClientID)
	}
	lv, err = Liveness(ctx, pool, runID)
	if err != nil {
		t.Fatal(err)
	}
	if state, _ := lv.Describe("walking"); state != "queued" || lv.Waiting != 1 {
		t.Errorf("after the takeover the run reads %q (%+v), want queued for the live worker", state, lv)
	}
	a, err := Ahead(ctx, pool, runID)
	if err != nil || a.WalkState != "available" {
		t.Errorf("queue ahead of the walk: %+v (%v)", a, err)
	}
}

// TestFileThatKillsTheWorkerEveryTimeEndsFailed: a job taken over on its
// last attempt is discarded, and its file is recorded as failed so the run
// ends instead of waiting forever.
func TestFileThatKillsTheWorkerEveryTimeEndsFailed(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "poison.md"), []byte("# Poison\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := NewClient(pool, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := UpsertLayer(ctx, pool, Layer{Name: "p", Root: dir, AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	if err := pool.QueryRow(ctx, `INSERT INTO strata.ingest_runs (layer_id, status) VALUES ($1, 'running') RETURNING id`, l.ID).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO strata.ingest_files (run_id, path, action, status) VALUES ($1, 'poison.md', 'new', 'queued')`, runID); err != nil {
		t.Fatal(err)
	}
	res, err := client.Insert(ctx, IngestFileArgs{LayerID: l.ID, RunID: runID, Path: "poison.md"}, &river.InsertOpts{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	dead, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	claim(t, pool, res.Job.ID, dead.ClientID)
	if err := dead.abandon(); err != nil {
		t.Fatal(err)
	}
	got, err := TakeOverOrphans(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].State != "discarded" {
		t.Fatalf("took over %+v, want the job discarded", got)
	}
	var fileStatus, fileErr, runStatus, docStatus string
	if err := pool.QueryRow(ctx, `SELECT f.status, coalesce(f.error, ''), r.status,
		(SELECT status FROM strata.documents WHERE layer_id = $2 AND path = 'poison.md')
		FROM strata.ingest_files f JOIN strata.ingest_runs r ON r.id = f.run_id WHERE f.run_id = $1`, runID, l.ID).Scan(
		&fileStatus, &fileErr, &runStatus, &docStatus); err != nil {
		t.Fatal(err)
	}
	if fileStatus != "failed" || !strings.Contains(fileErr, "worker stopped") || runStatus != "done" || docStatus != "failed" {
		t.Errorf("file %s (%q), document %s, run %s; want the file failed with why, the run done", fileStatus, fileErr, docStatus, runStatus)
	}
}

// TestRescueAfterExceedsEveryTimeout: River rescues a job that has run
// longer than RescueStuckJobsAfter, so a job still within its timeout must
// never reach it.
func TestRescueAfterExceedsEveryTimeout(t *testing.T) {
	timeouts := map[string]time.Duration{
		"ingest_layer": (&IngestLayerWorker{}).Timeout(nil),
		"ingest_file":  (&IngestFileWorker{}).Timeout(nil),
		"embed_chunks": (&EmbedWorker{}).Timeout(nil),
		"reingest_all": (&ReingestAllWorker{}).Timeout(nil),
	}
	for kind, d := range timeouts {
		if d <= 0 {
			d = river.JobTimeoutDefault
		}
		if d >= RescueStuckJobsAfter {
			t.Errorf("%s times out after %s, not before RescueStuckJobsAfter (%s)", kind, d, RescueStuckJobsAfter)
		}
	}
	if embedBudget >= embedTimeout {
		t.Errorf("embed budget %s leaves no time within the timeout %s", embedBudget, embedTimeout)
	}
}

func TestDeletesRefused(t *testing.T) {
	for _, c := range []struct {
		gone, stored, walked int
		refused              bool
	}{
		{0, 10, 10, false},
		{4, 4, 0, true},  // emptied folder
		{1, 1, 0, true},  // emptied folder, even a small layer
		{3, 4, 1, false}, // a handful
		{4, 7, 3, true},  // more than half and more than a handful
		{4, 8, 4, false}, // half exactly
		{5, 100, 95, false},
	} {
		if got := deletesRefused(c.gone, c.stored, c.walked); got != c.refused {
			t.Errorf("deletesRefused(gone %d, stored %d, walked %d) = %v, want %v", c.gone, c.stored, c.walked, got, c.refused)
		}
	}
}

// workCtx is a job's context with an insert-only client in it, as River
// gives a worker.
func workCtx(t *testing.T, pool *pgxpool.Pool) context.Context {
	t.Helper()
	client, err := NewClient(pool, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return rivertest.WorkContext(context.Background(), client)
}

// scheduleRun runs the reingest_all worker once, as River's periodic job
// would, and returns what it logged.
func scheduleRun(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var logs bytes.Buffer
	w := &ReingestAllWorker{pool: pool, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := w.Work(workCtx(t, pool), &river.Job[ReingestAllArgs]{JobRow: &rivertype.JobRow{}}); err != nil {
		t.Fatalf("reingest_all: %v", err)
	}
	return logs.String()
}

// TestScheduleLeavesUnreachableAndPushedLayersAlone: on the scheduling host
// a layer whose folder is not there (a CI runner's path) gets a failed run
// that says so and one log line, and keeps its documents; a layer marked
// pushed is not tried at all; a reachable layer is walked.
func TestScheduleLeavesUnreachableAndPushedLayersAlone(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	elsewhere := filepath.Join(t.TempDir(), "builds", "runner-7", "docs")
	ci, err := UpsertLayer(ctx, pool, Layer{Name: "ci", Root: elsewhere, AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a.md", "b.md", "c.md", "d.md", "e.md"} {
		if _, err := pool.Exec(ctx, `INSERT INTO strata.documents (layer_id, path, status, body) VALUES ($1, $2, 'ok', 'x')`, ci.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	pushed, err := UpsertLayer(ctx, pool, Layer{Name: "pushed", Root: elsewhere, AnswerMode: "grounded", ChunkSize: 800, Pushed: true})
	if err != nil {
		t.Fatal(err)
	}
	here, err := UpsertLayer(ctx, pool, Layer{Name: "here", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}

	logs := scheduleRun(t, pool)

	runs := func(layerID int64) (n int, status, errText string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*), coalesce(max(status), ''), coalesce(max(error), '')
			FROM strata.ingest_runs WHERE layer_id = $1`, layerID).Scan(&n, &status, &errText); err != nil {
			t.Fatal(err)
		}
		return n, status, errText
	}
	if n, st, msg := runs(ci.ID); n != 1 || st != "failed" || !strings.Contains(msg, "not reachable from host") || !strings.Contains(msg, "--pushed") {
		t.Errorf("unreachable layer: %d runs, %s, %q; want one failed run saying the folder is not reachable", n, st, msg)
	}
	if c := strings.Count(logs, "not reachable"); c != 1 || !strings.Contains(logs, "layer=ci") {
		t.Errorf("want one log line naming layer ci, got %d:\n%s", c, logs)
	}
	var docs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.documents WHERE layer_id = $1`, ci.ID).Scan(&docs); err != nil || docs != 5 {
		t.Errorf("the unreachable layer keeps %d of its 5 documents (%v)", docs, err)
	}
	if n, _, _ := runs(pushed.ID); n != 0 {
		t.Errorf("the pushed layer got %d runs, want none", n)
	}
	if n, st, _ := runs(here.ID); n != 1 || st != "walking" {
		t.Errorf("the reachable layer: %d runs (%s), want one walking", n, st)
	}
	var walks int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'ingest_layer'`).Scan(&walks); err != nil || walks != 1 {
		t.Errorf("%d walks queued (%v), want 1 (the reachable layer's)", walks, err)
	}
}

// TestWalkOfAnEmptiedFolderDeletesNothing runs the walk job of a layer whose
// folder was emptied: it fails the run with the reason and keeps every
// document, unless the run allows deletes.
func TestWalkOfAnEmptiedFolderDeletesNothing(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	dir := t.TempDir()
	l, err := UpsertLayer(ctx, pool, Layer{Name: "share", Root: dir, AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a.md", "b.md", "c.md", "d.md"} {
		if _, err := pool.Exec(ctx, `INSERT INTO strata.documents (layer_id, path, status, body) VALUES ($1, $2, 'ok', 'x')`, l.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	w := &IngestLayerWorker{pool: pool, pipeline: StandardPipeline(parsers.Options{NoOCR: true})}
	wctx := workCtx(t, pool)
	walk := func(allow bool) (status, errText string, docs int, werr error) {
		t.Helper()
		var runID int64
		if err := pool.QueryRow(ctx, `INSERT INTO strata.ingest_runs (layer_id, allow_deletes) VALUES ($1, $2) RETURNING id`,
			l.ID, allow).Scan(&runID); err != nil {
			t.Fatal(err)
		}
		werr = w.Work(wctx, &river.Job[IngestLayerArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 3},
			Args: IngestLayerArgs{LayerID: l.ID, RunID: runID}})
		if err := pool.QueryRow(ctx, `SELECT status, coalesce(error, ''), (SELECT count(*) FROM strata.documents WHERE layer_id = $2)
			FROM strata.ingest_runs WHERE id = $1`, runID, l.ID).Scan(&status, &errText, &docs); err != nil {
			t.Fatal(err)
		}
		return status, errText, docs, werr
	}
	status, msg, docs, err := walk(false)
	if status != "failed" || !strings.Contains(msg, "refused to delete 4 of 4 documents") || docs != 4 {
		t.Errorf("emptied folder: run %s (%q), %d documents left; want failed, refused, all 4 kept", status, msg, docs)
	}
	if !errors.As(err, new(*rivertype.JobCancelError)) || !errors.Is(err, ErrDeletesRefused) {
		t.Errorf("refused walk returned %v, want the job cancelled (no retry) with ErrDeletesRefused", err)
	}
	status, msg, docs, err = walk(true)
	if status != "done" || docs != 0 || err != nil {
		t.Errorf("with deletes allowed: run %s (%q, %v), %d documents left; want done, none left", status, msg, err, docs)
	}
}

// TestBrokenLockConnectionIsTakenAgain: a worker whose lock connection
// broke (the database restarted) takes its lock again on its next heartbeat,
// and does not sweep for a while, since the others are reconnecting too.
func TestBrokenLockConnectionIsTakenAgain(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	p, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	alive := func() bool {
		t.Helper()
		var a bool
		if err := pool.QueryRow(ctx, `SELECT alive FROM strata.ingest_worker_state WHERE id = $1`, p.id).Scan(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if !alive() {
		t.Fatal("a registered worker is not alive")
	}
	p.mu.Lock()
	pid := p.conn.PgConn().PID()
	p.mu.Unlock()
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, int(pid)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive() {
		t.Fatal("the worker still reads alive after its lock connection was terminated")
	}
	if err := p.beat(ctx); err != nil {
		t.Fatalf("heartbeat after the connection broke: %v", err)
	}
	if !alive() {
		t.Error("after its next heartbeat the worker does not hold its lock again")
	}
	p.mu.Lock()
	quiet := time.Since(p.reconnected) < reconnectQuiet
	p.mu.Unlock()
	if !quiet {
		t.Error("a worker that just took its lock again would sweep at once")
	}
}

// TestAheadCountsLeftoverWork: a new run's walk queued behind jobs a killed
// process left is told how many there are and that they were taken over.
// An embedding job, in the embed queue, is not ahead of it.
func TestAheadCountsLeftoverWork(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := UpsertLayer(ctx, pool, Layer{Name: "a", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	dead, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	// Walks of earlier runs: they go ahead of the new walk (embedding
	// jobs, in their own queue, do not).
	for d := int64(1); d <= 3; d++ {
		res, err := client.Insert(ctx, IngestLayerArgs{LayerID: l.ID, RunID: 1000 + d}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	claim(t, pool, ids[0], dead.ClientID)
	if err := dead.abandon(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Insert(ctx, EmbedArgs{LayerID: l.ID, DocumentID: 1, Model: "m"}, nil); err != nil {
		t.Fatal(err)
	}
	runID, err := StartIngest(ctx, pool, client, l.ID, "cli")
	if err != nil {
		t.Fatal(err)
	}
	next, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(ctx)
	a, err := Ahead(ctx, pool, runID)
	if err != nil {
		t.Fatal(err)
	}
	if a.WalkState != "available" || a.Ahead != 3 || a.Running != 0 || a.TakenOver != 1 || a.GoneSince.IsZero() {
		t.Errorf("queue ahead of the walk: %+v; want 3 jobs ahead, 1 taken over from the dead worker", a)
	}
}

// TestScheduleWaitsOnlyForRunsThatAreGoing: a layer whose last run still has
// jobs to run is left alone; one whose last run was left "running" with no
// job at all (it can never finish) gets a new run instead of waiting a day.
func TestScheduleWaitsOnlyForRunsThatAreGoing(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	going, err := UpsertLayer(ctx, pool, Layer{Name: "going", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartIngest(ctx, pool, client, going.ID, "cli"); err != nil { // its walk waits for a worker
		t.Fatal(err)
	}
	stalled, err := UpsertLayer(ctx, pool, Layer{Name: "stalled", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO strata.ingest_runs (layer_id, status) VALUES ($1, 'running')`, stalled.ID); err != nil {
		t.Fatal(err)
	}
	scheduleRun(t, pool)
	count := func(id int64) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.ingest_runs WHERE layer_id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(going.ID); n != 1 {
		t.Errorf("the layer with a run going has %d runs, want its 1", n)
	}
	if n := count(stalled.ID); n != 2 {
		t.Errorf("the layer with a stalled run has %d runs, want a new one beside it", n)
	}
}
