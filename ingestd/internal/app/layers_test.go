package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// runIn runs ingestd like c.runEnv, answering its questions from stdin.
func (c *cli) runIn(stdin string, extra map[string]string, args ...string) (int, string, string) {
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
		}
		return ""
	}
	code := exitCode(RunIO(context.Background(), args, getenv, strings.NewReader(stdin), &out, &errb), &errb)
	return code, out.String(), errb.String()
}

// TestLayersSetAndRemove: ops see a layer's settings with `ingestd layers`,
// change them with `ingestd set`, and delete the layer with `ingestd remove`
// (asked, or --yes): its documents, chunks, vectors and ingest records go,
// what queryd recorded stays.
func TestLayersSetAndRemove(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	dir := filepath.Join(testenv.RepoRoot(t), "fixtures", "handbook")
	if code, out, errOut := c.run("add", dir, "--layer", "handbook", "--description", "the staff handbook",
		"--route", "leave", "--preset", "contracts", "--wait"); code != 0 {
		t.Fatalf("add exited %d\n%s\n%s", code, out, errOut)
	}
	other := t.TempDir()
	writeDocs(t, other, 2)
	if code, out, errOut := c.run("add", other, "--layer", "notes", "--wait"); code != 0 {
		t.Fatalf("add notes exited %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut := c.run("layers")
	if code != 0 {
		t.Fatalf("layers exited %d: %s", code, errOut)
	}
	for _, want := range []string{"handbook\n", "folder:       " + dir, "description:  the staff handbook", "routes:       leave",
		"preset:       contracts", "answer mode:  extractive", "archived:     (none)", "model:        use-lite",
		"documents:    4, 0 failed,", "last run:     done, run", "notes\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("ingestd layers lacks %q:\n%s", want, out)
		}
	}

	if code, out, errOut := c.run("set", "--layer", "handbook", "--description", "leave and expenses",
		"--route", "leave*", "--route", "expenses", "--archived", "old/**"); code != 0 {
		t.Fatalf("set exited %d\n%s\n%s", code, out, errOut)
	}
	_, out, _ = c.run("layers", "--layer", "handbook")
	for _, want := range []string{"description:  leave and expenses", "routes:       leave*, expenses", "archived:     old/**",
		"documents:    4, 0 failed,"} {
		if !strings.Contains(out, want) {
			t.Errorf("after set, ingestd layers --layer handbook lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "notes") {
		t.Errorf("ingestd layers --layer handbook shows another layer:\n%s", out)
	}
	if code, _, errOut := c.run("set", "--layer", "handbook"); code != 2 || !strings.Contains(errOut, "nothing to change") {
		t.Errorf("set without a setting: exit %d, %q", code, errOut)
	}

	pool := c.pool()
	var layerID int64
	if err := pool.QueryRow(ctx, `SELECT id FROM strata.layers WHERE name = 'handbook'`).Scan(&layerID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO strata.interactions (caller, tool, question, layers, status)
		VALUES ('test', 'strata_ask', 'How many leave days?', '{handbook}', 'found')`); err != nil {
		t.Fatal(err)
	}
	count := func(sql string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, sql, layerID).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	vectors := `SELECT count(*) FROM strata.embeddings e WHERE e.content_hash IN
		(SELECT content_hash FROM strata.chunks WHERE layer_id = $1)`
	if count(vectors) == 0 {
		t.Fatal("the handbook has no vectors before remove: the test proves nothing")
	}
	var hashes [][]byte
	rows, _ := pool.Query(ctx, `SELECT content_hash FROM strata.chunks WHERE layer_id = $1`, layerID)
	for rows.Next() {
		var h []byte
		_ = rows.Scan(&h)
		hashes = append(hashes, h)
	}
	rows.Close()

	// Piped without --yes: refused, nothing deleted.
	if code, _, errOut := c.run("remove", "--layer", "handbook"); code != 2 || !strings.Contains(errOut, "--yes") {
		t.Errorf("remove without a terminal or --yes: exit %d, %q; want 2 and a hint at --yes", code, errOut)
	}
	// Asked, answered no.
	if code, out, errOut := c.runIn("n\n", nil, "remove", "--layer", "handbook"); code != 0 || !strings.Contains(out, "[y/N]") ||
		!strings.Contains(out, "nothing deleted") {
		t.Errorf("remove answered no: exit %d\n%s\n%s", code, out, errOut)
	}
	if count(`SELECT count(*) FROM strata.documents WHERE layer_id = $1`) != 4 {
		t.Fatal("remove answered no deleted documents")
	}
	// Asked, answered yes.
	if code, out, errOut := c.runIn("y\n", nil, "remove", "--layer", "handbook"); code != 0 || !strings.Contains(out, "layer handbook removed: 4 documents") {
		t.Fatalf("remove answered yes: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, sql := range []string{
		`SELECT count(*) FROM strata.layers WHERE id = $1`,
		`SELECT count(*) FROM strata.documents WHERE layer_id = $1`,
		`SELECT count(*) FROM strata.chunks WHERE layer_id = $1`,
		`SELECT count(*) FROM strata.postings WHERE layer_id = $1`,
		`SELECT count(*) FROM strata.posting_lists WHERE layer_id = $1`,
		`SELECT count(*) FROM strata.ingest_runs WHERE layer_id = $1`,
		`SELECT count(*) FROM strata.layer_models WHERE layer_id = $1`,
	} {
		if n := count(sql); n != 0 {
			t.Errorf("%d rows left after remove: %s", n, sql)
		}
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.embeddings WHERE content_hash = ANY($1)`, hashes).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d of the handbook's vectors left after remove", left)
	}
	if n := count(`SELECT count(*) FROM strata.interactions WHERE $1 > 0 AND 'handbook' = ANY(layers)`); n != 1 {
		t.Errorf("remove deleted what queryd recorded: %d interactions left, want 1", n)
	}
	_, out, _ = c.run("layers")
	if strings.Contains(out, "handbook") || !strings.Contains(out, "notes") {
		t.Errorf("after remove, ingestd layers:\n%s", out)
	}
	if code, out, errOut := c.run("remove", "--layer", "notes", "--yes"); code != 0 || !strings.Contains(out, "layer notes removed: 2 documents") {
		t.Errorf("remove --yes: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := c.run("remove", "--layer", "notes", "--yes"); code != 2 || !strings.Contains(errOut, `no layer named "notes"`) {
		t.Errorf("remove of a missing layer: exit %d, %q", code, errOut)
	}
}

// TestBadLayerNameIsAUsageError: a layer name the schema refuses exits 2
// and says which names are allowed, instead of a check-constraint error.
func TestBadLayerNameIsAUsageError(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeDocs(t, dir, 1)
	for _, args := range [][]string{
		{"add", dir, "--layer", "my layer"},
		{"add", dir, "--layer", "-x"},
		{"ingest", "--layer", "my layer"},
		{"status", "--layer", "a/b"},
		{"set", "--layer", "my layer", "--description", "x"},
		{"remove", "--layer", "my layer", "--yes"},
	} {
		code, _, errOut := c.runEnv(noModel(t), args...)
		if code != 2 || !strings.Contains(errOut, "letters, digits, '_', '-' or '.'") || strings.Contains(errOut, "constraint") {
			t.Errorf("ingestd %q: exit %d, stderr %q; want exit 2 naming the allowed names", args, code, errOut)
		}
	}
}

// TestVerbHelpPrintsUsage: -h on every verb prints its synopsis with its
// arguments and exits 0, also where no database is configured.
func TestVerbHelpPrintsUsage(t *testing.T) {
	for verb, want := range map[string]string{
		"serve": "Usage: ingestd serve", "migrate": "Usage: ingestd migrate", "add": "Usage: ingestd add DIR --layer NAME",
		"ingest": "Usage: ingestd ingest [--layer NAME]", "status": "Usage: ingestd status", "reembed": "--model MODEL",
		"layers": "Usage: ingestd layers", "set": "Usage: ingestd set --layer NAME", "remove": "Usage: ingestd remove --layer NAME [--yes]",
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{verb, "-h"}, func(string) string { return "" }, &out, &errb)
		got := out.String() + errb.String()
		if code != 0 || !strings.Contains(got, want) {
			t.Errorf("ingestd %s -h: exit %d, want 0 and %q in:\n%s", verb, code, want, got)
		}
		if strings.HasPrefix(got, "Usage of") {
			t.Errorf("ingestd %s -h prints Go's bare usage:\n%s", verb, got)
		}
	}
}

// TestLayersFlagIsAccepted: --layers is another spelling of --layer.
func TestLayersFlagIsAccepted(t *testing.T) {
	c := newCLI(t)
	code, _, errOut := c.runEnv(noModel(t), "ingest", "--layers", "nope")
	if code != 2 || !strings.Contains(errOut, `no layer named "nope"`) {
		t.Errorf("ingest --layers nope: exit %d, %q", code, errOut)
	}
}

// TestWrongPasswordSaysSo: a refused password is named as such, with the
// place the password comes from, not as an unreachable database.
func TestWrongPasswordSaysSo(t *testing.T) {
	addr := dbtest.RefusingServer(t)
	url := "postgres://strata:wrong@" + addr + "/stratakb?sslmode=disable&connect_timeout=5"
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"status"}, func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}, &out, &errb)
	got := errb.String()
	if code != 1 || !strings.Contains(got, `password authentication failed for role "strata"`) ||
		!strings.Contains(got, "DATABASE_URL") || strings.Contains(got, "unreachable") {
		t.Errorf("wrong password: exit %d, stderr %q", code, got)
	}
	if strings.Contains(got, "wrong") {
		t.Errorf("the error shows the password: %q", got)
	}
}
