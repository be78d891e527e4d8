package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/testenv"
)

// BenchmarkCLIModelLoad is what an in-process `queryd search` or `queryd
// ask` spends on the query model (issue 31, item 3): loading
// EMBEDDING_MODEL (default bge-small-en-v1.5: the tokenizer and the ONNX
// session) together with the first query's vector, then a second query's
// vector alone. load-ms is the difference. ONNX Runtime's environment is
// set up once per process, so the first run also pays that; a command line
// pays it on every call (scripts/cli-bench.sh measures the whole call).
func BenchmarkCLIModelLoad(b *testing.B) {
	name := os.Getenv("EMBEDDING_MODEL")
	if name == "" {
		name = embed.DefaultLocalModel
	}
	vars := testenv.VarDir(b)
	cfg := embed.DefaultConfig()
	cfg.ModelName = name
	cfg.ModelDir = filepath.Join(vars, "models", name)
	cfg.LibraryPath = filepath.Join(vars, "lib", "libonnxruntime.so.1")
	if _, err := os.Stat(cfg.ModelDir); err != nil {
		testenv.Missing(b, "no "+cfg.ModelDir+" (make setup)")
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var first, second time.Duration
	for i := 0; i < b.N; i++ {
		q := newQueryEmbedder(cfg, log)
		t0 := time.Now()
		if _, err := q.emb.Embed(ctx, []string{"How many unused leave days can be carried over?"}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := q.emb.Embed(ctx, []string{"Who approves a flight?"}); err != nil {
			b.Fatal(err)
		}
		first += t1.Sub(t0)
		second += time.Since(t1)
		q.close()
	}
	n := float64(b.N)
	b.ReportMetric(float64((first-second).Microseconds())/1000/n, "load-ms")
	b.ReportMetric(float64(second.Microseconds())/1000/n, "embed-ms")
}
