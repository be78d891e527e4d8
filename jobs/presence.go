package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/schema"
)

// Crash recovery. River notices a job whose process died only when the job
// has been running longer than RescueStuckJobsAfter, which must exceed the
// longest job timeout (minutes). So every ingestd process that works jobs
// registers itself in strata.ingest_workers, holds an advisory lock on a
// connection of its own and refreshes a heartbeat; River's client ID is the
// worker's, so river_job.attempted_by names the process running a job. When
// a process dies its connection and lock go with it, and the next sweep of
// any live process (every few seconds, and at its start) makes the dead
// process's running jobs available again: a restart takes the work over
// within seconds instead of River's rescue minutes later.

// heartbeatEvery is how often a live worker refreshes its heartbeat and
// sweeps for the jobs of dead ones. The ingest_worker_state view counts a
// worker gone as soon as its lock is released, and also when its heartbeat
// is older than two minutes even with the lock held (a host cut off from the
// network keeps its connection for a while).
const heartbeatEvery = 3 * time.Second

// reconnectQuiet is how long a worker that lost its lock connection and took
// the lock again does not sweep: when the database restarts every worker
// loses its lock at once, and the first to reconnect must not take the
// others, which are reconnecting too, for dead.
const reconnectQuiet = 10 * time.Second

// Metadata keys set on a job taken over from a dead worker.
const (
	metaTakenFrom = "strata_taken_over_from"
	metaGoneSince = "strata_worker_gone_since"
)

// Presence is this process as a worker, as the other processes see it.
type Presence struct {
	// ClientID is the River client ID to run the workers under.
	ClientID string
	id       int64
	pool     *pgxpool.Pool
	logger   *slog.Logger

	mu          sync.Mutex
	conn        *pgx.Conn // holds the lock
	reconnected time.Time // when the lock was last taken again
	cancel      context.CancelFunc
	done        chan struct{}
}

