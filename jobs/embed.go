package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/schema"
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

// InsertOpts: an unreachable provider is retried with River's back-off. A
// sweep of the layer (DocumentID 0) is a River unique job: a second sweep of
// the same layer and model is not queued while one is waiting or running,
// since the first one embeds everything the second would. Its completion
// (completeSweep) makes sure that no chunk is left behind by a sweep that
// was skipped so. A document's job is never skipped: see Work.
func (a EmbedArgs) InsertOpts() river.InsertOpts {
	opts := river.InsertOpts{MaxAttempts: 10, Queue: QueueEmbed}
	if a.DocumentID == 0 {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: activeJobStates()}
	}
	return opts
}

// EmbedWorker runs EmbedArgs jobs.
type EmbedWorker struct {
	river.WorkerDefaults[EmbedArgs]
	pool      *pgxpool.Pool
	vec       Vectorizer // nil when the model could not be loaded
	loadErr   error
	models    func(model string) (Vectorizer, error) // other models; may be nil
	batchSize int
	logger    *slog.Logger
	stopping  <-chan struct{} // ClientConfig.Stopping
}

// Timeout bounds one embedding job. A job starts batches for embedBudget
// only and then snoozes (River runs it again at once, without counting an
// attempt), so a large layer never needs a long timeout, and River's rescue
// of stuck jobs (RescueStuckJobsAfter) can stay short.
func (w *EmbedWorker) Timeout(*river.Job[EmbedArgs]) time.Duration { return embedTimeout }

// ErrModelUnavailable is returned when the configured embedding model could
// not be loaded or reached: chunks stay pending until it is back.
var ErrModelUnavailable = errors.New("embedding model unavailable")

// Work embeds pending chunks in batches until none is left.
func (w *EmbedWorker) Work(ctx context.Context, job *river.Job[EmbedArgs]) error {
	a := job.Args
	vec, err := w.vectorizer(a.Model)
	if err != nil {
		return river.JobCancel(err)
	}
	mi := vec.Model()
	if err := RegisterModel(ctx, w.pool, a.LayerID, mi, "configured"); err != nil {
		return err
	}
	// One embed job per layer at a time: a document's job and a sweep of the
	// layer would otherwise read the same pending chunks and embed them
	// twice. The lock is a session lock: it goes with the connection when a
	// process dies, and the holder lets go after embedBudget.
	//
	// A job that finds the layer busy does not wait for it, since a waiting
	// job holds a worker of the embed queue, and a large layer's documents'
	// jobs waiting so would hold them all, leaving other layers' jobs
	// queued behind a backlog they have no part in. A document's job hands
	// its chunks to the layer's sweep instead and ends: it queues the sweep
	// (a unique job: at most one waits per layer), which either runs after
	// the holder or, if it is the holder, sees the chunks in its completion
	// (completeSweep), since this job's chunks were committed before it ran.
	// A sweep that finds the layer busy snoozes (no attempt is counted).
	//
	// River's unique jobs cannot replace the lock for documents' jobs: a
	// unique job's states must include running, so a document's job
	// inserted in the transaction that stores its chunks, while the layer's
	// job runs past its last look for pending chunks, would be dropped as a
	// duplicate and the chunks left without vectors until the next sweep.
	conn, err := w.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("embed layer %d: %w", a.LayerID, err)
	}
	defer conn.Release()
	lock := lockKey(embedLockSpace, a.LayerID)
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&got); err != nil {
		return fmt.Errorf("embed layer %d: take the layer's lock: %w", a.LayerID, err)
	}
	if !got {
		return w.layerBusy(ctx, a)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock) //nolint:errcheck
	start := time.Now()
	scope := a
	for {
		for {
			if time.Since(start) > embedBudget || w.handingBack() {
				// More to do than one job should take, or this process is
				// stopping: run again at once, here or elsewhere.
				return river.JobSnooze(0)
			}
			n, err := w.embedBatch(ctx, scope, vec)
			if err != nil {
				if errors.Is(err, embed.ErrPermanent) {
					return river.JobCancel(err)
				}
				return err
			}
			if n > 0 {
				continue
			}
			if scope.DocumentID == 0 {
				break
			}
			// The document's chunks first, then, while this job holds the
			// layer's lock, the layer's other pending chunks: the jobs of
			// documents stored meanwhile found the lock taken and left
			// theirs to the layer's sweep, which snoozes (busyLayerSnooze)
			// while the lock is held, so the model would wait for it
			// (issue 31: a 1 s gap in 13 s of ingest).
			scope.DocumentID = 0
		}
		if err := markComplete(ctx, w.pool, a.LayerID, mi.Name); err != nil {
			return err
		}
		if err := EnsureVectorIndex(ctx, w.pool, mi); err != nil {
			return err
		}
		if a.DocumentID != 0 {
			return nil
		}
		more, err := w.completeSweep(ctx, job)
		if err != nil || !more {
			return err
		}
	}
}

