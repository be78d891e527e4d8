package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/jobs"
)

// noModel keeps the embedding model out of tests that are about files.
func noModel(t *testing.T) map[string]string {
	return map[string]string{"STRATA_MODEL_DIR": filepath.Join(t.TempDir(), "no-model")}
}

func writeDocs(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("# Note %d\n\nThe archive keeps note %d for ten years.\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (c *cli) documents() int {
	c.t.Helper()
	var n int
	if err := c.pool().QueryRow(context.Background(), `SELECT count(*) FROM strata.documents`).Scan(&n); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// TestEmptiedFolderIsRefusedUnlessAllowed: re-ingesting a folder that was
// emptied (an unmounted share) stops before deleting anything, exits
// non-zero and says why, in the summary and in status; --allow-deletes
// deletes.
func TestEmptiedFolderIsRefusedUnlessAllowed(t *testing.T) {
	c := newCLI(t)
	env := noModel(t)
	dir := t.TempDir()
	writeDocs(t, dir, 4)
	if code, out, errOut := c.runEnv(env, "add", dir, "--layer", "share", "--wait"); code != 0 {
		t.Fatalf("add exited %d\n%s\n%s", code, out, errOut)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}

	code, out, errOut := c.runEnv(env, "ingest", "--layer", "share", "--wait")
	if code == 0 || !strings.Contains(out, "refused to delete 4 of 4 documents of layer share") {
		t.Errorf("re-ingest of the emptied folder exited %d:\n%s\n%s", code, out, errOut)
	}
	if n := c.documents(); n != 4 {
		t.Errorf("the refused run left %d of 4 documents", n)
	}
	code, out, _ = c.run("status")
	if code != 0 || !strings.Contains(out, "failed 20") || !strings.Contains(out, "refused to delete 4 of 4") {
		t.Errorf("status does not show why the run stopped:\n%s", out)
	}

	// add (the nightly job's usual command) is refused the same way.
	if code, out, _ := c.runEnv(env, "add", dir, "--layer", "share", "--wait"); code == 0 || !strings.Contains(out, "refused to delete") {
		t.Errorf("add of the emptied folder exited %d:\n%s", code, out)
	}

	code, out, errOut = c.runEnv(env, "ingest", "--layer", "share", "--wait", "--allow-deletes")
	if code != 0 || !strings.Contains(out, "4 deleted") {
		t.Errorf("ingest --allow-deletes exited %d:\n%s\n%s", code, out, errOut)
	}
	if n := c.documents(); n != 0 {
		t.Errorf("after --allow-deletes %d documents are left, want 0", n)
	}
}

// TestDeletingAFewFilesNeedsNoFlag: the guard leaves ordinary deletions
// alone: removing a handful of files from a larger folder just deletes them.
func TestDeletingAFewFilesNeedsNoFlag(t *testing.T) {
	c := newCLI(t)
	env := noModel(t)
	dir := t.TempDir()
	writeDocs(t, dir, 10)
	if code, out, errOut := c.runEnv(env, "add", dir, "--layer", "notes", "--wait"); code != 0 {
		t.Fatalf("add exited %d\n%s\n%s", code, out, errOut)
	}
	for i := 0; i < 4; i++ {
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf("note-%d.md", i))); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := c.runEnv(env, "add", dir, "--layer", "notes", "--wait")
	if code != 0 || !strings.Contains(out, "4 deleted") || c.documents() != 6 {
		t.Errorf("deleting 4 of 10 files: exit %d, %d documents left\n%s\n%s", code, c.documents(), out, errOut)
	}
}

// TestPushedAndScheduleDeletesAreStoredOnTheLayer: the flags of add that
// the schedule reads are kept on the layer until changed.
func TestPushedAndScheduleDeletesAreStoredOnTheLayer(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeDocs(t, dir, 1)
	if code, _, errOut := c.run("add", dir, "--layer", "ci", "--pushed", "--schedule-allow-deletes"); code != 0 {
		t.Fatalf("add exited %d: %s", code, errOut)
	}
	read := func() (pushed, deletes bool) {
		t.Helper()
		if err := c.pool().QueryRow(context.Background(), `SELECT pushed, schedule_allow_deletes FROM strata.layers
			WHERE name = 'ci'`).Scan(&pushed, &deletes); err != nil {
			t.Fatal(err)
		}
		return
	}
	if p, d := read(); !p || !d {
		t.Errorf("after add --pushed --schedule-allow-deletes: pushed %v, schedule_allow_deletes %v", p, d)
	}
	if code, _, _ := c.run("add", dir, "--layer", "ci"); code != 0 {
		t.Fatal("second add failed")
	}
	if p, d := read(); !p || !d {
		t.Errorf("an add without the flags changed them: pushed %v, schedule_allow_deletes %v", p, d)
	}
	if code, out, _ := c.run("status"); code != 0 || !strings.Contains(out, "pushed: the schedule skips it") {
		t.Errorf("status does not say the layer is pushed:\n%s", out)
	}
	if code, out, errOut := c.runEnv(noModel(t), "ingest", "--wait"); code != 0 || !strings.Contains(out, "layer ci: pushed from elsewhere, skipped") {
		t.Errorf("ingest of every layer (exit %d) did not skip the pushed one:\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := c.run("add", dir, "--layer", "ci", "--pushed=false"); code != 0 {
		t.Fatal("third add failed")
	}
	if p, _ := read(); p {
		t.Errorf("--pushed=false did not clear the mark")
	}
}

func TestRoutePatternsAreCheckedAtAdd(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	code, _, errOut := c.run("add", dir, "--layer", "r", "--route", "/[unclosed/")
	if code != 2 || !strings.Contains(errOut, `--route: routing pattern "/[unclosed/" is not a valid regular expression`) {
		t.Errorf("add --route '/[unclosed/': exit %d, stderr %q", code, errOut)
	}
	var layers int
	if err := c.pool().QueryRow(context.Background(), `SELECT count(*) FROM strata.layers`).Scan(&layers); err == nil && layers != 0 {
		t.Errorf("the refused add created a layer")
	}
	if code, _, errOut := c.run("add", dir, "--layer", "r", "--route", `/\bpacs\.\d+/`, "--route", "credit transfer"); code != 0 {
		t.Errorf("valid routes refused: exit %d, %s", code, errOut)
	}
}

func TestChunkSizeHelpSaysBytes(t *testing.T) {
	c := newCLI(t)
	_, _, errOut := c.run("add", "-h")
	if !strings.Contains(errOut, "chunk size in bytes") || strings.Contains(errOut, "characters") {
		t.Errorf("add -h on --chunk-size:\n%s", errOut)
	}
}

// TestWaitingScanSaysWhatItWaitsFor: while a run's walk waits behind other
// jobs, the progress line says so (and that a dead worker left them)
// instead of "scanning folder".
func TestWaitingScanSaysWhatItWaitsFor(t *testing.T) {
	since := time.Date(2026, 12, 1, 20, 31, 5, 0, time.UTC)
	got := aheadLine(jobs.QueueAhead{WalkState: "available", Running: 2, Ahead: 10, TakenOver: 12, GoneSince: since})
	want := "waiting to scan the folder behind 12 jobs (2 running, 10 queued ahead); 12 of them were left by a worker gone since 20:31:05 UTC and are being taken over"
	if got != want {
		t.Errorf("aheadLine = %q\nwant       %q", got, want)
	}
	if got := aheadLine(jobs.QueueAhead{WalkState: "running", Running: 2}); got != "" {
		t.Errorf("a running walk waits for nothing, got %q", got)
	}
}
