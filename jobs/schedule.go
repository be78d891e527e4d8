package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/schema"
)

// ReingestAllArgs asks for an ingest run of every layer: the nightly
// re-ingest that INGEST_SCHEDULE sets up.
type ReingestAllArgs struct{}

// Kind is the River job kind.
func (ReingestAllArgs) Kind() string { return "reingest_all" }

// ReingestAllWorker runs ReingestAllArgs jobs.
type ReingestAllWorker struct {
	river.WorkerDefaults[ReingestAllArgs]
	pool   *pgxpool.Pool
	logger *slog.Logger
}

// Work starts one run per layer, skipping layers pushed from elsewhere and
// layers whose last run is still going. A layer whose folder this host
// cannot reach (a path on the CI runner that pushed it, an unmounted share)
// gets a failed run that says so and one warning in the log, and nothing of
// it is deleted.
func (w *ReingestAllWorker) Work(ctx context.Context, _ *river.Job[ReingestAllArgs]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	logger := w.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	layers, err := ListLayers(ctx, w.pool)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	for _, l := range layers {
		if l.Pushed {
			continue
		}
		busy, err := w.busy(ctx, l)
		if err != nil {
			return err
		}
		if busy {
			continue
		}
		if why := unreachable(l.Root); why != "" {
			msg := fmt.Sprintf("folder %s of layer %s is not reachable from host %s (%s); nothing was changed. "+
				"If the layer is pushed from elsewhere (a CI runner), mark it with 'ingestd add DIR --layer %s --pushed' and the schedule skips it",
				l.Root, l.Name, host, why, l.Name)
			if _, err := w.pool.Exec(ctx, `INSERT INTO strata.ingest_runs (layer_id, trigger, status, error, finished_at)
				VALUES ($1, 'schedule', $3, $2, now())`, l.ID, msg, schema.RunFailed); err != nil {
				return fmt.Errorf("record run of layer %s: %w", l.Name, err)
			}
			logger.Warn("scheduled re-ingest: layer folder not reachable", "layer", l.Name, "folder", l.Root,
				"host", host, "reason", why)
			continue
		}
		if _, err := StartIngestWith(ctx, w.pool, client, l.ID,
			RunOptions{Trigger: "schedule", AllowDeletes: l.ScheduleAllowDeletes}); err != nil {
			return err
		}
	}
	return nil
}

// busy reports whether an earlier run of the layer is still going: started
// in the last day, not finished, and with jobs left to run (a run whose
// process died keeps its jobs, which a live worker takes over; a run left
// with no job at all will never finish and does not hold the layer up).
func (w *ReingestAllWorker) busy(ctx context.Context, l Layer) (bool, error) {
	rows, err := w.pool.Query(ctx, `SELECT id FROM strata.ingest_runs
		WHERE layer_id = $1 AND status = ANY($2) AND started_at > now() - interval '1 day'`,
		l.ID, []schema.RunStatus{schema.RunWalking, schema.RunRunning})
	if err != nil {
		return false, fmt.Errorf("check runs of layer %s: %w", l.Name, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return false, fmt.Errorf("check runs of layer %s: %w", l.Name, err)
	}
	for _, id := range ids {
		lv, err := Liveness(ctx, w.pool, id)
		if err != nil {
			return false, err
		}
		if lv.Waiting+lv.Running+lv.Orphaned > 0 {
			return true, nil
		}
	}
	return false, nil
}

// unreachable says why a layer's folder cannot be walked from this host, or
// "" when it can.
func unreachable(root string) string {
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such folder"
	case err != nil:
		return err.Error()
	case !st.IsDir():
		return "not a folder"
	}
	return ""
}

// Schedule is when the scheduled re-ingest runs: every Interval, or daily at
// a UTC time of day.
type Schedule struct {
	Interval time.Duration // every Interval, when set
	Daily    time.Duration // else: offset into the UTC day
}

// ParseSchedule reads INGEST_SCHEDULE: a Go duration ("6h", "30m") for a
// fixed interval, or "daily HH:MM" (also just "HH:MM") for once a day at
// that UTC time.
func ParseSchedule(s string) (Schedule, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < time.Minute {
			return Schedule{}, fmt.Errorf("INGEST_SCHEDULE: %q is shorter than a minute", s)
		}
		return Schedule{Interval: d}, nil
	}
	hm := strings.TrimSpace(strings.TrimPrefix(s, "daily"))
	h, m, ok := strings.Cut(hm, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return Schedule{}, fmt.Errorf(`INGEST_SCHEDULE: %q is neither a duration ("6h") nor "daily HH:MM" (UTC)`, s)
	}
	return Schedule{Daily: time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute}, nil
}

// Next implements river.PeriodicSchedule.
func (s Schedule) Next(now time.Time) time.Time {
	if s.Interval > 0 {
		return now.Add(s.Interval)
	}
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	next := day.Add(s.Daily)
	if !next.After(now) {
		next = day.AddDate(0, 0, 1).Add(s.Daily)
	}
	return next
}

// String describes the schedule for logs.
func (s Schedule) String() string {
	if s.Interval > 0 {
		return "every " + s.Interval.String()
	}
	return fmt.Sprintf("daily at %02d:%02d UTC", int(s.Daily.Hours()), int(s.Daily.Minutes())%60)
}

func (s Schedule) periodicJob() *river.PeriodicJob {
	return river.NewPeriodicJob(s, func() (river.JobArgs, *river.InsertOpts) {
		return ReingestAllArgs{}, nil
	}, &river.PeriodicJobOpts{ID: "reingest_all"})
}