// handingBack reports whether the client is stopping (ClientConfig.Stopping).
func (w *EmbedWorker) handingBack() bool {
	select {
	case <-w.stopping:
		return true
	default:
		return false
	}
}

// layerBusy ends a job whose layer another job is embedding: a sweep looks
// again shortly; a document's job leaves its chunks to the layer's sweep.
func (w *EmbedWorker) layerBusy(ctx context.Context, a EmbedArgs) error {
	if a.DocumentID == 0 {
		return river.JobSnooze(busyLayerSnooze)
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("embed layer %d: %w", a.LayerID, err)
	}
	if _, err := client.Insert(ctx, EmbedArgs{LayerID: a.LayerID, Model: a.Model}, nil); err != nil {
		return fmt.Errorf("embed layer %d: queue its sweep: %w", a.LayerID, err)
	}
	return nil
}

// vectorizer returns the vectorizer of the job's model: the configured one,
// or another the layer was embedded with. A model this process cannot run
// cancels the job; the chunks stay pending, and 'ingestd status' says so.
func (w *EmbedWorker) vectorizer(model string) (Vectorizer, error) {
	if w.vec != nil && w.vec.Model().Name == model {
		return w.vec, nil
	}
	if w.models != nil {
		v, err := w.models(model)
		if err == nil {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrModelUnavailable, model, err)
	}
	if w.vec == nil {
		return nil, fmt.Errorf("%w: %v", ErrModelUnavailable, w.loadErr)
	}
	return nil, fmt.Errorf("%w: job for model %s, but this process runs only %s", ErrModelUnavailable, model, w.vec.Model().Name)
}

// errMorePending rolls back a sweep's completion.
var errMorePending = errors.New("chunks still pending")

// completeSweep completes a sweep in a transaction that first marks the job
// completed and then looks once more for chunks of the layer without a
// vector; when there are some, it rolls back and reports more. A sweep
// inserted meanwhile was skipped as a duplicate only if it came before the
// completion, so its chunks (counted before it was inserted) are seen here;
// one inserted after the completion waits for this transaction and is
// queued when it commits.
func (w *EmbedWorker) completeSweep(ctx context.Context, job *river.Job[EmbedArgs]) (more bool, err error) {
	a := job.Args
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM strata.chunks c WHERE c.layer_id = $1 AND `+
			LacksVector("$2")+`)`, a.LayerID, a.Model).Scan(&more); err != nil {
			return err
		}
		if more {
			return errMorePending
		}
		return nil
	})
	if errors.Is(err, errMorePending) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("complete the sweep of layer %d: %w", a.LayerID, err)
	}
	return false, nil
}

// embedBatch embeds one batch of pending texts and returns how many it did.
func (w *EmbedWorker) embedBatch(ctx context.Context, a EmbedArgs, vec Vectorizer) (int, error) {
	mi := vec.Model()
	rows, err := w.pool.Query(ctx, `
		SELECT DISTINCT ON (c.content_hash) c.content_hash, c.text
		FROM strata.chunks c
		WHERE c.layer_id = $1 AND ($2 = 0 OR c.document_id = $2) AND `+LacksVector("$3")+`
		ORDER BY c.content_hash
		LIMIT $4`, a.LayerID, a.DocumentID, mi.Name, w.batchSize)
	if err != nil {
		return 0, fmt.Errorf("read pending chunks: %w", err)
	}
	type pending struct {
		hash []byte
		text string
	}
	batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pending, error) {
		var p pending
		err := r.Scan(&p.hash, &p.text)
		return p, err
	})
	if err != nil {
		return 0, fmt.Errorf("read pending chunks: %w", err)
	}
	if len(batch) == 0 {
		return 0, nil
	}
	hashes, texts := make([][]byte, len(batch)), make([]string, len(batch))
	for i, p := range batch {
		hashes[i], texts[i] = p.hash, p.text
	}
	vecs, err := vec.EmbedChunks(ctx, texts)
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
			SELECT 1 FROM strata.chunks c WHERE c.layer_id = $1 AND `+LacksVector("$2")+`)`,
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
// to the model's dimensions as half-precision floats, as the vectors are
// stored since migration 0027, partial on the model name) if it does not exist
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
	lock := hnswLockKey(mi.Name)
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&got); err != nil || !got {
		return nil // another worker is building it
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock) //nolint:errcheck
	sql := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON strata.embeddings
		USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops) WHERE model = %s`,
		pgx.Identifier{name}.Sanitize(), mi.Dims, schema.ModelLiteral(mi.Name))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE strata.embedding_models SET index_name = $2 WHERE name = $1`, mi.Name, name); err != nil {
		return fmt.Errorf("record index %s: %w", name, err)
	}
	return nil
}

