package jobs

import (
	"context"
	"fmt"
	"time"
)

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
