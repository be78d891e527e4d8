package jobs

import (
	"context"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/schema"
)

// TestMigrationClearsFailedDocuments: migration 0009 removes the chunks,
// sections, pages and postings that earlier versions left on documents that
// failed on re-ingest, and leaves good documents alone.
func TestMigrationClearsFailedDocuments(t *testing.T) {
	pool, _ := dbtest.NewPool(t)
	ctx := context.Background()
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	l, err := UpsertLayer(ctx, pool, Layer{Name: "m", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	// What the old recordFailure left: a failed document without text whose
	// chunk, section and page remain; beside it a good document.
	for _, d := range []struct {
		path, status string
		body         *string
	}{{"gone.md", "failed", nil}, {"good.md", "ok", ptr("# Good\n\nThe boiler is serviced.\n")}} {
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO strata.documents (layer_id, path, status, body, total_pages)
			VALUES ($1, $2, $3, $4, 1) RETURNING id`, l.ID, d.path, d.status, d.body).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO strata.chunks (document_id, layer_id, ord, start_off, end_off,
			line_start, line_end, text, content_hash) VALUES ($1, $2, 0, 0, 30, 1, 3, 'The boiler is serviced yearly', '\x01')`, id, l.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO strata.sections (document_id, layer_id, ord, kind, level, start_off,
			heading_end, end_off, clause_path) VALUES ($1, $2, 0, 'heading', 1, 0, 6, 30, 'Good')`, id, l.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO strata.pages (document_id, number, start_off, end_off, text_origin)
			VALUES ($1, 1, 0, 30, 'text')`, id); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	for _, m := range ms {
		if m.Version == 9 {
			if _, err := pool.Exec(ctx, m.SQL); err != nil {
				t.Fatalf("migration %s: %v", m.Name, err)
			}
			ran = true
		}
	}
	if !ran {
		t.Fatal("no migration 0009")
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for path, want := range map[string]int{"gone.md": 0, "good.md": 3} {
		got := count(`SELECT (SELECT count(*) FROM strata.chunks c WHERE c.document_id = d.id) +
			(SELECT count(*) FROM strata.sections s WHERE s.document_id = d.id) +
			(SELECT count(*) FROM strata.pages p WHERE p.document_id = d.id)
			FROM strata.documents d WHERE d.path = '` + path + `'`)
		if got != want {
			t.Errorf("%s keeps %d chunks, sections and pages, want %d", path, got, want)
		}
	}
	// The postings, packed into the posting lists as a run's close packs
	// them (migration 0028).
	if _, err := pool.Exec(ctx, `SELECT strata.pack_postings(id) FROM strata.layers`); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT (SELECT count(*) FROM strata.postings p WHERE NOT EXISTS (SELECT 1 FROM strata.chunks c WHERE c.id = p.chunk_id))
		+ (SELECT count(*) FROM strata.posting_lists pl, unnest(pl.chunk_ids) u(id) WHERE NOT EXISTS (SELECT 1 FROM strata.chunks c WHERE c.id = u.id))`); n != 0 {
		t.Errorf("%d postings of deleted chunks left", n)
	}
	if n := count(`SELECT (SELECT count(*) FROM strata.postings) + (SELECT coalesce(sum(cardinality(chunk_ids)), 0) FROM strata.posting_lists)`); n == 0 {
		t.Error("the good document's postings went too")
	}
}

func ptr(s string) *string { return &s }
