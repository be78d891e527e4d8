package jobs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/stratakb/stratakb/schema/migrate"
)

// RiverSchema is the PostgreSQL schema River's tables live in.
const RiverSchema = "river"

// Migrate applies River's migrations and then the product's, idempotently.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+RiverSchema); err != nil {
		return fmt.Errorf("create schema %s: %w", RiverSchema, err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: RiverSchema})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := migrate.Migrate(ctx, pool); err != nil {
		return err
	}
	if _, err := BackfillIdentity(ctx, pool); err != nil {
		return fmt.Errorf("documents' identity (migration 0023): %w", err)
	}
	return nil
}

// ClientConfig configures the River client of ingestd.
type ClientConfig struct {
	Workers  int // concurrent jobs of the ingest queue (and EmbedWorkers of the embed queue); 0 makes an insert-only client
	Logger   *slog.Logger
	Pipeline Pipeline
	// Vectorizer embeds chunks; nil when the model could not be loaded, in
	// which case VectorizerErr says why and chunks stay pending.
	Vectorizer    Vectorizer
	VectorizerErr error
	// Models, when set, gives the vectorizer of another model than
	// Vectorizer's, by the name stored with its vectors: a layer keeps the
	// model it was embedded with when the configured one changes.
	Models func(model string) (Vectorizer, error)
	// EmbedBatch is the number of chunks embedded per batch (default 32).
	EmbedBatch int
	// Schedule, when set, re-ingests every layer on it (River periodic job;
	// one leader among several ingestd processes runs it).
	Schedule *Schedule
	// ID is the River client ID: Presence.ClientID for a client that works
	// jobs, so the jobs it runs can be traced to it. Empty lets River choose.
	ID string
	// FetchCooldown is the least time between two fetches of available
	// jobs; 0 means DefaultFetchCooldown. Benchmarks set River's own
	// default (100ms) to compare.
	FetchCooldown time.Duration
	// Stopping, when closed, makes the client's embedding jobs hand their
	// work back after the batch in flight (River snoozes them, counting no
	// attempt; another process takes them at once) instead of embedding a
	// whole layer before River's soft stop can return. `add --wait` closes
	// it when its own layers are done, so that a large layer's embedding it
	// picked up meanwhile does not hold it. Nil never fires.
	Stopping <-chan struct{}
}

// Job timeouts and River's rescue. River makes a job that has been running
// longer than RescueStuckJobsAfter available again (or discards it), so it
// must exceed every job's timeout, or a slow job that is still working would
// run twice. It is River's fallback only: the jobs of a process that died
// are taken over within seconds through its Presence (presence.go).
const (
	walkTimeout  = 15 * time.Minute // IngestLayerWorker: one walk of a folder
	embedTimeout = 10 * time.Minute // EmbedWorker: works embedBudget, then snoozes
	embedBudget  = 4 * time.Minute  // EmbedWorker: batches started within this time
	// RescueStuckJobsAfter is the longest job timeout (ingest_file's 15
	// minutes, the walk's 15) and a minute to spare.
	RescueStuckJobsAfter = 16 * time.Minute
)

// DefaultFetchCooldown is how soon after one fetch River may fetch again
// (River's default is 100ms). A fetch takes only as many jobs as there are
// free workers, and a file job usually takes 10-50 ms, so with River's
// default each worker sat idle most of the time: 2 workers ingested 19.6
// files/s whatever the load. docs/ingest.md has the measurement.
const DefaultFetchCooldown = 5 * time.Millisecond

// DefaultFetchPollInterval is how often River looks for jobs when no
// insert notification came (River's default is 1s): a job queued by another
// process, or one whose retry time has come, starts within this.
const DefaultFetchPollInterval = 200 * time.Millisecond

// DefaultWorkers is the default number of jobs worked at once for a
// machine with cpus CPUs: two per CPU, at least 4. A file job spends much of
// its time waiting for PostgreSQL (storing chunks, postings and sections),
// so more workers than CPUs pay off; on 2 CPUs 4 workers ingested more files
// per second than 2, and 8 or 16 no more than 4 (docs/ingest.md).
func DefaultWorkers(cpus int) int { return max(4, 2*cpus) }

// NewClient builds a River client with StrataKB's workers registered. With
// Workers == 0 the client can only insert jobs.
func NewClient(pool *pgxpool.Pool, cfg ClientConfig) (*river.Client[pgx.Tx], error) {
	if cfg.EmbedBatch <= 0 {
		cfg.EmbedBatch = 32
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	model := ""
	if cfg.Vectorizer != nil {
		model = cfg.Vectorizer.Model().Name
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &IngestLayerWorker{pool: pool, pipeline: cfg.Pipeline})
	river.AddWorker(workers, &IngestFileWorker{pool: pool, pipeline: cfg.Pipeline, logger: cfg.Logger, model: model})
	river.AddWorker(workers, &ReingestAllWorker{pool: pool, logger: cfg.Logger})
	river.AddWorker(workers, &EmbedWorker{pool: pool, vec: cfg.Vectorizer, loadErr: cfg.VectorizerErr, models: cfg.Models,
		batchSize: cfg.EmbedBatch, logger: cfg.Logger, stopping: cfg.Stopping})
	river.AddWorker(workers, &PromoteWorker{pool: pool, logger: cfg.Logger})
	rc := &river.Config{
		Schema:            RiverSchema,
		Workers:           workers,
		Logger:            cfg.Logger,
		FetchCooldown:     cmp.Or(cfg.FetchCooldown, DefaultFetchCooldown),
		FetchPollInterval: max(DefaultFetchPollInterval, cfg.FetchCooldown),
	}
	if cfg.Workers > 0 {
		// Separate queues, so that embedding never holds the workers of
		// walks and parses (queue.go).
		rc.Queues = map[string]river.QueueConfig{
			QueueIngest: {MaxWorkers: cfg.Workers},
			QueueEmbed:  {MaxWorkers: EmbedWorkers(cfg.Workers)},
		}
		rc.PeriodicJobs = []*river.PeriodicJob{promoterPeriodicJob()}
		if cfg.Schedule != nil {
			rc.PeriodicJobs = append(rc.PeriodicJobs, cfg.Schedule.periodicJob())
		}
	}
	// Crash recovery: see RescueStuckJobsAfter and Presence.
	rc.RescueStuckJobsAfter = RescueStuckJobsAfter
	rc.ID = cfg.ID

	client, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}
