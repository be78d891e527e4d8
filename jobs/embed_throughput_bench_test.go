package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
)

// BenchmarkEmbedThroughput compares the default model's bare throughput with
// its throughput inside ingest (issue 31: the goal is a ratio of 0.9 or
// more). The chunks are SciFact abstracts written as one Markdown file each
// and cut at the default chunk size (about 800 bytes), as a user's folder
// would give them; STRATA_BENCH_EMBED_DOCS sets how many abstracts (default
// 120, about 320 chunks).
//
//   - bare: the model alone on the layer's distinct chunk texts, in batches
//     of ingestd's batch size, with ingestd's threads (one per CPU);
//   - sweep: the same chunks through one embed_chunks job of the layer
//     (read pending chunks, embed, store vectors, build the HNSW index);
//   - ingest: the folder ingested into a fresh database with the model, as
//     `ingestd add --wait` does it (walk, parse, store, each document's
//     embed job), timed from the start of the run to the last vector.
//
// Each path reports chunks/s and its ratio to bare; sweep and ingest also
// say where their time went: the share of their wall time spent in the
// model (model_busy), the model's own rate there (model_chunks/s: under the
// bare rate when other work takes CPU from it), the time before the first
// model call (lead_s: the River job starting; in ingest, the first files
// parsed and stored) and after the last one (tail_s: storing the last
// vectors, the HNSW index, the job's completion), the longest wait between
// two model calls (max_gap_s) and the mean batch.
// Each figure is the median of the b.N passes.
func BenchmarkEmbedThroughput(b *testing.B) {
	dir := b.TempDir()
	writeSciFactDocs(b, dir, benchDocs(b))
	emb := defaultModel(b)
	batch := embed.DefaultLocalBatchSize
	workers := jobs.DefaultWorkers(runtime.NumCPU())

	// The chunks, as ingest cuts them, in a database of their own.
	pool, _ := dbtest.NewPool(b)
	ingesttest.Ingest(b, pool, jobs.Layer{Name: "scifact", Root: dir}, ingesttest.Options{})
	texts := chunkTexts(b, pool)
	bareRate(b, jobs.SingleVector(emb), texts[:min(batch, len(texts))], batch) // warm the model up

	var bare []float64
	var sweep, ingest []pass
	b.ResetTimer()
	for b.Loop() {
		bare = append(bare, bareRate(b, jobs.SingleVector(emb), texts, batch))
		tv := &timedVectorizer{v: jobs.SingleVector(emb)}
		sweep = append(sweep, tv.pass(len(texts), sweepTime(b, pool, tv, batch, workers)))
		tv = &timedVectorizer{v: jobs.SingleVector(emb)}
		ingest = append(ingest, tv.pass(len(texts), ingestTime(b, dir, tv, batch, workers)))
	}
	b.StopTimer()
	mb := median(bare)
	b.ReportMetric(float64(len(texts)), "chunks")
	b.ReportMetric(mb, "bare_chunks/s")
	for _, p := range []struct {
		name   string
		passes []pass
	}{{"sweep", sweep}, {"ingest", ingest}} {
		rate := medianOf(p.passes, func(x pass) float64 { return x.rate })
		b.ReportMetric(rate, p.name+"_chunks/s")
		b.ReportMetric(rate/mb, p.name+"/bare")
		b.ReportMetric(medianOf(p.passes, func(x pass) float64 { return x.busy }), p.name+"_model_busy")
		b.ReportMetric(medianOf(p.passes, func(x pass) float64 { return x.modelRate }), p.name+"_model_chunks/s")
		b.ReportMetric(medianOf(p.passes, func(x pass) float64 { return x.lead }), p.name+"_lead_s")
		b.ReportMetric(medianOf(p.passes, func(x pass) float64 { return x.tail }), p.name+"_tail_s")
		b.ReportMetric(medianOf(p.passes, func(x pass) float64 { return x.gap }), p.name+"_max_gap_s")
		b.ReportMetric(medianOf(p.passes, func(x pass) float64 { return x.batch }), p.name+"_mean_batch")
	}
}

