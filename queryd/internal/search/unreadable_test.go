package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
)

// TestDocumentThatBecomesUnreadable: files that were ingested and are then
// replaced by a binary, by text that is not UTF-8 or (a PDF) by an empty
// file fail on re-ingest; their old chunks, sections, pages and postings go
// with the failure, so searching their words finds nothing of them, and no
// stored span points outside its document's text.
func TestDocumentThatBecomesUnreadable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pdf, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "parsers", "testdata", "hello.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		"binary.md": "# Boiler\n\n## 1 Service\n\nThe quindecimal boiler is serviced every October.\n",
		"latin.txt": "Section 4 Opening hours\n\nThe sesquipedalian canteen opens at eight.\n",
		"paper.pdf": string(pdf),
		"keep.md":   "# Kept\n\nThe quindecimal sesquipedalian note that stays readable.\n",
	}
	layer := jobs.Layer{Name: "flaky"}
	f.ingest(t, layer, good)
	s := f.searcher(t)
	words := []string{"quindecimal", "sesquipedalian"}
	var pdfWord string
	if err := f.pool.QueryRow(context.Background(), `SELECT split_part(trim(c.text), ' ', 1) FROM strata.chunks c
		JOIN strata.documents d ON d.id = c.document_id WHERE d.path = 'paper.pdf' LIMIT 1`).Scan(&pdfWord); err != nil {
		t.Fatalf("the PDF has no chunk to start with: %v", err)
	}
	words = append(words, pdfWord)
	before := map[string]bool{}
	for _, w := range words {
		for _, r := range mustSearch(t, s, Request{Query: w, Layers: []string{"flaky"}}).Results {
			before[r.File] = true
		}
	}
	for _, file := range []string{"binary.md", "latin.txt", "paper.pdf"} {
		if !before[file] {
			t.Fatalf("%s not found before it became unreadable (found %v)", file, before)
		}
	}

	root := filepath.Join(f.dir, layer.Name)
	for name, data := range map[string]string{
		"binary.md": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"latin.txt": "Section 4 Opening hours\n\nThe sesquipedalian canteen opens at eight. Caf\xe9\n",
		"paper.pdf": "",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := ingesttest.Ingest(t, f.pool, jobs.Layer{Name: layer.Name, Root: root}, ingesttest.Options{Vectorizer: jobs.SingleVector(f.emb)})
	if p.Failed != 3 {
		t.Fatalf("re-ingest: %+v, want the 3 unreadable files failed", p)
	}
	f.store = nil // a fresh store: no cached results from before
	s = f.searcher(t)
	for _, w := range words {
		for _, r := range mustSearch(t, s, Request{Query: w, Layers: []string{"flaky"}}).Results {
			if r.File != "keep.md" {
				t.Errorf("%q still finds %s (%s) after it became unreadable: %q", w, r.File, r.Ref, r.Text)
			}
		}
	}
	ctx := context.Background()
	var left int
	if err := f.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM strata.chunks c JOIN strata.documents d ON d.id = c.document_id WHERE d.status = 'failed') +
		(SELECT count(*) FROM strata.sections s JOIN strata.documents d ON d.id = s.document_id WHERE d.status = 'failed') +
		(SELECT count(*) FROM strata.pages p JOIN strata.documents d ON d.id = p.document_id WHERE d.status = 'failed') +
		(SELECT count(*) FROM strata.postings p WHERE NOT EXISTS (SELECT 1 FROM strata.chunks c WHERE c.id = p.chunk_id)) +
		(SELECT count(*) FROM strata.posting_lists pl, unnest(pl.chunk_ids) u(id)
			WHERE NOT EXISTS (SELECT 1 FROM strata.chunks c WHERE c.id = u.id))`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d chunks, sections, pages or postings left of the failed documents", left)
	}
	// Every stored span lies inside its document's text.
	rows, err := f.pool.Query(ctx, `
		SELECT 'chunk', d.path, c.start_off, c.end_off, octet_length(coalesce(d.body, '')) FROM strata.chunks c JOIN strata.documents d ON d.id = c.document_id
		UNION ALL SELECT 'section', d.path, s.start_off, s.end_off, octet_length(coalesce(d.body, '')) FROM strata.sections s JOIN strata.documents d ON d.id = s.document_id
		UNION ALL SELECT 'page', d.path, p.start_off, p.end_off, octet_length(coalesce(d.body, '')) FROM strata.pages p JOIN strata.documents d ON d.id = p.document_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	spans := 0
	for rows.Next() {
		var kind, path string
		var a, b, n int
		if err := rows.Scan(&kind, &path, &a, &b, &n); err != nil {
			t.Fatal(err)
		}
		spans++
		if a < 0 || b < a || b > n {
			t.Errorf("%s %d-%d of %s points outside its text of %d bytes", kind, a, b, path, n)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if spans == 0 {
		t.Error("no spans left at all: keep.md should still have its chunk")
	}
	var failed []string
	frows, _ := f.pool.Query(ctx, `SELECT path || ': ' || error FROM strata.documents WHERE status = 'failed' ORDER BY path`)
	for frows.Next() {
		var s string
		_ = frows.Scan(&s)
		failed = append(failed, s)
	}
	frows.Close()
	if len(failed) != 3 || !strings.Contains(strings.Join(failed, "\n"), "binary content") {
		t.Errorf("failed documents recorded: %q", failed)
	}
}
