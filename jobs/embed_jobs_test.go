package jobs

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/schema"
)

// insertOnly returns a migrated database, an insert-only River client on
// it and a layer of the given name.
func insertOnly(t *testing.T, layer string) (*pgxpool.Pool, *river.Client[pgx.Tx], Layer) {
	t.Helper()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := UpsertLayer(context.Background(), pool, Layer{Name: layer, Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	return pool, client, l
}

// TestActiveEmbedJobs: the count is the layer's embed jobs still to run or
// running, less those running on a worker that is gone.
func TestActiveEmbedJobs(t *testing.T) {
	ctx := context.Background()
	pool, client, l := insertOnly(t, "e")
	other, err := UpsertLayer(ctx, pool, Layer{Name: "o", Root: t.TempDir(), AnswerMode: "grounded", ChunkSize: 800})
	if err != nil {
		t.Fatal(err)
	}
	count := func(want int, when string) {
		t.Helper()
		n, err := ActiveEmbedJobs(ctx, client, pool, l.ID)
		if err != nil || n != want {
			t.Fatalf("%s: %d active embed jobs (%v), want %d", when, n, err, want)
		}
	}
	count(0, "no job")
	insert := func(layerID, doc int64) int64 {
		t.Helper()
		res, err := client.Insert(ctx, EmbedArgs{LayerID: layerID, DocumentID: doc, Model: "m"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	if _, err := client.Insert(ctx, IngestLayerArgs{LayerID: l.ID, RunID: 1}, nil); err != nil {
		t.Fatal(err) // another kind with the same layer_id
	}
	insert(other.ID, 1)
	count(0, "jobs of another kind and another layer only")
	queued := insert(l.ID, 1)
	count(1, "one available job")

	live, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close(ctx)
	claim(t, pool, queued, live.ClientID)
	count(1, "running on a live worker")

	dead, err := Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	orphan := insert(l.ID, 2)
	claim(t, pool, orphan, dead.ClientID)
	count(2, "a second job running on a worker still alive")
	if err := dead.abandon(); err != nil {
		t.Fatal(err)
	}
	count(1, "the second worker killed")

	if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, queued); err != nil {
		t.Fatal(err)
	}
	count(0, "the live worker's job completed")
	for _, state := range []string{"scheduled", "retryable"} {
		id := insert(l.ID, 3)
		if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = $2::river.river_job_state WHERE id = $1`, id, state); err != nil {
			t.Fatal(err)
		}
		count(1, "a "+state+" job")
		if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'cancelled', finalized_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHNSWLockKeyedOnModel: two models of the same dimensions take
// different build locks, and the key stays in its space.
func TestHNSWLockKeyedOnModel(t *testing.T) {
	a, b := embed.ModelInfo{Name: "a@1", Dims: 384}, embed.ModelInfo{Name: "b@1", Dims: 384}
	if hnswLockKey(a.Name) == hnswLockKey(b.Name) {
		t.Fatalf("models %s and %s of %d dimensions share the build lock %x", a.Name, b.Name, a.Dims, hnswLockKey(a.Name))
	}
	for _, k := range []int64{hnswLockKey(a.Name), hnswLockKey(b.Name)} {
		if k>>32 != hnswLockSpace>>32 {
			t.Errorf("key %x is outside the HNSW space %x", k, hnswLockSpace)
		}
	}
	if got := lockKey(embedLockSpace, 42); got != 0x454d42440000002a {
		t.Errorf("embed lock of layer 42 is %x, want 454d42440000002a", got)
	}
}

// TestVectorIndexBuildsWhileAnotherModelsBuilds: while model a's index is
// being built (its build lock held), model b of the same dimensions still
// builds its own.
func TestVectorIndexBuildsWhileAnotherModelsBuilds(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	a, b := embed.ModelInfo{Name: "a@1", Dims: 8}, embed.ModelInfo{Name: "b@1", Dims: 8}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, hnswLockKey(a.Name)); err != nil {
		t.Fatal(err)
	}
	exists := func(m embed.ModelInfo) bool {
		t.Helper()
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = 'strata' AND indexname = $1)`,
			VectorIndexName(m.Name)).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, m := range []embed.ModelInfo{a, b} {
		if err := EnsureVectorIndex(ctx, pool, m); err != nil {
			t.Fatal(err)
		}
	}
	if exists(a) || !exists(b) {
		t.Fatalf("with a's build lock held: index of a exists %v (want false), of b %v (want true)", exists(a), exists(b))
	}
	var pred string
	if err := pool.QueryRow(ctx, `SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i
		WHERE i.indexrelid = ('strata.' || $1)::regclass`, VectorIndexName(b.Name)).Scan(&pred); err != nil {
		t.Fatal(err)
	}
	if want := "(model = " + schema.ModelLiteral(b.Name) + "::text)"; pred != want {
		t.Errorf("index predicate %s, want %s", pred, want)
	}
}

// TestSweepIsUniquePerLayer: a second sweep of a layer and model is not
// queued while the first waits; documents' jobs and other models' sweeps
// are; once the sweep has finished a new one is queued again.
func TestSweepIsUniquePerLayer(t *testing.T) {
	ctx := context.Background()
	pool, client, l := insertOnly(t, "u")
	skipped := func(args EmbedArgs) bool {
		t.Helper()
		res, err := client.Insert(ctx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.UniqueSkippedAsDuplicate
	}
	sweep := EmbedArgs{LayerID: l.ID, Model: "m"}
	if skipped(sweep) {
		t.Fatal("the first sweep was skipped")
	}
	if !skipped(sweep) {
		t.Error("a second sweep of the layer was queued beside the first")
	}
	if skipped(EmbedArgs{LayerID: l.ID, Model: "other"}) {
		t.Error("a sweep for another model was skipped")
	}
	doc := EmbedArgs{LayerID: l.ID, DocumentID: 7, Model: "m"}
	// Inserted twice: neither may be skipped as a duplicate of the other.
	if first, second := skipped(doc), skipped(doc); first || second {
		t.Error("a document's embed job was skipped as a duplicate")
	}
	if _, err := pool.Exec(ctx, `UPDATE river.river_job SET state = 'completed', finalized_at = now()
		WHERE kind = 'embed_chunks' AND args->>'model' = 'm' AND NOT args ? 'document_id'`); err != nil {
		t.Fatal(err)
	}
	if skipped(sweep) {
		t.Error("a sweep after the first one finished was skipped")
	}
}
