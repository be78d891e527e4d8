package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
)

// TestTableRowsAreFound ingests a layer of tables (a CSV and a TSV from
// fixtures/tables, a longer generated CSV and a two-sheet workbook) with the
// real jobs and searches it: a row's code, digits and letters (AC04) or
// letters only (ZQRT), brings that row's chunk first, citing the row's line
// and, in a workbook, its sheet.
func writeTableLayer(t *testing.T, root string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(testenv.RepoRoot(t), "fixtures", "tables")
	for _, name := range []string{"stock.tsv", "prices-semicolon.csv"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFiles(t, root, map[string]string{name: string(data)})
	}
	// A long catalogue: AC04's row is line 151 of 300, among rows that
	// share every other word with it.
	var csv strings.Builder
	csv.WriteString("code,part,supplier,notes\n")
	for r := 2; r <= 300; r++ {
		code := fmt.Sprintf("BX%03d", r)
		if r == 151 {
			code = "AC04"
		}
		fmt.Fprintf(&csv, "%s,Hinge pin size %d,Kestrel Metals,replaces an older hinge pin\n", code, r)
	}
	testenv.WriteFiles(t, root, map[string]string{"catalogue.csv": csv.String()})

	wb := excelize.NewFile()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(wb.SetSheetName("Sheet1", "Fasteners"))
	if _, err := wb.NewSheet("Tools"); err != nil {
		t.Fatal(err)
	}
	for _, sheet := range []string{"Fasteners", "Tools"} {
		must(wb.SetSheetRow(sheet, "A1", &[]any{"code", "item", "location"}))
		for r := 2; r <= 150; r++ {
			code := fmt.Sprintf("%s%03d", strings.ToUpper(sheet[:2]), r)
			if sheet == "Tools" && r == 80 {
				code = "ZQRT"
			}
			must(wb.SetSheetRow(sheet, fmt.Sprintf("A%d", r), &[]any{code, fmt.Sprintf("calibration shim set %d", r), "store room"}))
		}
	}
	must(wb.SaveAs(filepath.Join(root, "tools.xlsx")))
	must(wb.Close())
}

func TestTableRowsAreFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	root := filepath.Join(f.dir, "parts")
	writeTableLayer(t, root)
	f.ingest(t, jobs.Layer{Name: "handbook"}, handbook)
	p := ingesttest.Ingest(t, f.pool, jobs.Layer{Name: "parts", Root: root}, ingesttest.Options{Vectorizer: jobs.SingleVector(f.emb)})
	if p.Failed != 0 || p.Skipped != 0 || p.New != 4 {
		t.Fatalf("ingest: %+v, want 4 new files, none failed or skipped", p)
	}
	checkTableSearch(t, f.searcher(t), 5)
}

// TestTableRowsAreFoundUSELite runs the same searches with the local model
// and its measured search parameters (lexical weight 1, vector 0.15), where
// a question naming the code also brings the row first.
func TestTableRowsAreFoundUSELite(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "parts")
	writeTableLayer(t, root)
	checkTableSearch(t, useliteSearcher(t, "parts", root, 4), 1)
}

// checkTableSearch searches the layer writeTableLayer wrote; a question's
// row must come within questionRank.
func checkTableSearch(t *testing.T, s *Searcher, questionRank int) {
	t.Helper()
	for _, tc := range []struct {
		query, file, row string
		line             int // the row's line in the file, for a CSV or TSV
		clause           string
		within           int // the row's chunk must be among the first within results
	}{
		{"AC04", "catalogue.csv", "code: AC04 | part: Hinge pin size 151", 151, "", 1},
		{"ZQRT", "tools.xlsx", "row 80 | code: ZQRT | item: calibration shim set 80", 0, "Tools", 1},
		{"zqrt", "tools.xlsx", "row 80 | code: ZQRT", 0, "Tools", 1},
		{"TT-207", "stock.tsv", "sku: TT-207 | description: Heat shrink 6 mm | bin: C03", 4, "", 1},
		// In a question, the other words match every row as well as this
		// one, and fusion weighs the vector channel: the keyword slot keeps
		// the row's chunk among the results, not necessarily first.
		{"which hinge pin is AC04?", "catalogue.csv", "code: AC04 | part: Hinge pin size 151", 151, "", questionRank},
		{"where is the ZQRT calibration shim set kept", "tools.xlsx", "row 80 | code: ZQRT", 0, "Tools", questionRank},
	} {
		// No layers named: every layer is searched (no routing pattern
		// names the code).
		resp := mustSearch(t, s, Request{Query: tc.query})
		found := false
		for i, r := range resp.Results {
			if i == tc.within {
				break
			}
			if r.File != tc.file || !strings.Contains(r.Text, tc.row) {
				continue
			}
			found = true
			if r.ClausePath != tc.clause {
				t.Errorf("%q: clause path %q, want %q", tc.query, r.ClausePath, tc.clause)
			}
			var a, b int
			if _, err := fmt.Sscanf(r.Lines, "%d-%d", &a, &b); err != nil {
				t.Errorf("%q: lines %q", tc.query, r.Lines)
			} else if tc.line > 0 && (a > tc.line || b < tc.line) {
				t.Errorf("%q: lines %s do not hold the row's line %d", tc.query, r.Lines, tc.line)
			}
		}
		if !found {
			first := ""
			if len(resp.Results) > 0 {
				first = fmt.Sprintf("%s lines %s: %.100q", resp.Results[0].File, resp.Results[0].Lines, resp.Results[0].Text)
			}
			t.Errorf("%q: the chunk of %q (%s) is not among the first %d results; first: %s", tc.query, tc.row, tc.file, tc.within, first)
		}
	}
}
