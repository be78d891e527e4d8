package uselite

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed/internal/embedtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// benchSentences returns n short sentences (8–12 pieces each), all distinct.
func benchSentences(n int) []string {
	subjects := []string{"The operator", "A contractor", "The auditor", "Our supplier", "The tenant", "Each party"}
	verbs := []string{"must notify", "may terminate", "shall pay", "will review", "cannot assign", "should inspect"}
	objects := []string{"the agreement", "the invoice", "the premises", "the safety report", "the licence", "the backup logs"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %s %s within %d days.", subjects[i%6], verbs[(i/6)%6], objects[(i/36)%6], i%90+1)
	}
	return out
}

// benchPassages returns n passages of at least MaxPieces pieces each.
func benchPassages(m *Model, n int) []string {
	sents := benchSentences(n * 16)
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := 0; len(m.Tokenize(b.String())) < MaxPieces; j++ {
			b.WriteString(sents[(i*16+j)%len(sents)])
			b.WriteByte(' ')
		}
		out[i] = b.String()
	}
	return out
}

// withBatch returns a view of m that batches differently (same session).
func withBatch(m *Model, size int) *Model {
	return &Model{tok: m.tok, batchSize: size, session: m.session}
}

// BenchmarkEmbedSentences reports short sentences per second for several
// batch sizes (the default batch size is chosen from these figures).
func BenchmarkEmbedSentences(b *testing.B) {
	m := testModel(b)
	texts := benchSentences(256)
	for _, bs := range []int{1, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("batch=%d", bs), func(b *testing.B) {
			mb := withBatch(m, bs)
			embedtest.Throughput(b, "sentences", len(texts), func() error {
				_, err := mb.Embed(context.Background(), texts)
				return err
			})
		})
	}
}

// BenchmarkEmbedPassages reports 128-piece passages per second at the
// default batching (at most 16 such passages per call, see batchPieceBudget),
// and the process's peak resident memory.
func BenchmarkEmbedPassages(b *testing.B) {
	m := testModel(b)
	texts := benchPassages(m, 64)
	embedtest.Throughput(b, "passages", len(texts), func() error {
		_, err := m.Embed(context.Background(), texts)
		return err
	})
	if rss := peakRSSMiB(); rss > 0 {
		b.ReportMetric(rss, "peak-RSS-MiB")
	}
}

// BenchmarkEmbedPassagesChunks reports chunks of about 1,000 characters per
// second through EmbedPassages (several 64-piece windows each).
func BenchmarkEmbedPassagesChunks(b *testing.B) {
	m := testModel(b)
	sents := benchSentences(64 * 24)
	texts := make([]string, 64)
	pieces := 0
	for i := range texts {
		var sb strings.Builder
		for j := 0; sb.Len() < 1000; j++ {
			sb.WriteString(sents[(i*24+j)%len(sents)])
			sb.WriteByte(' ')
		}
		texts[i] = sb.String()
		pieces += len(m.Tokenize(texts[i]))
	}
	embedtest.Throughput(b, "chunks", len(texts), func() error {
		_, err := m.EmbedPassages(context.Background(), texts)
		return err
	})
	b.ReportMetric(float64(pieces)/float64(len(texts)), "pieces/chunk")
}

// peakRSSMiB is the process's peak resident set size (Linux), or 0.
func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}

// BenchmarkQueryThreads embeds one short query per call from 8 goroutines
// at once, as queryd does under 8 clients, for several ONNX Runtime thread
// settings: "spin" is the setting before spinning was turned off (worker
// threads busy-wait, one per CPU). It reports queries/s and the process's
// CPU milliseconds per query; queryd's default of 1 thread is chosen from
// these figures and BenchmarkSearchModelThreads's.
func BenchmarkQueryThreads(b *testing.B) {
	testModel(b) // skips without the model files
	cfg := DefaultConfig(varDir(b))
	cpus := runtime.NumCPU()
	cases := []struct {
		name    string
		threads int
		spin    bool
	}{
		{fmt.Sprintf("spin/threads=%d", cpus), cpus, true},
		{"threads=1", 1, false}, // queryd's default
		{"threads=2", 2, false},
	}
	queries := benchSentences(512)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cfg.IntraOpThreads, cfg.Spin = c.threads, c.spin
			m, err := Load(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			var next atomic.Int64
			n := 0
			cpu := testenv.ProcessCPU().Seconds()
			start := time.Now()
			for b.Loop() {
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						for {
							i := int(next.Add(1) - 1)
							if i >= len(queries) {
								return
							}
							if _, err := m.Embed(context.Background(), []string{queries[i]}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				n += len(queries)
				next.Store(0)
			}
			wall := time.Since(start).Seconds()
			b.ReportMetric(float64(n)/wall, "queries/s")
			b.ReportMetric(1000*(testenv.ProcessCPU().Seconds()-cpu)/float64(n), "cpu-ms/query")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkPassageThreads embeds 64 chunks of about 1,000 characters through
// EmbedPassages, one call at a time as an ingest's embed job does, for 1 and
// 2 ONNX Runtime threads: chunks/s and CPU milliseconds per chunk.
func BenchmarkPassageThreads(b *testing.B) {
	testModel(b) // skips without the model files
	cfg := DefaultConfig(varDir(b))
	sents := benchSentences(64 * 24)
	texts := make([]string, 64)
	for i := range texts {
		var sb strings.Builder
		for j := 0; sb.Len() < 1000; j++ {
			sb.WriteString(sents[(i*24+j)%len(sents)])
			sb.WriteByte(' ')
		}
		texts[i] = sb.String()
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			cfg.IntraOpThreads = threads
			m, err := Load(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			n := 0
			cpu := testenv.ProcessCPU().Seconds()
			for b.Loop() {
				if _, err := m.EmbedPassages(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
				n += len(texts)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(1000*(testenv.ProcessCPU().Seconds()-cpu)/float64(n), "cpu-ms/chunk")
		})
	}
}
