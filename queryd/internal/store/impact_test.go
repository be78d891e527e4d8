package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
)

func TestImpactCandidates(t *testing.T) {
	read := []postingSlice{
		// lexeme 0 in layer 1: the list's head, then its delta; only the
		// two best of the three count (perTerm 2).
		{term: 0, layerID: 1, ids: []int64{10, 11}, impacts: []float32{3, 1}},
		{term: 0, layerID: 1, ids: []int64{12}, impacts: []float32{2}},
		// lexeme 1 in layer 1.
		{term: 1, layerID: 1, ids: []int64{11, 13}, impacts: []float32{4, 4}},
	}
	idf := []float64{1, 0.5}
	// Scores: 10 → 3, 12 → 2, 11 → 2 (lexeme 1 only: its lexeme 0
	// posting is third), 13 → 2; ties by chunk id.
	got := impactCandidates(read, idf, 2, 3)
	if want := []int64{10, 11, 12}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if got := impactCandidates(read, idf, 2, 10); !slices.Equal(got, []int64{10, 11, 12, 13}) {
		t.Errorf("all candidates %v, want [10 11 12 13]", got)
	}
	if got := impactCandidates(nil, idf, 2, 3); len(got) != 0 {
		t.Errorf("no postings gave %v", got)
	}
}

// BenchmarkImpactCandidates is a SciFact-sized claim: 15 lexemes, each
// list's first 2,000 entries over 14,000 chunks, 300 candidates.
func BenchmarkImpactCandidates(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var read []postingSlice
	idf := make([]float64, 15)
	for t := range 15 {
		idf[t] = 1 + r.Float64()*5
		s := postingSlice{term: t, layerID: 1}
		for range 2000 {
			s.ids = append(s.ids, 1+r.Int64N(14000))
			s.impacts = append(s.impacts, r.Float32())
		}
		read = append(read, s)
	}
	b.ResetTimer()
	for range b.N {
		impactCandidates(read, idf, 2000, 300)
	}
}

// TestImpactCandidatesMatchTheDatabase: readPostings and impactCandidates
// choose the candidates strata.best_postings and its grouping would, with
// some postings packed in lists and some still in the delta, and lists cut
// short enough that ties and truncation decide.
func TestImpactCandidatesMatchTheDatabase(t *testing.T) {
	pool, _ := dbtest.NewPool(t)
	ctx := context.Background()
	root := t.TempDir()
	words := []string{"ledger", "invoice", "audit", "payroll", "travel", "leave", "backup", "notice", "region", "review"}
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 60 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for range 5 + r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("n%02d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Identical notes: equal impacts and equal sums, which only the chunk
	// id orders.
	for i := range 15 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("same%02d.md", i)), []byte("# Same\n\nledger audit payroll notice\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "notes", Root: root}, ingesttest.Options{})
	// Move each list's best third back to the delta, as if a run had
	// stored them and not packed yet.
	if _, err := pool.Exec(ctx, `
		WITH cut AS (SELECT lexeme, layer_id, chunk_ids, impacts, cardinality(chunk_ids) / 3 AS k FROM strata.posting_lists),
		moved AS (INSERT INTO strata.postings (lexeme, layer_id, chunk_id, impact)
			SELECT cut.lexeme, cut.layer_id, u.id, u.imp FROM cut, unnest(cut.chunk_ids[1:cut.k], cut.impacts[1:cut.k]) u(id, imp))
		UPDATE strata.posting_lists pl SET chunk_ids = cut.chunk_ids[cut.k + 1:], impacts = cut.impacts[cut.k + 1:]
		FROM cut WHERE pl.lexeme = cut.lexeme AND pl.layer_id = cut.layer_id`); err != nil {
		t.Fatal(err)
	}
	var layer int64
	if err := pool.QueryRow(ctx, `SELECT id FROM strata.layers WHERE name = 'notes'`).Scan(&layer); err != nil {
		t.Fatal(err)
	}
	// Two made-up lexemes whose postings tie on impact across the list
	// and the delta ("tieone": 3, 4 and 5 of the seven at impact 2 make
	// the three best) and whose sums tie ("tietwo" gives 1 and 2 the same).
	for _, q := range []string{`INSERT INTO strata.posting_lists (lexeme, layer_id, chunk_ids, impacts) VALUES
			('tieone', $1, '{5,3,9,1}', '{2,2,2,1}'), ('tietwo', $1, '{2,1,7}', '{1,1,0.5}')`,
		`INSERT INTO strata.postings (lexeme, layer_id, chunk_id, impact) VALUES
			('tieone', $1, 8, 2), ('tieone', $1, 4, 2), ('tieone', $1, 2, 1)`} {
		if _, err := pool.Exec(ctx, q, layer); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, c := range []struct {
		terms      []string
		perTerm, n int
	}{
		{[]string{"ledger", "audit"}, 5, 8},
		{[]string{"payrol", "travel", "leav", "backup"}, 12, 10},
		{[]string{"notic", "region", "review", "invoic", "nosuchword"}, 30, 25},
		{[]string{"audit"}, 100, 100},
		{[]string{"ledger", "audit", "payrol", "notic"}, 40, 30},
		{[]string{"audit"}, 5, 5},
		{[]string{"ledger", "notic"}, 7, 7},
		{[]string{"tieone"}, 3, 3},
		{[]string{"tieone", "tietwo"}, 3, 4},
	} {
		idf := make([]float64, len(c.terms))
		for i := range idf {
			idf[i] = 1 + float64(i)/3
		}
		var want []int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(id ORDER BY s DESC, id), '{}') FROM (
			SELECT p.chunk_id AS id, sum(q.idf * p.impact) AS s FROM unnest($1::text[], $2::float8[]) q(lexeme, idf)
				CROSS JOIN LATERAL strata.best_postings(q.lexeme, $3, $4) p
			GROUP BY p.chunk_id ORDER BY s DESC, p.chunk_id LIMIT $5) x`, c.terms, idf, layer, c.perTerm, c.n).Scan(&want); err != nil {
			t.Fatal(err)
		}
		read, err := readPostings(ctx, tx, c.terms, []int64{layer}, c.perTerm)
		if err != nil {
			t.Fatal(err)
		}
		if got := impactCandidates(read, idf, c.perTerm, c.n); !slices.Equal(got, want) {
			t.Errorf("%v, %d a term, %d: got %v, the database %v", c.terms, c.perTerm, c.n, got, want)
		}
		if len(want) == 0 {
			t.Errorf("%v: the database chose nothing; the case proves nothing", c.terms)
		}
	}
}
