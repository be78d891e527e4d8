package search

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// askStages are strata_ask's stages as ask.Options.OnStage names them.
var askStages = []string{"route", "rewrite", "search", "merge", "rerank", "pack"}

// stageTimes collects OnStage's reports; safe for concurrent use.
type stageTimes struct {
	mu sync.Mutex
	d  map[string][]time.Duration
}

func (s *stageTimes) add(stage string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.d == nil {
		s.d = map[string][]time.Duration{}
	}
	s.d[stage] = append(s.d[stage], d)
}

func (s *stageTimes) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = nil
}

// BenchmarkAsk reports strata_ask latency at SciFact scale with the offline
// reranker: p50, p95 and p99 over the 300 SciFact test questions per round
// (the layer named, top_k 10, the concise response, no rewrite provider, no
// interaction recorded), with one client and with 8 concurrent clients,
// and each stage's median and p95 with one client (ask.Options.OnStage).
//
// "bow" is setupBench's layer: abstracts loaded straight into the tables
// with 512-dimensional bag-of-words vectors, so the question's vector costs
// next to nothing. "uselite" is the SciFact evaluation's layer with the
// local model (USE-lite) embedding each question, as queryd does; it runs
// only with STRATA_EVAL=1 and STRATA_EVAL_DATABASE_URL naming a database
// that already holds it (`make eval` ingests it; ingesting here would take
// the benchmark's time).
//
// Each also runs extractive (mode extractive, "-extractive"): the same
// questions answered with the documents' own sentences, scored by the
// offline sentence scorer with the local model's cosine (USE-lite also on
// the bow layer, as queryd embeds sentences with its model), no receipt
// stored.
func BenchmarkAsk(b *testing.B) {
	b.Run("bow", func(b *testing.B) {
		env := setupBench(b)
		runAskBench(b, env.store, env.emb, nil, env.layer, env.queries)
	})
	b.Run("uselite", func(b *testing.B) {
		if os.Getenv("STRATA_EVAL") != "1" || os.Getenv("STRATA_EVAL_DATABASE_URL") == "" {
			b.Skip("set STRATA_EVAL=1 and STRATA_EVAL_DATABASE_URL to a database holding the SciFact evaluation layer")
		}
		e := setupEval(b)
		var qs []string
		for qid := range e.data.test {
			qs = append(qs, e.data.queries[qid])
		}
		sort.Strings(qs)
		runAskBench(b, e.store, e.emb, e.emb, evalLayer, qs)
	})
}

// runAskBench runs the questions grounded and extractive; sentEmb embeds
// the extractive sentences (nil: the local model, loaded when the
// extractive runs start).
func runAskBench(b *testing.B, st *store.Corpus, emb, sentEmb embed.Embedder, layer string, queries []string) {
	ctx := context.Background()
	stages := &stageTimes{}
	eng := retrieve.New(st, retrieve.Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots, DocEvidenceEverywhere: true})
	a := ask.New(ask.Options{Engine: eng, Docs: st, Reranker: ask.Offline{Model: lrank.Default}, OnStage: stages.add})
	mode := ""
	ask1 := func(q string) (time.Duration, error) {
		t0 := time.Now()
		resp, err := a.Ask(ctx, ask.Request{Question: q, Layers: []string{layer}, TopK: 10, Mode: mode})
		if err == nil && len(resp.Passages) == 0 {
			err = fmt.Errorf("no passages for %q", q)
		}
		return time.Since(t0), err
	}
	askQ := func(q string) time.Duration {
		d, err := ask1(q)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	for _, m := range []string{"", ask.ModeExtractive} {
		mode = m
		suffix := ""
		if m == ask.ModeExtractive {
			suffix = "-extractive"
			if sentEmb == nil {
				sentEmb = loadUSELite(b)
			}
			a = ask.New(ask.Options{Engine: eng, Docs: st, Reranker: ask.Offline{Model: lrank.Default}, OnStage: stages.add,
				Sentences: ask.OfflineSentences{Model: lrank.Default, Embedder: sentEmb}})
		}
		// A few questions first: the snapshot's per-version reads, the
		// first connections and the model's first runs are not what an
		// answer costs.
		for _, q := range queries[:min(20, len(queries))] {
			askQ(q)
		}
		b.Run("1-client"+suffix, func(b *testing.B) {
			stages.reset()
			var lat []time.Duration
			for b.Loop() {
				for _, q := range queries {
					lat = append(lat, askQ(q))
				}
			}
			b.ReportMetric(ms(percentile(lat, 0.5)), "p50_ms")
			b.ReportMetric(ms(percentile(lat, 0.95)), "p95_ms")
			b.ReportMetric(ms(percentile(lat, 0.99)), "p99_ms")
			stages.mu.Lock()
			for _, s := range askStages {
				b.ReportMetric(ms(percentile(stages.d[s], 0.5)), s+"_p50_ms")
				b.ReportMetric(ms(percentile(stages.d[s], 0.95)), s+"_p95_ms")
			}
			stages.mu.Unlock()
			b.ReportMetric(0, "ns/op")
		})
		b.Run("8-clients"+suffix, func(b *testing.B) {
			var lat []time.Duration
			var mu sync.Mutex
			var firstErr error
			var wall time.Duration
			n := 0
			for b.Loop() {
				work := make(chan string)
				var wg sync.WaitGroup
				t0 := time.Now()
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for q := range work {
							d, err := ask1(q)
							mu.Lock()
							lat = append(lat, d)
							if err != nil && firstErr == nil {
								firstErr = err
							}
							mu.Unlock()
						}
					}()
				}
				for _, q := range queries {
					work <- q
				}
				close(work)
				wg.Wait()
				wall += time.Since(t0)
				n += len(queries)
				if firstErr != nil {
					b.Fatal(firstErr)
				}
			}
			b.ReportMetric(ms(percentile(lat, 0.5)), "p50_ms")
			b.ReportMetric(ms(percentile(lat, 0.95)), "p95_ms")
			b.ReportMetric(ms(percentile(lat, 0.99)), "p99_ms")
			b.ReportMetric(float64(n)/wall.Seconds(), "answers/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