// LacksVector is the SQL condition that chunk c (the alias is part of it)
// has no vector of the model that the SQL expression model names (a
// parameter such as "$2", or a column). Every query about pending vectors
// is written with it; embeddings_content_hash serves the anti-join.
func LacksVector(model string) string {
	return `NOT EXISTS (SELECT 1 FROM strata.embeddings e WHERE e.model = ` + model +
		` AND e.content_hash = c.content_hash)`
}

// PendingVectors counts, per layer, the chunks without a vector of model.
func PendingVectors(ctx context.Context, q pgxQuerier, model string) (map[int64]int, error) {
	rows, err := q.Query(ctx, `
		SELECT c.layer_id, count(*) FROM strata.chunks c WHERE `+LacksVector("$1")+`
		GROUP BY c.layer_id`, model)
	if err != nil {
		return nil, fmt.Errorf("count pending vectors: %w", err)
	}
	out := map[int64]int{}
	var id int64
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil }); err != nil {
		return nil, fmt.Errorf("count pending vectors: %w", err)
	}
	return out, nil
}

// EnqueuePending queues a sweep of each layer that has chunks without a
// vector of its model (its own, or def when it has none; see
// Layer.LayerModel). A layer whose sweep is already queued or running keeps
// that one. It returns how many layers it queued sweeps for.
func EnqueuePending(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx], def string) (int, error) {
	layers, err := ListLayers(ctx, pool)
	if err != nil {
		return 0, err
	}
	counts := map[string]map[int64]int{}
	n := 0
	for _, l := range layers {
		model := l.LayerModel(def)
		if model == "" {
			continue
		}
		if counts[model] == nil {
			if counts[model], err = PendingVectors(ctx, pool, model); err != nil {
				return n, err
			}
		}
		if counts[model][l.ID] == 0 {
			continue
		}
		if _, err := client.Insert(ctx, EmbedArgs{LayerID: l.ID, Model: model}, nil); err != nil {
			return n, fmt.Errorf("enqueue embedding of layer %s: %w", l.Name, err)
		}
		n++
	}
	return n, nil
}

func activeJobStates() []rivertype.JobState {
	return []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
		rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}
}

// ActiveEmbedJobs counts the embed jobs of a layer that are still to run or
// running, as River's JobList finds them (10,000 at the most). A job running on a worker that is
// gone (killed, crashed) does not count: it will not finish, and waiting for
// it would wait for River's rescue.
func ActiveEmbedJobs(ctx context.Context, client *river.Client[pgx.Tx], q pgxQuerier, layerID int64) (int, error) {
	params := river.NewJobListParams().Kinds(EmbedArgs{}.Kind()).States(activeJobStates()...).
		Where("(args->>'layer_id')::bigint = @layer_id", river.NamedArgs{"layer_id": layerID}).First(10_000)
	res, err := client.JobList(ctx, params)
	if err != nil {
		return 0, fmt.Errorf("count embed jobs of layer %d: %w", layerID, err)
	}
	var workers []string // the workers running the layer's running jobs
	for _, j := range res.Jobs {
		if j.State == rivertype.JobStateRunning && len(j.AttemptedBy) > 0 {
			workers = append(workers, j.AttemptedBy[len(j.AttemptedBy)-1])
		}
	}
	gone := map[string]bool{}
	if len(workers) > 0 {
		rows, err := q.Query(ctx, `SELECT client_id FROM strata.ingest_worker_state
			WHERE client_id = ANY($1) AND NOT alive`, workers)
		if err != nil {
			return 0, fmt.Errorf("count embed jobs of layer %d: %w", layerID, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return 0, fmt.Errorf("count embed jobs of layer %d: %w", layerID, err)
		}
		for _, id := range ids {
			gone[id] = true
		}
	}
	n := 0
	for _, j := range res.Jobs {
		if j.State == rivertype.JobStateRunning && len(j.AttemptedBy) > 0 && gone[j.AttemptedBy[len(j.AttemptedBy)-1]] {
			continue
		}
		n++
	}
	return n, nil
}