// pass is one sweep's or ingest's figures (see BenchmarkEmbedThroughput).
type pass struct{ rate, busy, modelRate, lead, tail, gap, batch float64 }

func medianOf(ps []pass, f func(pass) float64) float64 {
	v := make([]float64, len(ps))
	for i, p := range ps {
		v[i] = f(p)
	}
	return median(v)
}

// benchDocs is how many SciFact abstracts the benchmark ingests.
func benchDocs(b *testing.B) int {
	n := 120
	if s := os.Getenv("STRATA_BENCH_EMBED_DOCS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("STRATA_BENCH_EMBED_DOCS=%q: want a positive number", s)
		}
		n = v
	}
	return n
}

// writeSciFactDocs writes the first n SciFact abstracts into dir as
// d<id>.md = "# title\n\ntext\n".
func writeSciFactDocs(b *testing.B, dir string, n int) {
	path := filepath.Join(testenv.SharedDir(b), "bench", "scifact", "corpus.jsonl")
	testenv.Require(b, path, "the SciFact corpus")
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			b.Fatalf("%s line %d: %v", path, i+1, err)
		}
		body := fmt.Sprintf("# %s\n\n%s\n", d.Title, d.Text)
		if err := os.WriteFile(filepath.Join(dir, "d"+d.ID+".md"), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
}

// defaultModel loads ingestd's default local model with ingestd's threads.
func defaultModel(b *testing.B) embed.Embedder {
	v := testenv.VarDir(b)
	cfg := embed.DefaultConfig()
	cfg.ModelName = embed.DefaultLocalModel
	cfg.ModelDir = filepath.Join(v, "models", cfg.ModelName)
	cfg.LibraryPath = filepath.Join(v, "lib", "libonnxruntime.so.1")
	testenv.Require(b, cfg.ModelDir, "the default model (make setup)")
	e, err := embedding.Load(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = embed.Close(e) })
	return e
}

func chunkTexts(b *testing.B, pool *pgxpool.Pool) []string {
	rows, err := pool.Query(context.Background(),
		`SELECT DISTINCT ON (content_hash) text FROM strata.chunks ORDER BY content_hash`)
	if err != nil {
		b.Fatal(err)
	}
	texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	return texts
}

func bareRate(b *testing.B, vec jobs.Vectorizer, texts []string, batch int) float64 {
	start := time.Now()
	for i := 0; i < len(texts); i += batch {
		if _, err := vec.EmbedChunks(context.Background(), texts[i:min(i+batch, len(texts))]); err != nil {
			b.Fatal(err)
		}
	}
	return float64(len(texts)) / time.Since(start).Seconds()
}

