package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/schema"
)

// Layer is a named folder of documents with its settings.
type Layer struct {
	ID              int64
	Name            string
	Root            string // absolute path of the folder
	Include         []string
	Exclude         []string
	Description     string
	RoutingPatterns []string
	AnswerMode      schema.AnswerMode
	Archived        []string
	ChunkSize       int
	Preset          string
	// Pushed marks a layer ingested from elsewhere (a CI runner pushing its
	// checkout): the schedule skips it, since its folder is that runner's.
	Pushed bool
	// ScheduleAllowDeletes lets a scheduled run delete more than half of the
	// layer's documents (see DeleteGuardFloor).
	ScheduleAllowDeletes bool
	// EmbeddingModel is the model the layer's chunks are embedded with, by
	// the name stored with its vectors; "" means the configured model.
	EmbeddingModel string
}

// ErrLayerNotFound is returned when a named layer does not exist.
var ErrLayerNotFound = errors.New("layer not found")

const layerColumns = `id, name, root, include_globs, exclude_globs, description, routing_patterns,
	answer_mode, archived_globs, chunk_size, preset, pushed, schedule_allow_deletes, coalesce(embedding_model, '')`

func scanLayer(row pgx.Row) (Layer, error) {
	var l Layer
	err := row.Scan(&l.ID, &l.Name, &l.Root, &l.Include, &l.Exclude, &l.Description, &l.RoutingPatterns,
		&l.AnswerMode, &l.Archived, &l.ChunkSize, &l.Preset, &l.Pushed, &l.ScheduleAllowDeletes, &l.EmbeddingModel)
	return l, err
}

// UpsertLayer creates the layer or updates its settings, and returns it with
// its id.
func UpsertLayer(ctx context.Context, pool *pgxpool.Pool, l Layer) (Layer, error) {
	if err := CheckLayerName(l.Name); err != nil {
		return Layer{}, err
	}
	row := pool.QueryRow(ctx, `
		INSERT INTO strata.layers (name, root, include_globs, exclude_globs, description, routing_patterns,
			answer_mode, archived_globs, chunk_size, preset, pushed, schedule_allow_deletes, embedding_model)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, nullif($13, ''))
		ON CONFLICT (name) DO UPDATE SET root = EXCLUDED.root, include_globs = EXCLUDED.include_globs,
			exclude_globs = EXCLUDED.exclude_globs, description = EXCLUDED.description,
			routing_patterns = EXCLUDED.routing_patterns, answer_mode = EXCLUDED.answer_mode,
			archived_globs = EXCLUDED.archived_globs, chunk_size = EXCLUDED.chunk_size,
			preset = EXCLUDED.preset, pushed = EXCLUDED.pushed,
			schedule_allow_deletes = EXCLUDED.schedule_allow_deletes,
			embedding_model = coalesce(EXCLUDED.embedding_model, strata.layers.embedding_model), updated_at = now()
		RETURNING `+layerColumns,
		l.Name, l.Root, nonNil(l.Include), nonNil(l.Exclude), l.Description, nonNil(l.RoutingPatterns),
		l.AnswerMode, nonNil(l.Archived), l.ChunkSize, l.Preset, l.Pushed, l.ScheduleAllowDeletes, l.EmbeddingModel)
	out, err := scanLayer(row)
	if isCheckViolation(err, "layers_name_check") {
		return Layer{}, fmt.Errorf("%w %q: a layer name is %s", ErrBadLayerName, l.Name, LayerNameRule)
	}
	if err != nil {
		return Layer{}, fmt.Errorf("save layer %q: %w", l.Name, err)
	}
	return out, nil
}

// GetLayer reads a layer by name.
func GetLayer(ctx context.Context, q pgxQuerier, name string) (Layer, error) {
	l, err := scanLayer(q.QueryRow(ctx, `SELECT `+layerColumns+` FROM strata.layers WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return Layer{}, fmt.Errorf("layer %q: %w", name, ErrLayerNotFound)
	}
	if err != nil {
		return Layer{}, fmt.Errorf("read layer %q: %w", name, err)
	}
	return l, nil
}

func getLayerByID(ctx context.Context, q pgxQuerier, id int64) (Layer, error) {
	l, err := scanLayer(q.QueryRow(ctx, `SELECT `+layerColumns+` FROM strata.layers WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Layer{}, fmt.Errorf("layer %d: %w", id, ErrLayerNotFound)
	}
	if err != nil {
		return Layer{}, fmt.Errorf("read layer %d: %w", id, err)
	}
	return l, nil
}

// ListLayers returns every layer, by name.
func ListLayers(ctx context.Context, q pgxQuerier) ([]Layer, error) {
	rows, err := q.Query(ctx, `SELECT `+layerColumns+` FROM strata.layers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Layer, error) { return scanLayer(r) })
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	return out, nil
}

// RunOptions are the settings of one ingest run.
type RunOptions struct {
	Trigger string // cli, schedule
	// AllowDeletes lets the run delete more than half of the layer's
	// documents (ingestd add/ingest --allow-deletes).
	AllowDeletes bool
	// WorkerID is the River client ID of the process that waits for the run
	// (ingestd add --wait), so status can tell when it is gone.
	WorkerID string
}

// StartIngest records a new ingest run of the layer and enqueues the job that
// walks its folder, in one transaction. It returns the run id.
func StartIngest(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx], layerID int64, trigger string) (int64, error) {
	return StartIngestWith(ctx, pool, client, layerID, RunOptions{Trigger: trigger})
}

// StartIngestWith is StartIngest with the run's options.
func StartIngestWith(ctx context.Context, pool *pgxpool.Pool, client *river.Client[pgx.Tx], layerID int64, opt RunOptions) (int64, error) {
	if opt.Trigger == "" {
		opt.Trigger = "cli"
	}
	var worker *string
	if opt.WorkerID != "" {
		worker = &opt.WorkerID
	}
	var runID int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO strata.ingest_runs (layer_id, trigger, allow_deletes, worker_id)
			VALUES ($1, $2, $3, $4) RETURNING id`,
			layerID, opt.Trigger, opt.AllowDeletes, worker).Scan(&runID); err != nil {
			return err
		}
		_, err := client.InsertTx(ctx, tx, IngestLayerArgs{LayerID: layerID, RunID: runID}, nil)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("start ingest of layer %d: %w", layerID, err)
	}
	return runID, nil
}

