package jobs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/schema"
)

// LayerNameRule says which layer names are allowed, for messages. It must
// match the check on strata.layers.name (migration 0001).
const LayerNameRule = "1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit"

var layerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ErrBadLayerName is returned for a layer name the database would refuse.
var ErrBadLayerName = errors.New("bad layer name")

// CheckLayerName reports whether name is a valid layer name, with an error
// wrapping ErrBadLayerName that says which names are.
func CheckLayerName(name string) error {
	if layerNameRE.MatchString(name) {
		return nil
	}
	return fmt.Errorf("%w %q: a layer name is %s", ErrBadLayerName, name, LayerNameRule)
}

// isCheckViolation reports whether err is PostgreSQL refusing a row by the
// named check constraint.
func isCheckViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23514" && pe.ConstraintName == constraint
}

// LayerInfo is a layer with its counts and its last run, as `ingestd
// layers` shows it.
type LayerInfo struct {
	Layer
	Documents int // stored without error
	Failed    int // documents that failed
	Chunks    int
	// Pending is, per model the layer has been embedded with, how many of
	// its chunks still lack a vector.
	Pending map[string]int
	LastRun *LastRun // nil when the layer never ran
}

// LastRun is the latest ingest run of a layer.
type LastRun struct {
	ID         int64
	Status     schema.RunStatus
	Trigger    string
	Error      string
	StartedAt  time.Time
	FinishedAt *time.Time
}

// DescribeLayers returns every layer (or the one named, when name is not
// empty) with its counts and last run, by name.
func DescribeLayers(ctx context.Context, q pgxQuerier, name string) ([]LayerInfo, error) {
	rows, err := q.Query(ctx, `WITH l AS (SELECT `+layerColumns+` FROM strata.layers WHERE $1 = '' OR name = $1)
		SELECT l.*,
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'ok'),
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'failed'),
			(SELECT count(*) FROM strata.chunks c WHERE c.layer_id = l.id),
			r.id, r.status, r.trigger, coalesce(r.error, ''), r.started_at, r.finished_at
		FROM l
		LEFT JOIN LATERAL (SELECT * FROM strata.ingest_runs r WHERE r.layer_id = l.id ORDER BY r.id DESC LIMIT 1) r ON true
		ORDER BY l.name`, name)
	if err != nil {
		return nil, fmt.Errorf("describe layers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LayerInfo, error) {
		var li LayerInfo
		var runID *int64
		var status *schema.RunStatus
		var trigger, errText *string
		var started *time.Time
		var finished *time.Time
		l := &li.Layer
		err := r.Scan(&l.ID, &l.Name, &l.Root, &l.Include, &l.Exclude, &l.Description, &l.RoutingPatterns,
			&l.AnswerMode, &l.Archived, &l.ChunkSize, &l.Preset, &l.Pushed, &l.ScheduleAllowDeletes, &l.EmbeddingModel,
			&li.Documents, &li.Failed, &li.Chunks, &runID, &status, &trigger, &errText, &started, &finished)
		if err == nil && runID != nil {
			li.LastRun = &LastRun{ID: *runID, Status: *status, Trigger: *trigger, Error: *errText,
				StartedAt: *started, FinishedAt: finished}
		}
		return li, err
	})
	if err != nil {
		return nil, fmt.Errorf("describe layers: %w", err)
	}
	for i := range out {
		pending, err := layerPending(ctx, q, out[i].ID)
		if err != nil {
			return nil, err
		}
		out[i].Pending = pending
	}
	return out, nil
}

// layerPending counts, per model the layer has been embedded with, its
// chunks without a vector.
func layerPending(ctx context.Context, q pgxQuerier, layerID int64) (map[string]int, error) {
	rows, err := q.Query(ctx, `SELECT lm.model, (SELECT count(*) FROM strata.chunks c WHERE c.layer_id = lm.layer_id
			AND `+LacksVector("lm.model")+`)
		FROM strata.layer_models lm WHERE lm.layer_id = $1 ORDER BY lm.model`, layerID)
	if err != nil {
		return nil, fmt.Errorf("count pending vectors of layer %d: %w", layerID, err)
	}
	out := map[string]int{}
	var model string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&model, &n}, func() error {
		out[model] = n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count pending vectors of layer %d: %w", layerID, err)
	}
	return out, nil
}

