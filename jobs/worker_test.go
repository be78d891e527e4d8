package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
)

// fileJob sets up a layer, a run and a queued file, and returns the job that
// ingest_file would receive.
func fileJob(t *testing.T, pipeline Pipeline, dir, rel string) (*IngestFileWorker, *river.Job[IngestFileArgs]) {
	t.Helper()
	pool, _ := dbtest.NewPool(t)
	ctx := context.Background()
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	l, err := UpsertLayer(ctx, pool, Layer{Name: "w", Root: dir, AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	if err := pool.QueryRow(ctx, `INSERT INTO strata.ingest_runs (layer_id, status) VALUES ($1, 'running') RETURNING id`, l.ID).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO strata.ingest_files (run_id, path, action, status) VALUES ($1, $2, 'new', 'queued')`, runID, rel); err != nil {
		t.Fatal(err)
	}
	w := &IngestFileWorker{pool: pool, pipeline: pipeline}
	job := &river.Job[IngestFileArgs]{
		JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 5},
		Args:   IngestFileArgs{LayerID: l.ID, RunID: runID, Path: rel},
	}
	return w, job
}

func fileOutcome(t *testing.T, w *IngestFileWorker, runID int64, rel string) (status, errText, runStatus string) {
	t.Helper()
	err := w.pool.QueryRow(context.Background(), `SELECT f.status, coalesce(f.error, ''), r.status
		FROM strata.ingest_files f JOIN strata.ingest_runs r ON r.id = f.run_id
		WHERE f.run_id = $1 AND f.path = $2`, runID, rel).Scan(&status, &errText, &runStatus)
	if err != nil {
		t.Fatal(err)
	}
	return status, errText, runStatus
}

func TestParserPanicFailsOnlyThatFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "boom.md"), []byte("# Boom\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := StandardPipeline(parsers.Options{NoOCR: true})
	p.Parse = func(context.Context, string, []byte, time.Time) (*schema.ParsedDoc, error) {
		panic("index out of range in a PDF library")
	}
	w, job := fileJob(t, p, dir, "boom.md")
	err := w.Work(context.Background(), job)
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("Work returned %v, want a cancelled job", err)
	}
	status, msg, run := fileOutcome(t, w, job.Args.RunID, "boom.md")
	if status != "failed" || msg != "the parser crashed on this file: index out of range in a PDF library" || run != "done" {
		t.Errorf("file %s (%q), run %s; want failed with the panic, run done", status, msg, run)
	}
}

func TestFileDeletedBetweenWalkAndParse(t *testing.T) {
	dir := t.TempDir()
	w, job := fileJob(t, StandardPipeline(parsers.Options{NoOCR: true}), dir, "vanished.md")
	err := w.Work(context.Background(), job)
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("Work returned %v, want a cancelled job", err)
	}
	status, msg, run := fileOutcome(t, w, job.Args.RunID, "vanished.md")
	if status != "skipped" || msg != "file disappeared before it was read" || run != "done" {
		t.Errorf("file %s (%q), run %s; want skipped, disappeared, run done", status, msg, run)
	}
}

func TestTransientFailureIsRetriedThenRecorded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flaky.md"), []byte("# Flaky\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := StandardPipeline(parsers.Options{NoOCR: true})
	p.Parse = func(context.Context, string, []byte, time.Time) (*schema.ParsedDoc, error) {
		return nil, errors.New("tesseract is restarting")
	}
	w, job := fileJob(t, p, dir, "flaky.md")
	if err := w.Work(context.Background(), job); err == nil || errors.As(err, new(*rivertype.JobCancelError)) {
		t.Fatalf("first attempt returned %v, want a plain error for River to retry", err)
	}
	if status, _, _ := fileOutcome(t, w, job.Args.RunID, "flaky.md"); status != "queued" {
		t.Fatalf("after a retryable failure the file is %s, want still queued", status)
	}
	job.Attempt = job.MaxAttempts
	if err := w.Work(context.Background(), job); !errors.As(err, new(*rivertype.JobCancelError)) {
		t.Fatalf("last attempt returned %v, want the job ended", err)
	}
	if status, msg, _ := fileOutcome(t, w, job.Args.RunID, "flaky.md"); status != "failed" || msg != "tesseract is restarting" {
		t.Errorf("after the last attempt: %s (%q), want failed with the cause", status, msg)
	}
}
