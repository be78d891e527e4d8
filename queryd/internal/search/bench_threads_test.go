package search

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/uselite"
	"github.com/stratakb/stratakb/internal/testenv"
)

// asModel embeds queries with the real model but names its vectors as
// another model's, so that the real model's query vectors search the
// benchmark layer's stored vectors: what this measures is the cost of
// embedding the query and of the HNSW search, not retrieval quality.
type asModel struct {
	embed.Embedder
	info embed.ModelInfo
}

func (a asModel) Model() embed.ModelInfo { return a.info }

// BenchmarkSearchModelThreads runs hybrid searches (the vector channel on,
// the query embedded by the real USE-lite model, cache off) over the SciFact
// layer from 8 clients at once, for several ONNX Runtime thread settings:
// "spin" is the setting queryd had before (worker threads busy-wait, one
// per CPU), "default" queryd's setting now. It reports 8-client queries/s and this process's CPU
// milliseconds per query (the search's Go code and the model; PostgreSQL's
// CPU is not counted, but it runs on the same cores).
func BenchmarkSearchModelThreads(b *testing.B) {
	cfg := uselite.DefaultConfig(testenv.VarDir(b))
	testenv.Require(b, cfg.LibraryPath, "the ONNX Runtime library (make setup)")
	testenv.Require(b, cfg.ModelDir, "the USE-lite model (make setup)")
	env := setupBench(b)
	cpus := runtime.NumCPU()
	cases := []struct {
		name    string
		threads int
		spin    bool
	}{
		{fmt.Sprintf("spin/threads=%d", cpus), cpus, true},
		{"default/threads=1", 1, false}, // queryd's default
		{"threads=2", 2, false},
	}
	layers := []string{env.layer}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cfg.IntraOpThreads, cfg.Spin = c.threads, c.spin
			m, err := uselite.Load(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			s := NewWithOptions(env.store, Options{Embedder: asModel{embed.Adapt(m), env.emb.Model()}, KeywordSlots: 1})
			ctx := context.Background()
			n := 0
			var wall time.Duration
			cpu := testenv.ProcessCPU()
			for b.Loop() {
				var next atomic.Int64
				var wg sync.WaitGroup
				t0 := time.Now()
				for range 8 {
					wg.Go(func() {
						for {
							i := int(next.Add(1) - 1)
							if i >= len(env.queries) {
								return
							}
							resp, err := s.Search(ctx, Request{Query: env.queries[i], Layers: layers, TopK: 10})
							if err != nil {
								b.Error(err)
								return
							}
							if resp.Degraded {
								b.Errorf("search degraded: %s", resp.DegradedReason)
								return
							}
						}
					})
				}
				wg.Wait()
				wall += time.Since(t0)
				n += len(env.queries)
			}
			b.ReportMetric(float64(n)/wall.Seconds(), "queries/s")
			b.ReportMetric(1000*(testenv.ProcessCPU()-cpu).Seconds()/float64(n), "cpu-ms/query")
			b.ReportMetric(0, "ns/op")
		})
	}
}
