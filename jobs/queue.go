package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// River queues and priorities. Walking and parsing run in one queue and
// embedding in another, each with its own workers, so a layer's embedding
// (minutes to hours for a large folder) never holds the workers a walk or a
// parse needs. Within the ingest queue, priorities keep a small run from
// waiting behind a large one: River fetches by priority first, then by
// time. Within the embed queue, each layer embeds through one job at a time
// (the layer's lock in EmbedWorker); a job that finds its layer busy hands
// over to the layer's one queued sweep and frees its worker at once, so
// another layer's jobs never wait behind that layer's backlog.
const (
	// QueueIngest runs walks (ingest_layer), parses (ingest_file), the
	// schedule's re-ingest and the promoter. It is River's default queue,
	// so jobs queued by an older ingestd are still worked.
	QueueIngest = river.QueueDefault
	// QueueEmbed runs embed_chunks jobs.
	QueueEmbed = "embed"

	// priorityWalk: a walk starts before any parse queued earlier.
	priorityWalk = 1
	// priorityHead: the first headStart files of every run.
	priorityHead = 2
	// priorityBacklog: the rest of a large run.
	priorityBacklog = 3

	// headStart is how many files of each run go ahead of every run's
	// backlog: a layer of up to this many files is parsed as soon as a
	// worker is free, whatever other layers have queued.
	headStart = 64

	// busyLayerSnooze is how long a sweep whose layer is being embedded by
	// another job waits before it looks again.
	busyLayerSnooze = 250 * time.Millisecond
)

// filePriority is the River priority of the parse job of the n-th file
// (from 0) that a run queues.
func filePriority(n int) int {
	if n < headStart {
		return priorityHead
	}
	return priorityBacklog
}

// EmbedWorkers is the number of embedding jobs worked at once by a client
// that works workers jobs of the ingest queue. Each layer embeds through one
// job at a time, so these serve several layers side by side. The pool
// ingestd opens (2*workers+4 connections) has room for them: a job holds at
// most one connection while it waits for a second (an embed job no longer
// waits for its layer's lock), so workers+EmbedWorkers jobs, at most
// 1.5*workers+2, and River's own connections cannot take them all.
func EmbedWorkers(workers int) int { return max(2, workers/2) }

// RunWait is how long a run's jobs waited in the queue for a worker: from
// the run's walk being queued to its start, and from the end of the walk to
// the start of its first parse. It is the time other layers' jobs (or no
// worker running) held the run up, which the summary reports apart from
// the time the run's own work took. It is 0 when River no longer keeps the
// jobs.
func RunWait(ctx context.Context, q pgxQuerier, runID int64) (time.Duration, error) {
	var walk, parse float64
	err := q.QueryRow(ctx, `
		WITH walk AS (
			SELECT created_at, attempted_at FROM `+RiverSchema+`.river_job
			WHERE kind = 'ingest_layer' AND (args->>'run_id')::bigint = $1 ORDER BY id DESC LIMIT 1
		), files AS (
			SELECT min(attempted_at) AS first FROM `+RiverSchema+`.river_job
			WHERE kind = 'ingest_file' AND (args->>'run_id')::bigint = $1
		)
		SELECT coalesce((SELECT extract(epoch FROM attempted_at - created_at) FROM walk), 0)::float8,
			coalesce((SELECT extract(epoch FROM f.first - r.walked_at) FROM files f, strata.ingest_runs r
				WHERE r.id = $1), 0)::float8`, runID).Scan(&walk, &parse)
	if err != nil {
		return 0, fmt.Errorf("read the queue wait of run %d: %w", runID, err)
	}
	d := time.Duration(max(walk, 0)*float64(time.Second)) + time.Duration(max(parse, 0)*float64(time.Second))
	return d, nil
}
