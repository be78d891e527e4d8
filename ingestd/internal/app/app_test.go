package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/xuri/excelize/v2"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// cli runs ingestd against one test database and returns exit code and output.
type cli struct {
	t   *testing.T
	url string
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	return &cli{t: t, url: dbtest.NewDatabase(t)}
}

func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	return c.runEnv(nil, args...)
}

func (c *cli) runEnv(extra map[string]string, args ...string) (int, string, string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		switch k {
		case "DATABASE_URL":
			return c.url
		case "INGEST_WORKERS":
			return "2"
		case "STRATA_MODEL_DIR":
			return filepath.Join(testenv.VarDir(c.t), "models", "use-lite")
		case "ONNXRUNTIME_LIB":
			return filepath.Join(testenv.VarDir(c.t), "lib", "libonnxruntime.so.1")
		}
		return ""
	}
	code := Main(context.Background(), args, getenv, &out, &errb)
	return code, out.String(), errb.String()
}

func (c *cli) pool() *pgxpool.Pool {
	c.t.Helper()
	p, err := pgxpool.New(context.Background(), c.url)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(p.Close)
	return p
}

func TestAddHandbookThenNothingChanges(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(testenv.RepoRoot(t), "fixtures", "handbook")
	code, out, errOut := c.run("add", dir, "--layer", "handbook", "--wait")
	if code != 0 {
		t.Fatalf("add exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "4 added, 0 changed, 0 unchanged, 0 deleted, 0 renamed, 0 failed, 0 skipped") {
		t.Errorf("summary does not report 4 added files:\n%s", out)
	}
	var docs, chunks int
	p := c.pool()
	if err := p.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM strata.documents WHERE status = 'ok'),
		(SELECT count(*) FROM strata.chunks)`).Scan(&docs, &chunks); err != nil {
		t.Fatal(err)
	}
	if docs != 4 || chunks < 4 {
		t.Errorf("stored %d documents and %d chunks, want 4 documents and at least 4 chunks", docs, chunks)
	}
	ids := func() []int64 {
		t.Helper()
		rows, err := p.Query(context.Background(), `SELECT id FROM strata.chunks ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	chunkIDs := ids()

	code, out, errOut = c.run("add", dir, "--layer", "handbook", "--wait")
	if code != 0 {
		t.Fatalf("second add exited %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "nothing changed (4 files unchanged)") {
		t.Errorf("second add does not say nothing changed:\n%s", out)
	}
	after := ids()
	if len(after) != len(chunkIDs) || len(after) == 0 || after[0] != chunkIDs[0] || after[len(after)-1] != chunkIDs[len(chunkIDs)-1] {
		t.Errorf("chunks changed on a re-run of an unchanged folder: before %v, after %v", chunkIDs, after)
	}
}

func TestBadFilesAreReportedAndTheRestIngests(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.md", []byte("# Good\n\nThe boiler is serviced every October.\n"))
	write("latin1.md", []byte("Caf\xe9 opening hours\n"))
	write("binary.md", []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 13})
	write("empty.md", nil)
	if err := os.Symlink(filepath.Join(dir, "nowhere.md"), filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop2.md", filepath.Join(dir, "loop1.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1.md", filepath.Join(dir, "loop2.md")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("outside the root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "escape.md")); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root reads any file whatever its mode
		write("locked.md", []byte("no access\n"))
		if err := os.Chmod(filepath.Join(dir, "locked.md"), 0); err != nil {
			t.Fatal(err)
		}
	}

	code, out, errOut := c.run("add", dir, "--layer", "bad", "--wait")
	if code != 1 {
		t.Fatalf("add with bad files exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"failed   latin1.md: invalid UTF-8 at offset 3 (line 1)",
		"failed   binary.md: binary content",
		"warning  empty.md: empty file",
		"skipped  dangling.md: broken symlink",
		"skipped  escape.md: symlink points outside the layer folder",
		"skipped  loop1.md: symlink loop",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if os.Geteuid() != 0 && !strings.Contains(out, "failed   locked.md: cannot open") {
		t.Errorf("summary lacks the unreadable file:\n%s", out)
	}
	var good string
	if err := c.pool().QueryRow(context.Background(), `SELECT d.status FROM strata.documents d WHERE d.path = 'good.md'`).Scan(&good); err != nil || good != "ok" {
		t.Errorf("good.md status %q (%v), want ok", good, err)
	}

	code, out, _ = c.run("status", "--layer", "bad", "--failed")
	if code != 0 || !strings.Contains(out, "latin1.md") || !strings.Contains(out, "escape.md") {
		t.Errorf("status --failed (exit %d) does not list the failed and skipped files:\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", filepath.Join(t.TempDir(), "missing"), "--layer", "x"}, "does not exist"},
		{[]string{"add", t.TempDir()}, "--layer NAME is required"},
		{[]string{"add", t.TempDir(), "--layer", "x", "--chunk-size", "5"}, "--chunk-size must be"},
		{[]string{"frobnicate"}, "unknown verb"},
		{[]string{"ingest", "--layer", "nope"}, `no layer named "nope"`},
	} {
		code, _, errOut := c.run(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("ingestd %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestBadFixtures ingests the project's broken files (fixtures/bad) next to
// links that leave the folder or loop, and a file over the size limit: each
// is reported with its reason and the good files still ingest.
func TestBadFixtures(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(t), "fixtures", "bad")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("A line of a large but valid text file.\n", 40000) // about 1.5 MiB
	if err := os.WriteFile(filepath.Join(dir, "huge.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fine.md"), []byte("# Fine\n\nThis one is good.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "outside.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-b.md", filepath.Join(dir, "loop-a.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-a.md", filepath.Join(dir, "loop-b.md")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.runEnv(map[string]string{"INGEST_MAX_FILE_MB": "1"}, "add", dir, "--layer", "bad", "--wait")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"failed   binary.md: binary content",
		"failed   latin1.txt: invalid UTF-8",
		"failed   truncated.pdf: ",
		"failed   not-a-pdf.pdf: ",
		"failed   huge.txt: file is ",
		"warning  empty.md: empty file",
		"warning  yaml-bomb.md: front matter ignored",
		"warning  malformed-front-matter.md: front matter ignored",
		"skipped  outside.txt: symlink points outside the layer folder",
		"skipped  loop-a.md: symlink loop",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("summary:\n%s", out)
	}
	var bodies int
	if err := c.pool().QueryRow(context.Background(), `SELECT count(*) FROM strata.documents
		WHERE status = 'ok' AND path IN ('fine.md', 'yaml-bomb.md', 'malformed-front-matter.md')`).Scan(&bodies); err != nil || bodies != 3 {
		t.Errorf("%d of the 3 good or recoverable files stored (%v)", bodies, err)
	}
}

// TestVectorsPendingWhileTheModelIsMissing ingests with a model that cannot
// load: documents and chunks are stored, status says the vectors are
// pending, and a later run with the model fills them in without parsing the
// files again.
func TestVectorsPendingWhileTheModelIsMissing(t *testing.T) {
	testenv.Require(t, filepath.Join(testenv.VarDir(t), "models", "use-lite", "model.json"), "the local model (make setup)")
	c := newCLI(t)
	dir := filepath.Join(testenv.RepoRoot(t), "fixtures", "handbook")
	code, out, errOut := c.runEnv(map[string]string{"STRATA_MODEL_DIR": filepath.Join(t.TempDir(), "no-model"), "EMBEDDING_MODEL": "use-lite"},
		"add", dir, "--layer", "handbook", "--wait")
	if code != 0 {
		t.Fatalf("add without a model exited %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "embedding model unavailable") {
		t.Errorf("no warning that the model is unavailable:\n%s", errOut)
	}
	code, out, _ = c.run("status")
	// The model is loaded only when the embed job has chunks for it, after
	// the job has registered it for the layer: status names it as pending.
	if code != 0 || !strings.Contains(out, "use-lite-512@1 11 pending") {
		t.Errorf("status (exit %d) does not say the vectors are pending:\n%s", code, out)
	}
	var chunks int
	if err := c.pool().QueryRow(context.Background(), `SELECT count(*) FROM strata.chunks`).Scan(&chunks); err != nil || chunks == 0 {
		t.Fatalf("no chunks stored without the model (%v)", err)
	}

	code, out, errOut = c.run("ingest", "--layer", "handbook", "--wait")
	if code != 0 {
		t.Fatalf("ingest with the model exited %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "nothing changed") || !strings.Contains(out, "every chunk has a vector of use-lite-512@1") {
		t.Errorf("the second run re-parsed files or did not fill the vectors:\n%s", out)
	}
	code, out, _ = c.run("status")
	if code != 0 || !strings.Contains(out, "use-lite-512@1 0 pending") {
		t.Errorf("status after the model came back:\n%s", out)
	}
}

// TestSkippedFilesAreListed: every file the walk meets and does not ingest is
// named with its reason in the summary, in 'status --failed' and in the
// run's ingest_files rows, and a folder whose files were all skipped fails
// the run instead of reading as "nothing changed".
func TestSkippedFilesAreListed(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("budget.xls", "\xd0\xcf\x11\xe0 old binary workbook")
	write("report.docx", "PK\x03\x04 not read")
	write("Makefile", "all:\n")
	write(".env", "SECRET=1\n")
	write(".git/config", "[core]\n")
	write("drafts/plan.md", "# Plan\n")
	write("notes.md.bak", "# Old\n")

	code, out, errOut := c.run("add", dir, "--layer", "odd", "--exclude", "drafts/**", "--exclude", "*.bak", "--wait")
	if code != 1 {
		t.Errorf("add of a folder with nothing to ingest exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := []string{
		"skipped  budget.xls: format not supported (.xls)",
		"skipped  report.docx: format not supported (.docx)",
		"skipped  Makefile: format not supported (no file extension)",
		"skipped  .env: hidden file",
		"skipped  .git/: hidden folder",
		"skipped  drafts/: folder excluded by --exclude drafts/**",
		"skipped  notes.md.bak: excluded by --exclude *.bak",
		"odd: no document was ingested",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q", w)
		}
	}
	if strings.Contains(out, "nothing changed") {
		t.Errorf("summary reads as nothing changed")
	}
	if t.Failed() {
		t.Logf("summary:\n%s", out)
	}
	var rows int
	if err := c.pool().QueryRow(context.Background(), `SELECT count(*) FROM strata.ingest_files
		WHERE status = 'skipped' AND error <> '' AND run_id = (SELECT max(id) FROM strata.ingest_runs)`).Scan(&rows); err != nil || rows != 7 {
		t.Errorf("ingest_files has %d skipped rows with a reason (%v), want 7", rows, err)
	}
	code, out, _ = c.run("status")
	if code != 0 || !strings.Contains(out, "layer odd has no documents: its last run skipped 7 files") {
		t.Errorf("status (exit %d) does not say the layer's files were all skipped:\n%s", code, out)
	}
	code, out, _ = c.run("status", "--layer", "odd", "--failed")
	if code != 0 || !strings.Contains(out, "skipped odd/budget.xls: format not supported (.xls)") ||
		!strings.Contains(out, "skipped odd/.git/: hidden folder") {
		t.Errorf("status --failed (exit %d) does not list the skipped files:\n%s", code, out)
	}

	// With one readable file the run succeeds and still lists the skips,
	// also when nothing else changed.
	write("readme.md", "# Readme\n\nOne file that can be read.\n")
	code, out, _ = c.run("ingest", "--layer", "odd", "--wait")
	if code != 0 || !strings.Contains(out, "1 added") || !strings.Contains(out, "skipped  budget.xls: format not supported") {
		t.Errorf("ingest with one readable file (exit %d):\n%s", code, out)
	}
	code, out, _ = c.run("ingest", "--layer", "odd", "--wait")
	if code != 0 || strings.Contains(out, "nothing changed") || !strings.Contains(out, "7 skipped") {
		t.Errorf("re-ingest (exit %d) hides its skipped files:\n%s", code, out)
	}
}

// TestTablesIngest: .tsv and .xlsx files, once dropped without a word, are
// read: each row is stored as a line of "header: value" pairs.
func TestTablesIngest(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(t), "fixtures", "tables", "stock.tsv")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stock.tsv"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	wb := excelize.NewFile()
	if err := wb.SetSheetRow("Sheet1", "A1", &[]any{"code", "item"}); err != nil {
		t.Fatal(err)
	}
	if err := wb.SetSheetRow("Sheet1", "A2", &[]any{"ZQRT", "calibration shim set"}); err != nil {
		t.Fatal(err)
	}
	if err := wb.SaveAs(filepath.Join(dir, "tools.xlsx")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("add", dir, "--layer", "tables", "--wait")
	if code != 0 || !strings.Contains(out, "2 added") || strings.Contains(out, "skipped  ") {
		t.Fatalf("add of a TSV and a workbook exited %d:\n%s\n%s", code, out, errOut)
	}
	var text string
	if err := c.pool().QueryRow(context.Background(), `SELECT string_agg(c.text, E'\n' ORDER BY d.path, c.ord)
		FROM strata.chunks c JOIN strata.documents d ON d.id = c.document_id`).Scan(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sku: TT-207 | description: Heat shrink 6 mm", "row 2 | code: ZQRT | item: calibration shim set"} {
		if !strings.Contains(text, want) {
			t.Errorf("stored chunks lack %q:\n%s", want, text)
		}
	}
}

// TestManySkippedFilesAreCounted: past the first 50, skipped files are
// counted in the summary, not listed one by one; status lists them all.
func TestManySkippedFilesAreCounted(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	for i := 0; i < 60; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("scan-%02d.raw", i)), []byte("raw"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nText.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := c.run("add", dir, "--layer", "many", "--wait")
	if code != 0 || strings.Count(out, "format not supported (.raw)") != 50 ||
		!strings.Contains(out, "… and 10 more ('ingestd status --layer many --failed' lists them all)") {
		t.Errorf("summary (exit %d):\n%s", code, out)
	}
	_, out, _ = c.run("status", "--layer", "many", "--failed")
	if strings.Count(out, "format not supported (.raw)") != 60 {
		t.Errorf("status --failed does not list all 60 skipped files:\n%s", out)
	}
}

// TestStoredFileThatIsSkippedNow: a file ingested before that the walk now
// skips (excluded by a new glob, replaced by a link that leaves the folder)
// loses its document, and the run says why, in one row per path.
func TestStoredFileThatIsSkippedNow(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\nSome text.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := c.run("add", dir, "--layer", "s", "--wait"); code != 0 {
		t.Fatalf("first add exited %d\n%s\n%s", code, out, errOut)
	}
	outside := filepath.Join(t.TempDir(), "c.md")
	if err := os.WriteFile(outside, []byte("# Outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("add", dir, "--layer", "s", "--exclude", "b.md", "--wait")
	if code != 0 {
		t.Fatalf("second add exited %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"2 deleted", "skipped  b.md: excluded by --exclude b.md",
		"skipped  c.md: symlink points outside the layer folder"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	var docs int
	if err := c.pool().QueryRow(context.Background(), `SELECT count(*) FROM strata.documents`).Scan(&docs); err != nil || docs != 1 {
		t.Errorf("%d documents left (%v), want a.md only", docs, err)
	}
}

// TestUnchangedAddDoesNotLoadTheModel: a re-ingest that finds nothing to
// embed never loads the model, so pointing STRATA_MODEL_DIR at a missing
// folder gives no warning and the run still reports every vector present.
func TestUnchangedAddDoesNotLoadTheModel(t *testing.T) {
	testenv.Require(t, filepath.Join(testenv.VarDir(t), "models", "use-lite", "model.json"), "the local model (make setup)")
	c := newCLI(t)
	dir := filepath.Join(testenv.RepoRoot(t), "fixtures", "handbook")
	if code, out, errOut := c.run("add", dir, "--layer", "handbook", "--wait"); code != 0 {
		t.Fatalf("first add exited %d\n%s\n%s", code, out, errOut)
	}
	missing := map[string]string{"STRATA_MODEL_DIR": filepath.Join(t.TempDir(), "no-model"), "EMBEDDING_MODEL": "use-lite"}
	code, out, errOut := c.runEnv(missing, "add", dir, "--layer", "handbook", "--wait")
	if code != 0 {
		t.Fatalf("second add exited %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "embedding model unavailable") || strings.Contains(errOut, "no-model") {
		t.Errorf("an unchanged folder tried to load the model:\n%s", errOut)
	}
	if !strings.Contains(out, "nothing changed") || !strings.Contains(out, "every chunk has a vector of use-lite-512@1") {
		t.Errorf("second add:\n%s", out)
	}
	// A change that needs a vector does load it, and says it cannot.
	changed := t.TempDir()
	if err := os.WriteFile(filepath.Join(changed, "note.md"), []byte("# Note\n\nA new paragraph to embed.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = c.runEnv(missing, "add", changed, "--layer", "notes", "--wait")
	if code != 0 {
		t.Fatalf("add of a new folder exited %d\n%s\n%s", code, out, errOut)
	}
	if strings.Count(errOut, "embedding model unavailable") != 1 || !strings.Contains(errOut, "no-model") {
		t.Errorf("want one warning naming the missing model folder:\n%s", errOut)
	}
}

// TestManyWorkersFinish: with more workers than pgxpool's default of 4
// connections on 2 CPUs, the per-document embed jobs (each holding a
// connection while it waits for its layer's lock) used to take every
// connection and the run never finished.
func TestManyWorkersFinish(t *testing.T) {
	testenv.Require(t, filepath.Join(testenv.VarDir(t), "models", "use-lite", "model.json"), "the local model (make setup)")
	c := newCLI(t)
	dir := filepath.Join(testenv.RepoRoot(t), "fixtures", "handbook")
	getenv := func(k string) string {
		switch k {
		case "DATABASE_URL":
			return c.url
		case "INGEST_WORKERS":
			return "8"
		case "STRATA_MODEL_DIR":
			return filepath.Join(testenv.VarDir(t), "models", "use-lite")
		case "ONNXRUNTIME_LIB":
			return filepath.Join(testenv.VarDir(t), "lib", "libonnxruntime.so.1")
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := Main(ctx, []string{"add", dir, "--layer", "handbook", "--wait"}, getenv, &out, &errb)
	if ctx.Err() != nil || code != 0 || !strings.Contains(out.String(), "every chunk has a vector") {
		t.Fatalf("add with 8 workers: exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, ctx.Err(), out.String(), errb.String())
	}
}

func TestPoolHasRoomForTheWorkers(t *testing.T) {
	cfg, err := poolConfig("postgres://u@localhost/db", 8)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns < 2*8+4 {
		t.Errorf("pool of %d connections for 8 workers", cfg.MaxConns)
	}
	cfg, err = poolConfig("postgres://u@localhost/db?pool_max_conns=3", 8)
	if err != nil || cfg.MaxConns != 3 {
		t.Errorf("pool_max_conns=3 in the URL gave %d connections (%v)", cfg.MaxConns, err)
	}
}

// TestLayerKeepsItsModelAndReembeds: a layer added with one model keeps it
// when the configured model changes (a re-add embeds nothing new), and
// `reembed --model` moves it to another, whose vectors are then complete
// beside the old ones.
func TestLayerKeepsItsModelAndReembeds(t *testing.T) {
	v := testenv.VarDir(t)
	testenv.Require(t, filepath.Join(v, "models", "use-lite", "model.json"), "the local model use-lite (make setup)")
	testenv.Require(t, filepath.Join(v, "models", embed.DefaultLocalModel, "model.onnx"), "the default local model (make setup)")
	c := newCLI(t)
	dir := filepath.Join(testenv.RepoRoot(t), "fixtures", "handbook")
	if code, out, errOut := c.run("add", dir, "--layer", "handbook", "--wait"); code != 0 {
		t.Fatalf("add exited %d\n%s\n%s", code, out, errOut)
	}
	newDefault := map[string]string{"STRATA_MODEL_DIR": filepath.Join(v, "models", embed.DefaultLocalModel)}
	code, out, errOut := c.runEnv(newDefault, "add", dir, "--layer", "handbook", "--wait")
	if code != 0 || !strings.Contains(out, "every chunk has a vector of use-lite-512@1") {
		t.Fatalf("re-add after the default changed (exit %d) should keep use-lite:\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = c.runEnv(newDefault, "reembed", "--layer", "handbook", "--model", embed.DefaultLocalModel, "--wait")
	want := embed.DefaultLocalModel + "@1"
	if code != 0 || !strings.Contains(out, "queries use the vectors of use-lite-512@1 until every chunk has one of "+want) ||
		!strings.Contains(out, "every chunk has a vector of "+want) {
		t.Fatalf("reembed (exit %d):\n%s\n%s", code, out, errOut)
	}
	rows, err := c.pool().Query(context.Background(), `SELECT model FROM strata.layer_models WHERE complete ORDER BY model`)
	if err != nil {
		t.Fatal(err)
	}
	models, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(models, " ") != want+" use-lite-512@1" {
		t.Errorf("complete models %v (%v), want both side by side", models, err)
	}
	if code, _, errOut := c.run("reembed", "--layer", "handbook", "--model", "bge-large"); code != exitUsage || !strings.Contains(errOut, "unknown embedding model") {
		t.Errorf("reembed with an unknown model: exit %d, %s", code, errOut)
	}
}
