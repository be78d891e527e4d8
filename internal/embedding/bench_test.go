package embedding

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/chunker"
	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/schema"
)

// handbookChunks returns n chunks of the shared staff handbook as ingest
// makes them at the default chunk size (800 bytes).
func handbookChunks(b *testing.B, n int) []string {
	dir := filepath.Join(testenv.SharedDir(b), "corpora", "handbook-markdown")
	testenv.Require(b, dir, "the handbook corpus")
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		doc := &schema.ParsedDoc{Text: string(data)}
		for _, c := range chunker.Chunk(doc, nil, chunker.Options{}) {
			if len(c.Text) >= 400 { // full-size chunks, not a heading's stub
				out = append(out, c.Text)
			}
			if len(out) == n {
				return out
			}
		}
	}
	b.Fatalf("the handbook gives %d chunks, want %d", len(out), n)
	return nil
}

// benchModels are the local models to compare: USE-lite and every catalogue
// model that `make setup` (or STRATA_MODELS) installed.
func benchModels(b *testing.B) []string {
	v := testenv.VarDir(b)
	var names []string
	for _, name := range append([]string{embed.USELiteModel}, catalogNames()...) {
		if _, err := os.Stat(filepath.Join(v, "models", name)); err == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		testenv.Missing(b, "no local model under var/models (make setup)")
	}
	return names
}

func catalogNames() []string {
	var out []string
	for _, e := range embed.Catalog() {
		out = append(out, e.Name)
	}
	return out
}

// BenchmarkLocalModels compares the local models as the daemons run them:
// chunks/s embedding 64 handbook chunks of about 800 bytes (ingestd's
// threads, one per CPU), the median time of one 10-word query (queryd's one
// thread), and the memory the model added to the process (VmRSS after
// loading it and embedding the chunks once, less before; a model loaded
// earlier in the same process keeps its memory, so each model is run in
// its own process by scripts/bench.sh's BENCH filter when that matters).
func BenchmarkLocalModels(b *testing.B) {
	chunks := handbookChunks(b, 64)
	for _, name := range benchModels(b) {
		b.Run(name, func(b *testing.B) {
			rssBefore := vmRSS(b)
			ingest := loadBench(b, name, 0)
			ctx := context.Background()
			p := ingest.(interface {
				EmbedPassages(context.Context, []string) ([][]float32, error)
			})
			if _, err := p.EmbedPassages(ctx, chunks); err != nil {
				b.Fatal(err)
			}
			rss := vmRSS(b) - rssBefore
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.EmbedPassages(ctx, chunks); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(len(chunks))*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
			query := loadBench(b, name, 1)
			var qs []time.Duration
			for range 20 {
				began := time.Now()
				if _, err := query.Embed(ctx, []string{"How many unused leave days can be carried over to next year?"}); err != nil {
					b.Fatal(err)
				}
				qs = append(qs, time.Since(began))
			}
			sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
			b.ReportMetric(float64(qs[len(qs)/2].Microseconds())/1000, "query-ms")
			b.ReportMetric(float64(rss)/(1<<20), "model-MiB")
		})
	}
}

func loadBench(b *testing.B, name string, threads int) embed.Embedder {
	v := testenv.VarDir(b)
	cfg := embed.DefaultConfig()
	cfg.ModelName, cfg.ModelDir = name, filepath.Join(v, "models", name)
	cfg.LibraryPath = filepath.Join(v, "lib", "libonnxruntime.so.1")
	cfg.IntraOpThreads = threads
	e, err := Load(cfg, nil)
	if err != nil {
		b.Fatalf("load %s: %v", name, err)
	}
	b.Cleanup(func() { _ = embed.Close(e) })
	return e
}

// vmRSS is the process's resident memory in bytes (Linux).
func vmRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