// Removed counts what RemoveLayer deleted.
type Removed struct {
	Documents int64
	Chunks    int64
	Vectors   int64 // vectors no other layer's chunk shares
	Runs      int64 // ingest runs, with their per-file records
	Jobs      int64 // queued River jobs of the layer, cancelled
}

// ErrLayerBusy is returned by RemoveLayer while a live worker is ingesting
// or embedding the layer.
var ErrLayerBusy = errors.New("layer is being ingested")

// RemoveLayer deletes the layer with its documents, chunks, the vectors no
// other chunk shares, and its ingest runs and per-file records, in one
// transaction; its queued jobs are cancelled in the same transaction. What
// queryd recorded (interactions, feedback, receipts, what it learned) names
// layers by name and stays. It refuses, with ErrLayerBusy, while a worker
// that is alive holds one of the layer's jobs.
func RemoveLayer(ctx context.Context, pool *pgxpool.Pool, name string) (Removed, error) {
	var rm Removed
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var id int64
		// FOR UPDATE keeps a concurrent add or set of the layer out until
		// this commits.
		err := tx.QueryRow(ctx, `SELECT id FROM strata.layers WHERE name = $1 FOR UPDATE`, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("layer %q: %w", name, ErrLayerNotFound)
		}
		if err != nil {
			return err
		}
		var busy int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+RiverSchema+`.river_job j
			JOIN strata.ingest_worker_state ws ON ws.client_id = j.attempted_by[cardinality(j.attempted_by)]
			WHERE j.state = 'running' AND ws.alive AND (j.args->>'layer_id')::bigint = $1`, id).Scan(&busy); err != nil {
			return fmt.Errorf("look for running jobs: %w", err)
		}
		if busy > 0 {
			return fmt.Errorf("layer %q: %w by a running worker (%d jobs): wait until it finishes ('ingestd status --layer %s')",
				name, ErrLayerBusy, busy, name)
		}
		tag, err := tx.Exec(ctx, `UPDATE `+RiverSchema+`.river_job SET state = 'cancelled', finalized_at = now()
			WHERE state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
			AND kind IN ('ingest_layer', 'ingest_file', 'embed') AND (args->>'layer_id')::bigint = $1`, id)
		if err != nil {
			return fmt.Errorf("cancel queued jobs: %w", err)
		}
		rm.Jobs = tag.RowsAffected()
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM strata.documents WHERE layer_id = $1`, id).Scan(&rm.Documents); err != nil {
			return fmt.Errorf("count documents: %w", err)
		}
		// The layer's vectors go unless another layer's chunk has the same
		// text (vectors are keyed by content hash and model).
		tag, err = tx.Exec(ctx, `DELETE FROM strata.embeddings e
			WHERE e.content_hash IN (SELECT content_hash FROM strata.chunks WHERE layer_id = $1)
			AND NOT EXISTS (SELECT 1 FROM strata.chunks c WHERE c.content_hash = e.content_hash AND c.layer_id <> $1)`, id)
		if err != nil {
			return fmt.Errorf("delete vectors: %w", err)
		}
		rm.Vectors = tag.RowsAffected()
		// Chunks first, by their own statement, so that the statistics
		// and postings triggers see them go.
		if tag, err = tx.Exec(ctx, `DELETE FROM strata.chunks WHERE layer_id = $1`, id); err != nil {
			return fmt.Errorf("delete chunks: %w", err)
		}
		rm.Chunks = tag.RowsAffected()
		if tag, err = tx.Exec(ctx, `DELETE FROM strata.ingest_runs WHERE layer_id = $1`, id); err != nil {
			return fmt.Errorf("delete ingest runs: %w", err)
		}
		rm.Runs = tag.RowsAffected()
		// The rest (documents, pages, sections, model states) goes with the
		// layer by its foreign keys.
		if _, err := tx.Exec(ctx, `DELETE FROM strata.layers WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete the layer: %w", err)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrLayerNotFound) || errors.Is(err, ErrLayerBusy) {
			return Removed{}, err
		}
		return Removed{}, fmt.Errorf("remove layer %q: %w", name, err)
	}
	return rm, nil
}
