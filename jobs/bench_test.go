package jobs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
)

// BenchmarkReingestUnchanged measures a re-ingest of the Markdown and text
// corpora (1,000+ files) when nothing changed: a stat per file and no parse.
func BenchmarkReingestUnchanged(b *testing.B) {
	shared := testenv.SharedDir(b)
	pool, _ := dbtest.NewPool(b)
	var layers []jobs.Layer
	files := 0
	for _, name := range []string{"go-blog-markdown", "python-peps"} {
		p := ingesttest.Ingest(b, pool, jobs.Layer{Name: name, Root: filepath.Join(shared, "corpora", name)},
			ingesttest.Options{Timeout: 20 * time.Minute})
		files += p.New
		l, err := jobs.GetLayer(context.Background(), pool, name)
		if err != nil {
			b.Fatal(err)
		}
		layers = append(layers, l)
	}
	ctx := context.Background()
	client, err := jobs.NewClient(pool, jobs.ClientConfig{Workers: 2, Pipeline: jobs.StandardPipeline(parsers.Options{NoOCR: true})})
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck
	var samples []float64
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for _, l := range layers {
			runID, err := jobs.StartIngest(ctx, pool, client, l.ID, "bench")
			if err != nil {
				b.Fatal(err)
			}
			for {
				p, err := jobs.Progress(ctx, pool, runID)
				if err != nil {
					b.Fatal(err)
				}
				if p.Done() {
					if p.New+p.Changed+p.Deleted+p.Renamed > 0 {
						b.Fatalf("re-ingest of unchanged %s touched files: %+v", l.Name, p)
					}
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		samples = append(samples, time.Since(start).Seconds())
	}
	sort.Float64s(samples)
	b.ReportMetric(samples[len(samples)/2], "median_s/reingest")
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkMarkdownPipeline measures parse + structure + chunk over the Go
// blog corpus (Markdown with front matter), in memory: MB/s of source.
func BenchmarkMarkdownPipeline(b *testing.B) {
	dir := filepath.Join(testenv.SharedDir(b), "corpora", "go-blog-markdown")
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	type file struct {
		path string
		data []byte
	}
	var files []file
	total := 0
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".md" {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, file{p, data})
		total += len(data)
	}
	p := jobs.StandardPipeline(parsers.Options{NoOCR: true})
	ctx := context.Background()
	chunks := 0
	b.SetBytes(int64(total))
	b.ResetTimer()
	for b.Loop() {
		chunks = 0
		for _, f := range files {
			doc, err := p.Parse(ctx, f.path, f.data, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			chunks += len(p.Chunk(doc, p.Structure(doc), 800))
		}
	}
	b.ReportMetric(float64(len(files)), "files")
	b.ReportMetric(float64(chunks), "chunks")
}

// BenchmarkIngestFiles measures parse-and-store throughput: a fresh layer
// over the Go blog corpus (339 files) per iteration, without an
// embedding model, reported as files/s. Each case gets a database of its
// own and a pool sized as ingestd sizes it (2 connections per worker + 4). "river-default" is River's own fetch cooldown (100ms) with the 2
// workers ingestd had before; the others use DefaultFetchCooldown with the
// given number of workers ("default" is DefaultWorkers for this machine).
func BenchmarkIngestFiles(b *testing.B) {
	root := filepath.Join(testenv.SharedDir(b), "corpora", "go-blog-markdown")
	testenv.Require(b, root, "the Go blog corpus")
	cases := []struct {
		name     string
		workers  int
		cooldown time.Duration
	}{
		{"river-default/workers=2", 2, 100 * time.Millisecond},
		{"workers=2", 2, 0},
		{fmt.Sprintf("default/workers=%d", jobs.DefaultWorkers(runtime.NumCPU())), jobs.DefaultWorkers(runtime.NumCPU()), 0},
		{"workers=8", 8, 0},
		{"workers=16", 16, 0},
	}
	run := 0
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// A database of its own: ingest slows as the tables grow, which
			// would favour the cases that run first.
			pcfg, err := pgxpool.ParseConfig(dbtest.NewDatabase(b))
			if err != nil {
				b.Fatal(err)
			}
			pcfg.MaxConns = int32(2*c.workers + 4) // as ingestd sizes its pool
			ctx := context.Background()
			pool, err := pgxpool.NewWithConfig(ctx, pcfg)
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			ingesttest.Migrate(b, pool)
			client, err := jobs.NewClient(pool, jobs.ClientConfig{Workers: c.workers, FetchCooldown: c.cooldown,
				Pipeline: jobs.StandardPipeline(parsers.Options{NoOCR: true})})
			if err != nil {
				b.Fatal(err)
			}
			if err := client.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer client.Stop(ctx) //nolint:errcheck
			files := 0
			var busy time.Duration
			for b.Loop() {
				run++
				l, err := jobs.UpsertLayer(ctx, pool, jobs.Layer{Name: fmt.Sprintf("bench-files-%d", run), Root: root,
					AnswerMode: "grounded", ChunkSize: 800})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				runID, err := jobs.StartIngest(ctx, pool, client, l.ID, "bench")
				if err != nil {
					b.Fatal(err)
				}
				for {
					p, err := jobs.Progress(ctx, pool, runID)
					if err != nil {
						b.Fatal(err)
					}
					if p.Done() {
						if p.New == 0 || p.Failed > 0 {
							b.Fatalf("ingest of %s: %+v", root, p)
						}
						files += p.New
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				busy += time.Since(start)
			}
			b.ReportMetric(float64(files)/busy.Seconds(), "files/s")
		})
	}
}