// RunProgress is the state of one ingest run.
type RunProgress struct {
	RunID      int64
	Status     schema.RunStatus
	Error      string
	Queued     int
	OK         int
	Failed     int
	Skipped    int
	New        int
	Changed    int
	Unchanged  int
	Deleted    int
	Renamed    int
	StartedAt  time.Time
	FinishedAt *time.Time
}

// Done reports whether the run has finished, well or not.
func (p RunProgress) Done() bool { return p.Status.Finished() }

// Progress reads the counters of an ingest run.
func Progress(ctx context.Context, q pgxQuerier, runID int64) (RunProgress, error) {
	p := RunProgress{RunID: runID}
	var errText *string
	err := q.QueryRow(ctx, `
		SELECT r.status, r.error, r.started_at, r.finished_at,
			count(*) FILTER (WHERE f.status = 'queued'),
			count(*) FILTER (WHERE f.status = 'ok' AND f.action IN ('new', 'changed')),
			count(*) FILTER (WHERE f.status = 'failed'),
			count(*) FILTER (WHERE f.status = 'skipped'),
			count(*) FILTER (WHERE f.action = 'new'),
			count(*) FILTER (WHERE f.action = 'changed'),
			count(*) FILTER (WHERE f.action = 'unchanged'),
			count(*) FILTER (WHERE f.action = 'deleted'),
			count(*) FILTER (WHERE f.action = 'renamed')
		FROM strata.ingest_runs r LEFT JOIN strata.ingest_files f ON f.run_id = r.id
		WHERE r.id = $1
		GROUP BY r.id`, runID).Scan(&p.Status, &errText, &p.StartedAt, &p.FinishedAt,
		&p.Queued, &p.OK, &p.Failed, &p.Skipped, &p.New, &p.Changed, &p.Unchanged, &p.Deleted, &p.Renamed)
	if err != nil {
		return p, fmt.Errorf("read progress of run %d: %w", runID, err)
	}
	if errText != nil {
		p.Error = *errText
	}
	return p, nil
}

// FileReport is what a run decided about one file and how it ended.
type FileReport struct {
	Path     string
	Action   schema.FileAction
	Status   schema.FileStatus
	Error    string
	Warnings []string
	Chunks   int
}

// RunFiles lists the files of a run whose action or status is worth telling:
// everything but unchanged files, unless all is true.
func RunFiles(ctx context.Context, q pgxQuerier, runID int64, all bool) ([]FileReport, error) {
	rows, err := q.Query(ctx, `
		SELECT path, action, status, coalesce(error, ''), warnings, chunks
		FROM strata.ingest_files
		WHERE run_id = $1 AND ($2 OR action <> 'unchanged' OR status <> 'ok')
		ORDER BY path`, runID, all)
	if err != nil {
		return nil, fmt.Errorf("list files of run %d: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (FileReport, error) {
		var f FileReport
		err := r.Scan(&f.Path, &f.Action, &f.Status, &f.Error, &f.Warnings, &f.Chunks)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("list files of run %d: %w", runID, err)
	}
	return out, nil
}

type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// LayerModel returns the model the layer is embedded with: its own, or def
// (the configured model) when it has none.
func (l Layer) LayerModel(def string) string {
	if l.EmbeddingModel != "" {
		return l.EmbeddingModel
	}
	return def
}

// SetLayerModel records the model the layer is to be embedded with.
func SetLayerModel(ctx context.Context, pool *pgxpool.Pool, layerID int64, model string) error {
	if _, err := pool.Exec(ctx, `UPDATE strata.layers SET embedding_model = $2, updated_at = now() WHERE id = $1`, layerID, model); err != nil {
		return fmt.Errorf("set the embedding model of layer %d to %s: %w", layerID, model, err)
	}
	return nil
}
