package jobs_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
)

// countingVectorizer makes deterministic vectors from the text's hash and
// remembers every text it was asked to embed. Vector retention is what these
// tests check, not retrieval quality.
type countingVectorizer struct {
	mu    sync.Mutex
	texts []string
}

func (v *countingVectorizer) Model() embed.ModelInfo {
	return embed.ModelInfo{Name: "test-hash-8", Dims: 8}
}

func (v *countingVectorizer) EmbedChunks(_ context.Context, texts []string) ([][][]float32, error) {
	v.mu.Lock()
	v.texts = append(v.texts, texts...)
	v.mu.Unlock()
	out := make([][][]float32, len(texts))
	for i, t := range texts {
		sum := sha256.Sum256([]byte(t))
		vec := make([]float32, 8)
		for j := range vec {
			vec[j] = float32(sum[j]) + 1
		}
		out[i] = [][]float32{vec}
	}
	return out, nil
}

func (v *countingVectorizer) take() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.texts
	v.texts = nil
	return t
}

type chunkRow struct {
	id   int64
	text string
}

func chunksOf(t *testing.T, pool *pgxpool.Pool, path string) []chunkRow {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT c.id, c.text FROM strata.chunks c
		JOIN strata.documents d ON d.id = c.document_id WHERE d.path = $1 ORDER BY c.ord`, path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chunkRow, error) {
		var c chunkRow
		err := r.Scan(&c.id, &c.text)
		return c, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// longPolicy writes a policy of many sections, each with a paragraph that
// names its number, so an edit can target one paragraph.
func longPolicy(edit int) string {
	var b strings.Builder
	b.WriteString("---\ntitle: Fleet policy\nupdated: 2026-01-15\n---\n# Fleet policy\n\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "%d Section %d\n\n", i, i)
		text := fmt.Sprintf("Vehicles of depot %d are inspected every %d weeks by the fleet team, "+
			"who record the mileage, the tyre depth and any damage in the fleet register before the "+
			"vehicle returns to service. Drivers report faults on the same day.", i, i+2)
		if i == edit {
			text = strings.Replace(text, "every", "at least every", 1)
		}
		b.WriteString(text + "\n\n")
		b.WriteString(fmt.Sprintf("Keys for depot %d are kept in the locked cabinet at reception; a spare set is held by the site manager.\n\n", i))
	}
	return b.String()
}

func TestReingestKeepsUnchangedChunksAndVectors(t *testing.T) {
	pool, _ := dbtest.NewPool(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "fleet.md")
	if err := os.WriteFile(file, []byte(longPolicy(0)), 0o644); err != nil {
		t.Fatal(err)
	}
	vec := &countingVectorizer{}
	layer := jobs.Layer{Name: "fleet", Root: dir, ChunkSize: 400}
	ingesttest.Ingest(t, pool, layer, ingesttest.Options{Vectorizer: vec})
	before := chunksOf(t, pool, "fleet.md")
	if len(before) < 6 {
		t.Fatalf("want a document of several chunks, got %d", len(before))
	}
	if n := len(vec.take()); n != len(before) {
		t.Fatalf("first ingest embedded %d texts for %d chunks", n, len(before))
	}

	// Edit one paragraph (section 7) and ingest again.
	if err := os.WriteFile(file, []byte(longPolicy(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := ingesttest.Ingest(t, pool, layer, ingesttest.Options{Vectorizer: vec})
	if p.Changed != 1 {
		t.Fatalf("second run: %d changed files, want 1 (%+v)", p.Changed, p)
	}
	after := chunksOf(t, pool, "fleet.md")
	oldIDs := map[string]int64{}
	for _, c := range before {
		oldIDs[c.text] = c.id
	}
	var fresh []chunkRow
	for _, c := range after {
		id, ok := oldIDs[c.text]
		switch {
		case !ok:
			fresh = append(fresh, c)
		case id != c.id:
			t.Errorf("unchanged chunk got a new id (%d → %d): %.60q", id, c.id, c.text)
		}
	}
	if len(fresh) == 0 || len(fresh) > 2 {
		t.Fatalf("editing one paragraph made %d new chunks, want 1 or 2", len(fresh))
	}
	for _, c := range fresh {
		if !strings.Contains(c.text, "at least every") && !strings.Contains(c.text, "depot 7") {
			t.Errorf("a new chunk does not hold the edited paragraph: %.80q", c.text)
		}
	}
	embedded := vec.take()
	if len(embedded) != len(fresh) {
		t.Errorf("second run embedded %d texts, want only the %d new chunks", len(embedded), len(fresh))
	}
	var missing int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM strata.chunks c WHERE NOT EXISTS (
		SELECT 1 FROM strata.embeddings e WHERE e.model = 'test-hash-8' AND e.content_hash = c.content_hash)`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d chunks have no vector after the re-ingest", missing)
	}
}

func TestDeleteRenameAndSupersedes(t *testing.T) {
	pool, _ := dbtest.NewPool(t)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("old-rates.md", "# Rates 2025\n\nThe day rate is EUR 640 for senior engineers.\n")
	write("rates.md", "---\nsupersedes: old-rates.md\n---\n# Rates 2026\n\nThe day rate is EUR 700 for senior engineers.\n")
	write("travel.md", "# Travel\n\nTrains are booked in standard class.\n")
	write("gone.md", "# Gone\n\nThis page is removed before the second run.\n")
	layer := jobs.Layer{Name: "rates", Root: dir}
	ingesttest.Ingest(t, pool, layer, ingesttest.Options{})
	travel := chunksOf(t, pool, "travel.md")

	var replacedBy string
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(n.path, ','), '')
		FROM strata.documents d JOIN strata.documents n ON n.layer_id = d.layer_id AND d.path = ANY(n.supersedes)
		WHERE d.path = 'old-rates.md'`).Scan(&replacedBy); err != nil {
		t.Fatal(err)
	}
	if replacedBy != "rates.md" {
		t.Errorf("old-rates.md replaced by %q, want rates.md", replacedBy)
	}

	if err := os.Remove(filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "travel.md"), filepath.Join(dir, "travel-policy.md")); err != nil {
		t.Fatal(err)
	}
	p := ingesttest.Ingest(t, pool, layer, ingesttest.Options{})
	if p.Deleted != 1 || p.Renamed != 1 || p.New != 0 || p.Changed != 0 {
		t.Errorf("second run: deleted %d renamed %d new %d changed %d; want 1, 1, 0, 0", p.Deleted, p.Renamed, p.New, p.Changed)
	}
	if got := chunksOf(t, pool, "gone.md"); len(got) != 0 {
		t.Errorf("deleted file still has %d chunks", len(got))
	}
	renamed := chunksOf(t, pool, "travel-policy.md")
	if len(renamed) != len(travel) || len(renamed) == 0 || renamed[0].id != travel[0].id {
		t.Errorf("renamed file's chunks %v, want the same rows as before %v", renamed, travel)
	}
}
