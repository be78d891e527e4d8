package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/embed"
)

// Vectorizer turns chunk texts into vectors: one or more window vectors per
// text (a model that reads only a prefix of a long text may represent it by
// several windows).
type Vectorizer interface {
	Model() embed.ModelInfo
	EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error)
}

// SingleVector represents each chunk by one vector of e. When e can embed
// whole passages (a model that reads only a prefix of a long text and
// offers EmbedPassages), chunks go through that; queries use Embed.
func SingleVector(e embed.Embedder) Vectorizer { return singleVector{e} }

type singleVector struct{ e embed.Embedder }

// passageEmbedder is a model that represents a whole long text by one vector.
type passageEmbedder interface {
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
}

func (s singleVector) Model() embed.ModelInfo { return s.e.Model() }

func (s singleVector) EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error) {
	embedFn := s.e.Embed
	if p, ok := s.e.(passageEmbedder); ok {
		embedFn = p.EmbedPassages
	}
	vs, err := embedFn(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][][]float32, len(vs))
	for i, v := range vs {
		out[i] = [][]float32{v}
	}
	return out, nil
}

// EmbedArgs asks for the chunks of a layer (or of one document of it) that
// have no vector of Model yet to be embedded.
type EmbedArgs struct {
	LayerID    int64  `json:"layer_id"`
	DocumentID int64  `json:"document_id,omitempty"` // 0: the whole layer
	Model      string `json:"model"`
}

// Kind is the River job kind.
func (EmbedArgs) Kind() string { return "embed_chunks" }

// InsertOpts: an unreachable provider is retried with River's back-off.
func (EmbedArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 10} }

// EmbedWorker runs EmbedArgs jobs.
type EmbedWorker struct {
	river.WorkerDefaults[EmbedArgs]
	pool      *pgxpool.Pool
	vec       Vectorizer // nil when the model could not be loaded
	loadErr   error
	batchSize int
	logger    *slog.Logger
}

// Timeout bounds one embedding job. A job starts batches for embedBudget
// only and then snoozes (River runs it again at once, without counting an
// attempt), so a large layer never needs a long timeout, and River's rescue
// of stuck jobs (RescueStuckJobsAfter) can stay short.
func (w *EmbedWorker) Timeout(*river.Job[EmbedArgs]) time.Duration { return embedTimeout }

// embedLockSpace keeps the per-layer advisory lock keys of embed jobs apart
// from other advisory locks.
const embedLockSpace = int64(0x454d424400000000) // "EMBD"

// ErrModelUnavailable is returned when the configured embedding model could
// not be loaded or reached: chunks stay pending until it is back.
var ErrModelUnavailable = errors.New("embedding model unavailable")

// Work embeds pending chunks in batches until none is left.
func (w *EmbedWorker) Work(ctx context.Context, job *river.Job[EmbedArgs]) error {
	a := job.Args
	if w.vec == nil {
		return river.JobCancel(fmt.Errorf("%w: %v", ErrModelUnavailable, w.loadErr))
	}
	mi := w.vec.Model()
	if mi.Name != a.Model {
		// Queued for a model this process no longer runs: the sweep for the
		// current model covers these chunks.
		return river.JobCancel(fmt.Errorf("job for model %s, but the configured model is %s", a.Model, mi.Name))
	}
	if err := RegisterModel(ctx, w.pool, a.LayerID, mi, "configured"); err != nil {
		return err
	}
	// One embed job per layer at a time: a document's job and a sweep of the
	// layer would otherwise read the same pending chunks and embed them
	// twice. A job that waits here usually finds nothing left to do. The
	// lock is a session lock: it goes with the connection when a process
	// dies, and the holder lets go after embedBudget.
	conn, err := w.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("embed layer %d: %w", a.LayerID, err)
	}
	defer conn.Release()
	lock := embedLockSpace | a.LayerID
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("embed layer %d: wait for the layer's other embed job: %w", a.LayerID, err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock) //nolint:errcheck
	start := time.Now()
	for {
		if time.Since(start) > embedBudget {
			// More to do than one job should take: run again at once.
			return river.JobSnooze(0)
		}
		n, err := w.embedBatch(ctx, a, mi)
		if err != nil {
			if errors.Is(err, embed.ErrPermanent) {
				return river.JobCancel(err)
			}
			return err
		}
		if n == 0 {
			break
		}
	}
	if err := markComplete(ctx, w.pool, a.LayerID, mi.Name); err != nil {
		return err
	}
	return EnsureVectorIndex(ctx, w.pool, mi)
}

