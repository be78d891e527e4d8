package jobs_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
)

// localModel loads the local model from var/, failing under CI when it is
// missing.
func localModel(b *testing.B) embed.Embedder {
	b.Helper()
	cfg := embed.DefaultConfig()
	cfg.ModelDir = filepath.Join(testenv.VarDir(b), "models", "use-lite")
	cfg.LibraryPath = filepath.Join(testenv.VarDir(b), "lib", "libonnxruntime.so.1")
	testenv.Require(b, cfg.ModelDir, "the local model (make setup)")
	e, err := embedding.Load(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = embed.Close(e) })
	return e
}

// BenchmarkEmbedPipeline compares the embed_chunks job (read pending chunks,
// embed, store vectors) with the bare model on the same chunk texts and
// batch size. The target is a pipeline within 10 % of the bare model.
func BenchmarkEmbedPipeline(b *testing.B) {
	shared := testenv.SharedDir(b)
	emb := localModel(b)
	vec := jobs.SingleVector(emb)
	model := vec.Model().Name

	// A folder of real documents: the first Go blog articles, about 250 chunks.
	dir := b.TempDir()
	entries, err := os.ReadDir(filepath.Join(shared, "corpora", "go-blog-markdown"))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if n == 25 || filepath.Ext(e.Name()) != ".md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(shared, "corpora", "go-blog-markdown", e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			b.Fatal(err)
		}
		n++
	}
	pool, _ := dbtest.NewPool(b)
	ingesttest.Ingest(b, pool, jobs.Layer{Name: "blog", Root: dir}, ingesttest.Options{})
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT DISTINCT ON (content_hash) text FROM strata.chunks ORDER BY content_hash`)
	if err != nil {
		b.Fatal(err)
	}
	texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	l, err := jobs.GetLayer(ctx, pool, "blog")
	if err != nil {
		b.Fatal(err)
	}
	const batch = 64
	client, err := jobs.NewClient(pool, jobs.ClientConfig{Workers: 1, Vectorizer: vec, EmbedBatch: batch,
		Pipeline: jobs.StandardPipeline(parsers.Options{NoOCR: true})})
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	var bare, pipe []float64
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for i := 0; i < len(texts); i += batch {
			if _, err := vec.EmbedChunks(ctx, texts[i:min(i+batch, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
		bare = append(bare, float64(len(texts))/time.Since(start).Seconds())

		if _, err := pool.Exec(ctx, `DELETE FROM strata.embeddings WHERE model = $1`, model); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if _, err := client.Insert(ctx, jobs.EmbedArgs{LayerID: l.ID, Model: model}, nil); err != nil {
			b.Fatal(err)
		}
		for {
			pending, err := jobs.PendingVectors(ctx, pool, model)
			if err != nil {
				b.Fatal(err)
			}
			if pending[l.ID] == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		pipe = append(pipe, float64(len(texts))/time.Since(start).Seconds())
	}
	sort.Float64s(bare)
	sort.Float64s(pipe)
	mb, mp := bare[len(bare)/2], pipe[len(pipe)/2]
	b.ReportMetric(float64(len(texts)), "chunks")
	b.ReportMetric(mb, "bare_chunks/s")
	b.ReportMetric(mp, "pipeline_chunks/s")
	b.ReportMetric(mp/mb, "pipeline/bare")
}
