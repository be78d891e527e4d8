package scale

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
)

// schedulePeriod is the schedule the processes share here. INGEST_SCHEDULE
// takes a minute at least, which would hold the test for minutes; the
// schedule is the same River periodic job at any period.
const schedulePeriod = 1500 * time.Millisecond

// worker is one ingestd's River side, as `ingestd serve` builds it: a pool
// of its own, a presence (jobs.Register) and a client with the workers,
// the promoter's periodic check and the schedule.
func worker(t *testing.T, url string, sched *jobs.Schedule) *river.Client[pgx.Tx] {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	pres, err := jobs.Register(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pres.Close(context.Background()) })
	client, err := jobs.NewClient(pool, jobs.ClientConfig{Workers: 2, ID: pres.ClientID, Schedule: sched,
		Pipeline: jobs.StandardPipeline(parsers.Options{NoOCR: true})})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = client.Stop(stop)
	})
	return client
}

// TestScheduleRunsOncePerPeriod: two ingestd workers with the same
// schedule on one database; the scheduled re-ingest runs once per period,
// not once per process: consecutive reingest_all jobs are a period apart,
// and each started one run of the layer (issue 30, item 3).
func TestScheduleRunsOncePerPeriod(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nThe valve is checked daily.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := jobs.UpsertLayer(ctx, pool, jobs.Layer{Name: "sched", Root: dir,
		AnswerMode: schema.DefaultAnswerMode, ChunkSize: schema.DefaultChunkSize}); err != nil {
		t.Fatal(err)
	}
	sched := &jobs.Schedule{Interval: schedulePeriod}
	began := time.Now()
	worker(t, url, sched)
	worker(t, url, sched)
	const watch = 7 * time.Second
	time.Sleep(watch)

	rows, err := pool.Query(ctx, `SELECT created_at FROM river.river_job WHERE kind = 'reingest_all' ORDER BY created_at`)
	if err != nil {
		t.Fatal(err)
	}
	times, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		t.Fatal(err)
	}
	var runs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.ingest_runs WHERE trigger = 'schedule'`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	t.Logf("two processes, schedule every %s, %s watched: %d scheduled jobs, %d scheduled runs", schedulePeriod, watch, len(times), runs)
	for i, at := range times {
		t.Logf("scheduled job %d at +%s", i, at.Sub(began).Round(time.Millisecond))
	}
	if len(times) < 2 || len(times) > int(watch/schedulePeriod)+1 {
		t.Errorf("%d scheduled jobs in %s at one per %s", len(times), watch, schedulePeriod)
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < schedulePeriod*8/10 {
			t.Errorf("scheduled jobs %d and %d only %s apart: the schedule ran more than once per period", i-1, i, gap)
		}
	}
	if runs < len(times)-1 || runs > len(times) {
		t.Errorf("%d scheduled runs of the one layer for %d scheduled jobs", runs, len(times))
	}
}

// TestPromoterRunsOncePerTrigger: two ingestd workers on one database;
// each time PromoteAfter new interactions make the promoter due, both
// processes' periodic checks ask for it, three times each, at once. It
// runs once per trigger: strata.promoter_runs gains one row each time.
func TestPromoterRunsOncePerTrigger(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	clients := []*river.Client[pgx.Tx]{worker(t, url, nil), worker(t, url, nil)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for trigger := 1; trigger <= 2; trigger++ {
		if _, err := pool.Exec(ctx, `INSERT INTO strata.interactions (caller, tool, question, layers, status)
			SELECT 'c' || g, 'strata_search', 'question ' || g, '{}', 'ok' FROM generate_series(1, $1) g`, jobs.PromoteAfter); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, c := range clients {
			for range 3 {
				wg.Go(func() {
					if _, err := c.Insert(ctx, jobs.PromoteArgs{}, nil); err != nil {
						t.Errorf("insert the promoter job: %v", err)
					}
				})
			}
		}
		wg.Wait()
		waitFor(t, 20*time.Second, "the promoter jobs worked", func() bool {
			var left int
			_ = pool.QueryRow(ctx, `SELECT count(*) FROM river.river_job WHERE kind = 'learning_promote'
				AND state NOT IN ('completed', 'discarded', 'cancelled')`).Scan(&left)
			return left == 0
		})
		var runs, jobsDone int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM strata.promoter_runs),
			(SELECT count(*) FROM river.river_job WHERE kind = 'learning_promote')`).Scan(&runs, &jobsDone); err != nil {
			t.Fatal(err)
		}
		t.Logf("trigger %d: 6 requests from 2 processes, %d promoter jobs, %d promoter runs in all", trigger, jobsDone, runs)
		if runs != trigger {
			t.Errorf("after trigger %d: %d promoter runs, want %d", trigger, runs, trigger)
		}
	}
}