// embedBatch embeds one batch of pending texts and returns how many it did.
func (w *EmbedWorker) embedBatch(ctx context.Context, a EmbedArgs, mi embed.ModelInfo) (int, error) {
	rows, err := w.pool.Query(ctx, `
		SELECT DISTINCT ON (c.content_hash) c.content_hash, c.text
		FROM strata.chunks c
		WHERE c.layer_id = $1 AND ($2 = 0 OR c.document_id = $2)
		AND NOT EXISTS (SELECT 1 FROM strata.embeddings e WHERE e.model = $3 AND e.content_hash = c.content_hash)
		ORDER BY c.content_hash
		LIMIT $4`, a.LayerID, a.DocumentID, mi.Name, w.batchSize)
	if err != nil {
		return 0, fmt.Errorf("read pending chunks: %w", err)
	}
	var hashes [][]byte
	var texts []string
	for rows.Next() {
		var h []byte
		var t string
		if err := rows.Scan(&h, &t); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read pending chunks: %w", err)
		}
		hashes, texts = append(hashes, h), append(texts, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read pending chunks: %w", err)
	}
	if len(texts) == 0 {
		return 0, nil
	}
	vecs, err := w.vec.EmbedChunks(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("embed %d chunks with %s: %w", len(texts), mi.Name, err)
	}
	if len(vecs) != len(texts) {
		return 0, fmt.Errorf("embed %d chunks with %s: got %d results", len(texts), mi.Name, len(vecs))
	}
	b := &pgx.Batch{}
	for i, windows := range vecs {
		for wi, v := range windows {
			b.Queue(`INSERT INTO strata.embeddings (model, content_hash, window_no, dims, embedding)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
				mi.Name, hashes[i], wi, len(v), pgvector.NewVector(v))
		}
	}
	if err := w.pool.SendBatch(ctx, b).Close(); err != nil {
		return 0, fmt.Errorf("store vectors: %w", err)
	}
	return len(texts), nil
}

// RegisterModel records the model and that the layer uses it.
func RegisterModel(ctx context.Context, pool *pgxpool.Pool, layerID int64, mi embed.ModelInfo, provider string) error {
	_, err := pool.Exec(ctx, `
		WITH m AS (INSERT INTO strata.embedding_models (name, provider, dims) VALUES ($2, $3, $4)
			ON CONFLICT (name) DO NOTHING)
		INSERT INTO strata.layer_models (layer_id, model) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		layerID, mi.Name, provider, mi.Dims)
	if err != nil {
		return fmt.Errorf("register model %s: %w", mi.Name, err)
	}
	return nil
}

// markComplete marks the model complete for the layer when no chunk of the
// layer lacks its vector.
func markComplete(ctx context.Context, pool *pgxpool.Pool, layerID int64, model string) error {
	_, err := pool.Exec(ctx, `
		UPDATE strata.layer_models SET complete = true, completed_at = coalesce(completed_at, now()), updated_at = now()
		WHERE layer_id = $1 AND model = $2 AND NOT EXISTS (
			SELECT 1 FROM strata.chunks c WHERE c.layer_id = $1
			AND NOT EXISTS (SELECT 1 FROM strata.embeddings e WHERE e.model = $2 AND e.content_hash = c.content_hash))`,
		layerID, model)
	if err != nil {
		return fmt.Errorf("mark %s complete for layer %d: %w", model, layerID, err)
	}
	return nil
}

// VectorIndexName is the name of the HNSW index of a model's vectors.
func VectorIndexName(model string) string {
	sum := sha256.Sum256([]byte(model))
	return "embeddings_hnsw_" + hex.EncodeToString(sum[:6])
}

// EnsureVectorIndex builds the model's HNSW index (an expression index cast
// to the model's dimensions, partial on the model name) if it does not exist
// yet. It is called after a bulk load, since building the index first makes
// inserts much slower.
func EnsureVectorIndex(ctx context.Context, pool *pgxpool.Pool, mi embed.ModelInfo) error {
	if mi.Dims <= 0 || mi.Dims > 2000 {
		return nil // pgvector's HNSW indexes vectors of up to 2,000 dimensions
	}
	name := VectorIndexName(mi.Name)
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = 'strata' AND indexname = $1)`,
		name).Scan(&exists); err != nil {
		return fmt.Errorf("look up index %s: %w", name, err)
	}
	if exists {
		return nil
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	defer conn.Release()
	lock := int64(0x4853570000000000) | int64(mi.Dims)
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&got); err != nil || !got {
		return nil // another worker is building it
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock) //nolint:errcheck
	literal := "'" + strings.ReplaceAll(mi.Name, "'", "''") + "'"
	sql := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON strata.embeddings
		USING hnsw ((embedding::vector(%d)) vector_cosine_ops) WHERE model = %s`,
		pgx.Identifier{name}.Sanitize(), mi.Dims, literal)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE strata.embedding_models SET index_name = $2 WHERE name = $1`, mi.Name, name); err != nil {
		return fmt.Errorf("record index %s: %w", name, err)
	}
	return nil
}

// PendingVectors counts, per layer, the chunks without a vector of model.
func PendingVectors(ctx context.Context, q pgxQuerier, model string) (map[int64]int, error) {
	rows, err := q.Query(ctx, `
		SELECT c.layer_id, count(*) FROM strata.chunks c
		WHERE NOT EXISTS (SELECT 1 FROM strata.embeddings e WHERE e.model = $1 AND e.content_hash = c.content_hash)
		GROUP BY c.layer_id`, model)
	if err != nil {
		return nil, fmt.Errorf("count pending vectors: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count pending vectors: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}

// EnqueuePending enqueues one embed job per layer that has chunks without a
// vector of model, and returns how many it enqueued.
func EnqueuePending(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx], model string) (int, error) {
	pending, err := PendingVectors(ctx, pool, model)
	if err != nil {
		return 0, err
	}
	n := 0
	for layerID, count := range pending {
		if count == 0 {
			continue
		}
		if _, err := client.Insert(ctx, EmbedArgs{LayerID: layerID, Model: model}, nil); err != nil {
			return n, fmt.Errorf("enqueue embedding of layer %d: %w", layerID, err)
		}
		n++
	}
	return n, nil
}

// ActiveEmbedJobs counts the embed jobs of a layer that are still to run or
// running. A job running on a worker that is gone (killed, crashed) does not
// count: it will not finish, and waiting for it would wait for River's rescue.
func ActiveEmbedJobs(ctx context.Context, q pgxQuerier, layerID int64) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM `+RiverSchema+`.river_job j
		LEFT JOIN strata.ingest_worker_state ws ON ws.client_id = j.attempted_by[cardinality(j.attempted_by)]
		WHERE j.kind = 'embed_chunks' AND j.state IN ('available', 'running', 'retryable', 'scheduled', 'pending')
		AND (j.args->>'layer_id')::bigint = $1
		AND NOT (j.state = 'running' AND ws.alive IS NOT DISTINCT FROM false)`, layerID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count embed jobs: %w", err)
	}
	return n, nil
}