// Register records this process as a worker, takes its lock, takes over the
// jobs of workers that are gone, and keeps the heartbeat going until Close.
func Register(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (*Presence, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	pid := os.Getpid()
	name := filepath.Base(os.Args[0])
	id := fmt.Sprintf("%s_%s_%d_%s", clipID(name, 20), clipID(host, 40), pid, hex.EncodeToString(b[:]))
	p := &Presence{ClientID: id, pool: pool, logger: logger}
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("register worker: %w", err)
	}
	// The row becomes visible with the lock already held: no other process
	// can see it unlocked and take it for dead.
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO strata.ingest_workers (client_id, host, pid) VALUES ($1, $2, $3)
			RETURNING id`, id, host, pid).Scan(&p.id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey(workerLockSpace, p.id))
		return err
	})
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("register worker: %w", err)
	}
	p.conn = conn
	if _, err := TakeOverOrphans(ctx, pool, logger); err != nil {
		logger.Warn("take over jobs of stopped workers", "error", err)
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel, p.done = cancel, make(chan struct{})
	go p.loop(lctx)
	return p, nil
}

func clipID(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, s)
	if len(s) > n {
		s = s[:n]
	}
	return s
}

func (p *Presence) loop(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := p.beat(ctx); err != nil && ctx.Err() == nil {
			p.logger.Warn("worker heartbeat", "error", err)
		}
		p.mu.Lock()
		quiet := time.Since(p.reconnected) < reconnectQuiet
		p.mu.Unlock()
		if quiet {
			continue
		}
		if _, err := TakeOverOrphans(ctx, p.pool, p.logger); err != nil && ctx.Err() == nil {
			p.logger.Warn("take over jobs of stopped workers", "error", err)
		}
	}
}

// beat refreshes the heartbeat; when the lock's connection was lost (the
// database restarted), it reconnects and takes the lock again at once.
func (p *Presence) beat(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	for try := 0; try < 2; try++ {
		if p.conn == nil || p.conn.IsClosed() {
			conn, cerr := pgx.ConnectConfig(bctx, p.pool.Config().ConnConfig.Copy())
			if cerr != nil {
				return fmt.Errorf("reconnect: %w", cerr)
			}
			if _, cerr := conn.Exec(bctx, `SELECT pg_advisory_lock($1)`, lockKey(workerLockSpace, p.id)); cerr != nil {
				conn.Close(bctx)
				return fmt.Errorf("take the worker lock again: %w", cerr)
			}
			p.conn, p.reconnected = conn, time.Now()
		}
		if _, err = p.conn.Exec(bctx, `UPDATE strata.ingest_workers SET heartbeat_at = now() WHERE id = $1`, p.id); err == nil {
			return nil
		}
		p.conn.Close(bctx)
		p.conn = nil
	}
	return err
}

// Close marks the worker stopped and releases its lock. Call it after the
// River client has stopped.
func (p *Presence) Close(ctx context.Context) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// A last sweep: jobs of dead workers that this process did not need
	// are left available for the next one, not "running" for nobody.
	if _, err := TakeOverOrphans(ctx, p.pool, p.logger); err != nil {
		p.logger.Warn("take over jobs of stopped workers", "error", err)
	}
	if _, err := p.pool.Exec(ctx, `UPDATE strata.ingest_workers SET stopped_at = now() WHERE id = $1`, p.id); err != nil {
		p.logger.Warn("mark worker stopped", "error", err)
	}
	// Rows of workers stopped or gone for a week tell nothing any more.
	_, _ = p.pool.Exec(ctx, `DELETE FROM strata.ingest_workers
		WHERE coalesce(stopped_at, heartbeat_at) < now() - interval '7 days'`)
	if p.conn != nil {
		p.conn.Close(ctx)
		p.conn = nil
	}
}

// abandon drops the lock's connection without marking the worker stopped,
// as a crash would, and waits until the server has let the lock go; for
// tests.
func (p *Presence) abandon() error {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		p.conn.Close(context.Background())
		p.conn = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var alive bool
		if err := p.pool.QueryRow(ctx, `SELECT alive FROM strata.ingest_worker_state WHERE id = $1`, p.id).Scan(&alive); err != nil {
			return err
		}
		if !alive {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TakenOver is a job that was running on a worker that is gone.
type TakenOver struct {
	JobID int64
	Kind  string
	State string // available (runs again) or discarded (out of attempts)
}

// TakeOverOrphans makes the running jobs of workers that are gone available
// again, as River's rescuer would, without waiting RescueStuckJobsAfter. A
// job that has used its last attempt is discarded instead, and what it was
// doing is recorded as failed: a file that kills the worker every time it is
// parsed ends as a failed file, not an endless loop.
func TakeOverOrphans(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) ([]TakenOver, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rows, err := pool.Query(ctx, `
		WITH orphan AS (
			SELECT j.id, j.attempt, j.max_attempts, ws.client_id, ws.last_seen
			FROM `+RiverSchema+`.river_job j
			JOIN strata.ingest_worker_state ws ON ws.client_id = j.attempted_by[cardinality(j.attempted_by)]
			WHERE j.state = 'running' AND NOT ws.alive
			FOR UPDATE OF j SKIP LOCKED
		)
		UPDATE `+RiverSchema+`.river_job j SET
			state = (CASE WHEN o.attempt < o.max_attempts THEN 'available' ELSE 'discarded' END)::`+RiverSchema+`.river_job_state,
			finalized_at = CASE WHEN o.attempt < o.max_attempts THEN NULL ELSE now() END,
			errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', o.attempt, 'trace', '',
				'error', 'worker ' || o.client_id || ' stopped (killed or crashed) while running this job')),
			metadata = j.metadata || jsonb_build_object('`+metaTakenFrom+`', o.client_id, '`+metaGoneSince+`', o.last_seen)
		FROM orphan o
		WHERE j.id = o.id AND j.state = 'running'
		RETURNING j.id, j.kind, j.state::text, j.args, j.attempt`)
	if err != nil {
		return nil, fmt.Errorf("take over jobs of stopped workers: %w", err)
	}
	type row struct {
		TakenOver
		args    []byte
		attempt int
	}
	got, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (row, error) {
		var r row
		err := cr.Scan(&r.JobID, &r.Kind, &r.State, &r.args, &r.attempt)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("take over jobs of stopped workers: %w", err)
	}
	out := make([]TakenOver, 0, len(got))
	for _, r := range got {
		out = append(out, r.TakenOver)
		logger.Info("took over a job of a stopped worker", "job_id", r.JobID, "kind", r.Kind, "state", r.State)
		if r.State != "discarded" {
			continue
		}
		if err := recordDiscarded(ctx, pool, r.Kind, r.args, r.attempt); err != nil {
			return out, err
		}
	}
	return out, nil
}

// recordDiscarded records the end of a job that killed its worker on every
// attempt: the file failed, or the walk failed the run.
func recordDiscarded(ctx context.Context, pool *pgxpool.Pool, kind string, args []byte, attempts int) error {
	switch kind {
	case IngestFileArgs{}.Kind():
		var a IngestFileArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return fmt.Errorf("read job args: %w", err)
		}
		msg := fmt.Sprintf("the worker stopped (killed or crashed) while processing this file, on each of %d attempts", attempts)
		layer, err := getLayerByID(ctx, pool, a.LayerID)
		if errors.Is(err, ErrLayerNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		// Stat and hash so an unchanged file is not tried again by every run.
		var facts fileFacts
		full := filepath.Join(layer.Root, filepath.FromSlash(a.Path))
		if fi, err := os.Stat(full); err == nil {
			if sum, err := fileSHA256(full); err == nil {
				facts = fileFacts{size: fi.Size(), mtime: fi.ModTime(), sha: sum}
			}
		}
		if err := recordFailure(ctx, pool, a.LayerID, a.Path, facts, msg); err != nil {
			return fmt.Errorf("record failure of %s: %w", a.Path, err)
		}
		if _, err := pool.Exec(ctx, `UPDATE strata.ingest_files SET status = $4, error = $3, updated_at = now()
			WHERE run_id = $1 AND path = $2`, a.RunID, a.Path, msg, schema.FileFailed); err != nil {
			return fmt.Errorf("record outcome of %s: %w", a.Path, err)
		}
		return closeRunIfDone(ctx, pool, a.RunID)
	case IngestLayerArgs{}.Kind():
		var a IngestLayerArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return fmt.Errorf("read job args: %w", err)
		}
		_, err := pool.Exec(ctx, `UPDATE strata.ingest_runs SET status = $3, error = $2, finished_at = now()
			WHERE id = $1 AND status = ANY($4)`, a.RunID,
			fmt.Sprintf("the worker stopped (killed or crashed) while walking the folder, on each of %d attempts", attempts),
			schema.RunFailed, []schema.RunStatus{schema.RunWalking, schema.RunRunning})
		if err != nil {
			return fmt.Errorf("fail run %d: %w", a.RunID, err)
		}
	}
	return nil
}

// RunLiveness is what the queue says about a run that has not finished.
type RunLiveness struct {
	Waiting  int // jobs of the run waiting for a worker
	Running  int // jobs running on a live worker
	Orphaned int // jobs running on a worker that is gone
	// WorkerGone: the process that waits for the run (--wait), or one
	// running its jobs, is gone; GoneSince is when it was last seen.
	WorkerGone  bool
	GoneSince   time.Time
	LiveWorkers int // worker processes alive in all
}

// Liveness reads the state of a run's jobs and of the workers that run them.
func Liveness(ctx context.Context, q pgxQuerier, runID int64) (RunLiveness, error) {
	var l RunLiveness
	var orphanSeen, starterSeen *time.Time
	var starterAlive *bool
	err := q.QueryRow(ctx, `
		WITH j AS (
			SELECT j.state, ws.alive, ws.last_seen
			FROM `+RiverSchema+`.river_job j
			LEFT JOIN strata.ingest_worker_state ws ON ws.client_id = j.attempted_by[cardinality(j.attempted_by)]
			WHERE j.kind IN ('ingest_layer', 'ingest_file') AND (j.args->>'run_id')::bigint = $1
			AND j.state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
		)
		SELECT
			(SELECT count(*) FROM j WHERE state <> 'running'),
			(SELECT count(*) FROM j WHERE state = 'running' AND alive IS DISTINCT FROM false),
			(SELECT count(*) FROM j WHERE state = 'running' AND alive = false),
			(SELECT max(last_seen) FROM j WHERE state = 'running' AND alive = false),
			(SELECT ws.alive FROM strata.ingest_runs r JOIN strata.ingest_worker_state ws ON ws.client_id = r.worker_id WHERE r.id = $1),
			(SELECT ws.last_seen FROM strata.ingest_runs r JOIN strata.ingest_worker_state ws ON ws.client_id = r.worker_id WHERE r.id = $1),
			(SELECT count(*) FROM strata.ingest_worker_state WHERE alive)`, runID).Scan(
		&l.Waiting, &l.Running, &l.Orphaned, &orphanSeen, &starterAlive, &starterSeen, &l.LiveWorkers)
	if err != nil {
		return l, fmt.Errorf("read the jobs of run %d: %w", runID, err)
	}
	if l.Orphaned > 0 && orphanSeen != nil {
		l.WorkerGone, l.GoneSince = true, *orphanSeen
	} else if starterAlive != nil && !*starterAlive && starterSeen != nil {
		l.WorkerGone, l.GoneSince = true, *starterSeen
	}
	return l, nil
}

// Describe says in a few words how an unfinished run stands: "running",
// "queued", or "interrupted" with why. It is what ingestd status shows
// instead of the stored status, which a dead process cannot update.
func (l RunLiveness) Describe(status string) (state, detail string) {
	left := l.Waiting + l.Orphaned
	since := l.GoneSince.UTC().Format("2006-01-02 15:04:05 UTC")
	switch {
	case l.Running > 0:
		return status, ""
	case l.Orphaned > 0 && l.LiveWorkers > 0:
		return "interrupted", fmt.Sprintf("its worker is gone since %s; a live worker is taking over its %d jobs", since, left)
	case l.Orphaned > 0 || (l.WorkerGone && l.LiveWorkers == 0):
		return "interrupted", fmt.Sprintf("its worker is gone since %s; %d jobs left, which 'ingestd serve' or a rerun with --wait takes over", since, left)
	case l.Waiting > 0 && l.LiveWorkers == 0:
		return "queued", fmt.Sprintf("%d jobs wait for a worker: 'ingestd serve' works them", l.Waiting)
	case l.Waiting > 0:
		return "queued", ""
	default:
		return "interrupted", "no job is left to finish it; 'ingestd ingest --layer NAME' starts a new run"
	}
}

// QueueAhead is what a run's walk waits for before it starts.
type QueueAhead struct {
	WalkState string // the walk job's River state; "" when it has none
	Running   int    // jobs running on live workers
	Ahead     int    // jobs waiting that River fetches before the walk
	TakenOver int    // of Running and Ahead: jobs taken over from dead workers
	GoneSince time.Time
}

// Ahead reads what the run's walk job waits behind in the ingest queue
// (QueueIngest): embedding jobs have workers of their own and hold no walk
// up.
func Ahead(ctx context.Context, q pgxQuerier, runID int64) (QueueAhead, error) {
	var a QueueAhead
	var state *string
	var since *time.Time
	err := q.QueryRow(ctx, `
		WITH walk AS (
			SELECT id, priority, scheduled_at, state::text AS state FROM `+RiverSchema+`.river_job
			WHERE kind = 'ingest_layer' AND (args->>'run_id')::bigint = $1 ORDER BY id DESC LIMIT 1
		), j AS (
			SELECT o.state, o.metadata, (o.priority, o.scheduled_at, o.id) < (w.priority, w.scheduled_at, w.id) AS before
			FROM walk w JOIN `+RiverSchema+`.river_job o ON o.queue = '`+QueueIngest+`' AND o.id <> w.id
				AND o.state IN ('available', 'running')
			LEFT JOIN strata.ingest_worker_state ws ON ws.client_id = o.attempted_by[cardinality(o.attempted_by)]
			WHERE o.state = 'available' OR ws.alive IS DISTINCT FROM false
		)
		SELECT (SELECT state FROM walk),
			(SELECT count(*) FROM j WHERE state = 'running'),
			(SELECT count(*) FROM j WHERE state = 'available' AND before),
			(SELECT count(*) FROM j WHERE (state = 'running' OR before) AND metadata ? '`+metaTakenFrom+`'),
			(SELECT max((metadata->>'`+metaGoneSince+`')::timestamptz) FROM j WHERE (state = 'running' OR before))`,
		runID).Scan(&state, &a.Running, &a.Ahead, &a.TakenOver, &since)
	if err != nil {
		return a, fmt.Errorf("read the queue ahead of run %d: %w", runID, err)
	}
	if state != nil {
		a.WalkState = *state
	}
	if since != nil {
		a.GoneSince = *since
	}
	return a, nil
}

// OrphanedEmbedJobs counts, per layer, embedding jobs running on a worker
// that is gone, and when the latest such worker was last seen.
func OrphanedEmbedJobs(ctx context.Context, q pgxQuerier) (map[int64]time.Time, error) {
	rows, err := q.Query(ctx, `
		SELECT (j.args->>'layer_id')::bigint, max(ws.last_seen)
		FROM `+RiverSchema+`.river_job j
		JOIN strata.ingest_worker_state ws ON ws.client_id = j.attempted_by[cardinality(j.attempted_by)]
		WHERE j.kind = 'embed_chunks' AND j.state = 'running' AND NOT ws.alive
		GROUP BY 1`)
	if err != nil {
		return nil, fmt.Errorf("read embedding jobs: %w", err)
	}
	out := map[int64]time.Time{}
	var id int64
	var t time.Time
	if _, err := pgx.ForEachRow(rows, []any{&id, &t}, func() error { out[id] = t; return nil }); err != nil {
		return nil, fmt.Errorf("read embedding jobs: %w", err)
	}
	return out, nil
}
