package scale

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/replicatest"
	"github.com/stratakb/stratakb/internal/rrproxy"
)

// BenchmarkMultiQuerydReplica is BenchmarkMultiQueryd with the searches
// read from a hot standby (issue 30, item 2): one database, a standby of
// it (internal/replicatest), three `queryd serve` reading the corpus from
// the primary and three reading it from the standby
// (QUERYD_READ_DATABASE_URL), all six started at once. For 1, 2 and 3
// processes it measures the primary-reading ones, then the
// standby-reading ones, one after the other, so that both see the same
// machine. 8 clients, each search a new query; MULTIQUERYD_BENCH_SECONDS
// sets how long each load runs (default 5). On one machine the standby
// shares its cores with the primary: this shows what reading from a standby
// costs and that the searches work through it, not the capacity a standby
// on its own machine adds.
func BenchmarkMultiQuerydReplica(b *testing.B) {
	primary, standby := mqReplicaClusters(b, 3)
	dur := 5 * time.Second
	if s, err := strconv.Atoi(os.Getenv("MULTIQUERYD_BENCH_SECONDS")); err == nil && s > 0 {
		dur = time.Duration(s) * time.Second
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: mqClients}}
	for _, be := range append(append([]string{}, primary.backends...), standby.backends...) {
		mqCall(b, client, be, "/v1/search", map[string]any{"query": mqNextQuery(), "layers": []string{mqLayer}})
	}
	b.Logf("%d CPUs; %d clients; %s per load", runtime.NumCPU(), mqClients, dur)
	for n := 1; n <= len(primary.backends); n++ {
		for _, side := range []struct {
			name string
			c    *mqCluster
		}{{"primary", primary}, {"standby", standby}} {
			b.Run(fmt.Sprintf("read=%s/procs=%d", side.name, n), func(b *testing.B) {
				p := rrproxy.New(b, false, side.c.backends[:n]...)
				var r mqLoadResult
				var busy, cpuPer float64
				for b.Loop() {
					cpu0, q0 := mqCPUTimes(), mqProcCPU(side.c.pids[:n])
					r = mqLoad(b, client, p.URL, dur)
					busy = mqBusy(cpu0, mqCPUTimes())
					cpuPer = (mqProcCPU(side.c.pids[:n]) - q0).Seconds() * 1000 / float64(max(r.n, 1))
				}
				b.ReportMetric(r.perSecond, "searches/s")
				b.ReportMetric(r.p50, "p50_ms")
				b.ReportMetric(r.p95, "p95_ms")
				b.ReportMetric(busy, "cpu_busy_%")
				b.ReportMetric(cpuPer, "queryd_cpu_ms/search")
			})
		}
	}
}

// mqReplicaClusters builds the binaries, ingests the handbook into a new
// database, makes a hot standby and waits until it has replayed the ingest,
// then starts n queryd processes reading from the primary and n reading
// from the standby; all share one session key and one receipt key, and all
// keep their ledger on the primary. Everything is stopped and removed when
// tb ends, failed or not.
func mqReplicaClusters(tb testing.TB, n int) (primary, standby *mqCluster) {
	tb.Helper()
	var sb *replicatest.Standby
	d := mqDeploy(tb, func() { sb = replicatest.Start(tb) })
	r := sb.WaitReplayed(tb, 60*time.Second)
	tb.Logf("standby replayed the ingest: %d bytes behind, caught up in %s", r.BehindBytes, r.Wait.Round(time.Millisecond))
	querydURL := dbtest.QuerydURL(tb, d.ownerURL)
	primary, standby = &mqCluster{root: d.root}, &mqCluster{root: d.root}
	d.start(tb, primary, n, "queryd reading from the primary", d.env(tb, querydURL))
	d.start(tb, standby, n, "queryd reading from the standby", d.env(tb, querydURL, "QUERYD_READ_DATABASE_URL="+sb.URL(tb, querydURL)))
	primary.waitHealthy(tb)
	standby.waitHealthy(tb)
	return primary, standby
}
