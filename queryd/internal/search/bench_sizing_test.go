package search

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/jobs"
)

// BenchmarkSizing measures how the corpus grows (issue 30, item 4): it loads
// the synthetic chunks of BenchmarkSearchMillion (STRATA_BENCH_CHUNKS,
// default 1,000,000; STRATA_BENCH_VECTORS), then reports the time of each
// step of the load (bulk insert, GIN index, BM25 statistics and postings,
// random 384-dimensional vectors, HNSW build, VACUUM ANALYZE), the size of
// every relation of the strata schema, and the latency of one client
// searching (each channel, the queries one after the other, cache off). It
// logs the machine's load average, sampled every 10 s, since the machine
// may be shared. Like the million-chunk benchmark it runs only with
// STRATA_BENCH_MILLION=1:
//
//	STRATA_BENCH_MILLION=1 STRATA_BENCH_CHUNKS=100000 bash scripts/test.sh -run '^$' \
//	    -bench BenchmarkSizing -benchtime 1x -timeout 120m ./queryd/internal/search/
func BenchmarkSizing(b *testing.B) {
	if os.Getenv("STRATA_BENCH_MILLION") != "1" {
		b.Skip("set STRATA_BENCH_MILLION=1 to run the sizing benchmark")
	}
	load := startLoadSampler()
	defer func() { b.Logf("load average (1 min) during the run: %s", load.stop()) }()
	env, st := setupMillion(b)
	b.ReportMetric(float64(st.chunks), "chunks")
	for _, m := range []struct {
		name string
		d    time.Duration
	}{{"load", st.load}, {"gin", st.gin}, {"postings", st.postings}, {"vectors", st.vecs}, {"hnsw", st.hnsw}, {"vacuum", st.vacuum}} {
		b.ReportMetric(m.d.Seconds(), m.name+"_s")
	}
	reportSizes(b, env, st.url)
	runs, _ := millionChannels(b, env)
	for _, name := range []string{"lexical", "vector", "hybrid"} {
		lat := timeQueries(b, env.queries, runs[name])
		b.ReportMetric(ms(percentile(lat, 0.5)), name+"_p50_ms")
		b.ReportMetric(ms(percentile(lat, 0.95)), name+"_p95_ms")
	}
	b.ReportMetric(0, "ns/op")
}

// reportSizes logs every relation of the strata schema of 1 MB or more:
// tables with their own size (heap and TOAST), their indexes' and the total,
// then each index; and reports the main ones as metrics in MB.
func reportSizes(b *testing.B, env *benchEnv, url string) {
	ctx := context.Background()
	pool, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close(ctx)
	rows, err := pool.Query(ctx, `
		SELECT c.relname, c.relkind::text, coalesce(t.relname, ''),
			CASE c.relkind WHEN 'r' THEN pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END,
			CASE c.relkind WHEN 'r' THEN pg_indexes_size(c.oid) ELSE 0 END,
			pg_total_relation_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
		WHERE n.nspname = 'strata' AND c.relkind IN ('r', 'i') AND pg_total_relation_size(c.oid) >= 1048576
		ORDER BY c.relkind DESC, pg_total_relation_size(c.oid) DESC`)
	if err != nil {
		b.Fatal(err)
	}
	hnsw := jobs.VectorIndexName(env.emb.Model().Name)
	want := map[string]string{"chunks": "chunks", "postings": "postings", "embeddings": "embeddings",
		"documents": "documents", "chunks_tsv": "gin", "postings_impact": "postings_impact", hnsw: "hnsw"}
	var out strings.Builder
	mb := func(n int64) float64 { return float64(n) / (1 << 20) }
	for rows.Next() {
		var name, kind, table string
		var own, idx, total int64
		if err := rows.Scan(&name, &kind, &table, &own, &idx, &total); err != nil {
			b.Fatal(err)
		}
		if kind == "r" {
			out.WriteString("\n  table " + name + ": " + mbText(own) + " + indexes " + mbText(idx) + " = " + mbText(total))
		} else {
			out.WriteString("\n  index " + name + " on " + table + ": " + mbText(own))
		}
		if m, ok := want[name]; ok {
			b.ReportMetric(mb(total), m+"_MB")
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	var db int64
	if err := pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&db); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(mb(db), "database_MB")
	b.Logf("relations of 1 MB or more (own size, indexes, total):%s", out.String())
}

func mbText(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB" }

// loadSampler reads the 1-minute load average every 10 s.
type loadSampler struct {
	done    chan struct{}
	wg      sync.WaitGroup
	samples []float64
}

func startLoadSampler() *loadSampler {
	s := &loadSampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			s.read()
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *loadSampler) read() {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return
	}
	if v, err := strconv.ParseFloat(f[0], 64); err == nil {
		s.samples = append(s.samples, v)
	}
}

// stop ends the sampling and says the lowest, mean and highest value.
func (s *loadSampler) stop() string {
	close(s.done)
	s.wg.Wait()
	if len(s.samples) == 0 {
		return "not readable (/proc/loadavg)"
	}
	lo, hi, sum := s.samples[0], s.samples[0], 0.0
	for _, v := range s.samples {
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	return "min " + f(lo) + ", mean " + f(sum/float64(len(s.samples))) + ", max " + f(hi) +
		" (" + strconv.Itoa(len(s.samples)) + " samples, " + strconv.Itoa(runtime.NumCPU()) + " cores)"
}