// sweepTime drops the layer's vectors and HNSW index and times one sweep
// from its insertion until no chunk lacks a vector and the job is done.
func sweepTime(b *testing.B, pool *pgxpool.Pool, tv *timedVectorizer, batch, workers int) time.Duration {
	ctx := context.Background()
	mi := tv.Model()
	if _, err := pool.Exec(ctx, `DELETE FROM strata.embeddings WHERE model = $1`, mi.Name); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DROP INDEX IF EXISTS strata.`+pgx.Identifier{jobs.VectorIndexName(mi.Name)}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	l, err := jobs.GetLayer(ctx, pool, "scifact")
	if err != nil {
		b.Fatal(err)
	}
	client := startClient(b, pool, tv, batch, workers)
	defer client.Stop(ctx) //nolint:errcheck
	tv.begin()
	if _, err := client.Insert(ctx, jobs.EmbedArgs{LayerID: l.ID, Model: mi.Name}, nil); err != nil {
		b.Fatal(err)
	}
	waitVectors(b, pool, client, mi.Name, l.ID)
	return tv.since()
}

// ingestTime ingests dir into a fresh database with tv, from the start of
// the run until its last vector is stored and no embed job is left.
func ingestTime(b *testing.B, dir string, tv *timedVectorizer, batch, workers int) time.Duration {
	ctx := context.Background()
	pool, _ := dbtest.NewPool(b)
	defer pool.Close()
	ingesttest.Migrate(b, pool)
	l, err := jobs.UpsertLayer(ctx, pool, jobs.Layer{Name: "scifact", Root: dir,
		AnswerMode: schema.DefaultAnswerMode, ChunkSize: schema.DefaultChunkSize})
	if err != nil {
		b.Fatal(err)
	}
	client := startClient(b, pool, tv, batch, workers)
	defer client.Stop(ctx) //nolint:errcheck
	tv.begin()
	if _, err := jobs.StartIngest(ctx, pool, client, l.ID, "bench"); err != nil {
		b.Fatal(err)
	}
	waitVectors(b, pool, client, tv.Model().Name, l.ID)
	return tv.since()
}

func startClient(b *testing.B, pool *pgxpool.Pool, vec jobs.Vectorizer, batch, workers int) *river.Client[pgx.Tx] {
	client, err := jobs.NewClient(pool, jobs.ClientConfig{Workers: workers, Vectorizer: vec, EmbedBatch: batch,
		Pipeline: jobs.StandardPipeline(parsers.Options{NoOCR: true})})
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return client
}

// waitVectors waits until the layer's run has finished, its chunks all have
// a vector of model and no embed job of it is left (as `ingestd add --wait`).
func waitVectors(b *testing.B, pool *pgxpool.Pool, client *river.Client[pgx.Tx], model string, layerID int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for {
		var chunks, pending int
		err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE `+jobs.LacksVector("$2")+`)
			FROM strata.chunks c WHERE c.layer_id = $1`, layerID, model).Scan(&chunks, &pending)
		if err != nil {
			b.Fatal(err)
		}
		var done bool
		if err := pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM strata.ingest_runs
			WHERE layer_id = $1 AND finished_at IS NULL)`, layerID).Scan(&done); err != nil {
			b.Fatal(err)
		}
		if done && chunks > 0 && pending == 0 {
			active, err := jobs.ActiveEmbedJobs(ctx, client, pool, layerID)
			if err != nil {
				b.Fatal(err)
			}
			if active == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			b.Fatalf("layer %d: %d of %d chunks without a vector after 30 minutes", layerID, pending, chunks)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// timedVectorizer counts the time spent in the model, the calls and the
// texts, and when the first call began and the last one ended.
type timedVectorizer struct {
	v                  jobs.Vectorizer
	mu                 sync.Mutex
	start, first, last time.Time
	busy, maxGap       time.Duration
	calls, texts       int
}

func (t *timedVectorizer) Model() embed.ModelInfo { return t.v.Model() }

func (t *timedVectorizer) EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error) {
	began := time.Now()
	out, err := t.v.EmbedChunks(ctx, texts)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls == 0 {
		t.first = began
	} else {
		t.maxGap = max(t.maxGap, began.Sub(t.last))
	}
	t.last = time.Now()
	t.busy += t.last.Sub(began)
	t.calls++
	t.texts += len(texts)
	return out, err
}

func (t *timedVectorizer) begin() { t.start = time.Now() }

func (t *timedVectorizer) since() time.Duration { return time.Since(t.start) }

// pass turns the counts into a pass's figures: n chunks in wall.
func (t *timedVectorizer) pass(n int, wall time.Duration) pass {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := pass{rate: float64(n) / wall.Seconds(), busy: t.busy.Seconds() / wall.Seconds()}
	if t.calls > 0 {
		p.modelRate = float64(t.texts) / t.busy.Seconds()
		p.lead = t.first.Sub(t.start).Seconds()
		p.tail = t.start.Add(wall).Sub(t.last).Seconds()
		p.batch = float64(t.texts) / float64(t.calls)
		p.gap = t.maxGap.Seconds()
	}
	return p
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
