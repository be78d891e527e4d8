package search

import (
	"context"
	"crypto/sha256"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// benchEnv is a SciFact-sized layer loaded straight into the tables (one
// chunk per abstract, 512-dimensional bag-of-words vectors, the model's
// HNSW index built after the load), which is what search latency depends
// on; retrieval quality is eval_test.go's business.
type benchEnv struct {
	store   *store.Corpus
	emb     *bowEmbedder
	queries []string
	layer   string
}

// loadChunks stores one document and one chunk per text straight into the
// tables, with the embedder's vectors, marks the model complete for the
// layer and builds its HNSW index. meta, when set, gives each chunk's
// metadata.
func loadChunks(tb testing.TB, pool *pgxpool.Pool, layerID int64, emb *bowEmbedder, paths, texts []string, meta func(i int) map[string]string) {
	ctx := context.Background()
	for start := 0; start < len(paths); start += 2000 {
		end := min(start+2000, len(paths))
		metas := make([]map[string]string, end-start)
		for i := range metas {
			metas[i] = map[string]string{}
			if meta != nil {
				metas[i] = meta(start + i)
			}
		}
		if _, err := pool.Exec(ctx, `
			WITH docs AS (
				INSERT INTO strata.documents (layer_id, path, status, body)
				SELECT $1, p || '.txt', 'ok', t FROM unnest($2::text[], $3::text[]) AS x(p, t)
				RETURNING id, layer_id, path, body),
			m AS (SELECT p || '.txt' AS path, md FROM unnest($2::text[], $4::jsonb[]) AS y(p, md))
			INSERT INTO strata.chunks (document_id, layer_id, ord, start_off, end_off, line_start, line_end, text,
				content_hash, metadata)
			SELECT id, layer_id, 0, 0, octet_length(body), 1, 3, body, sha256(convert_to(body, 'UTF8')), m.md
			FROM docs JOIN m USING (path)`,
			layerID, paths[start:end], texts[start:end], metas); err != nil {
			tb.Fatal(err)
		}
		vecs, _ := emb.Embed(ctx, texts[start:end])
		hashes := make([][]byte, len(vecs))
		lits := make([]string, len(vecs))
		for i, v := range vecs {
			h := sha256.Sum256([]byte(texts[start+i]))
			hashes[i] = h[:]
			parts := make([]string, len(v))
			for j, x := range v {
				parts[j] = strconv.FormatFloat(float64(x), 'g', 6, 32)
			}
			lits[i] = "[" + strings.Join(parts, ",") + "]"
		}
		if _, err := pool.Exec(ctx, `INSERT INTO strata.embeddings (model, content_hash, window_no, dims, embedding)
			SELECT $1, h, 0, $2, v::vector FROM unnest($3::bytea[], $4::text[]) AS x(h, v) ON CONFLICT DO NOTHING`,
			emb.Model().Name, emb.size(), hashes, lits); err != nil {
			tb.Fatal(err)
		}
	}
	if err := jobs.RegisterModel(ctx, pool, layerID, emb.Model(), "test"); err != nil {
		tb.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE strata.layer_models SET complete = true, updated_at = now() WHERE layer_id = $1`, layerID); err != nil {
		tb.Fatal(err)
	}
	if err := jobs.EnsureVectorIndex(ctx, pool, emb.Model()); err != nil {
		tb.Fatal(err)
	}
}

// newBenchLayer creates the benchmark layer (no files behind it, an abstract
// per chunk) and returns it with d's abstract ids in order.
func newBenchLayer(tb testing.TB, pool *pgxpool.Pool, d *evalData) (jobs.Layer, []string) {
	tb.Helper()
	l, err := jobs.UpsertLayer(context.Background(), pool, jobs.Layer{Name: "bench", Root: "/nonexistent", AnswerMode: "grounded", ChunkSize: 8000})
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]string, 0, len(d.corpus))
	for id := range d.corpus {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return l, ids
}

func setupBench(b *testing.B) *benchEnv {
	ctx := context.Background()
	d := loadSciFact(b)
	pool, url := dbtest.NewPool(b)
	ingesttest.Migrate(b, pool)
	emb := &bowEmbedder{dims: 512}
	l, ids := newBenchLayer(b, pool, d)
	if n, _ := strconv.Atoi(os.Getenv("STRATA_BENCH_COPIES")); n > 1 {
		// More chunks than SciFact: each abstract again under another path.
		base := ids
		for c := 1; c < n; c++ {
			for _, id := range base {
				d.corpus[id+"-"+strconv.Itoa(c)] = d.corpus[id] + " copy " + strconv.Itoa(c)
				ids = append(ids, id+"-"+strconv.Itoa(c))
			}
		}
	}
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = d.corpus[id]
	}
	loadChunks(b, pool, l.ID, emb, ids, texts, nil)
	// VACUUM sets the visibility map that index-only scans of the postings
	// need, as autovacuum does after an ingest.
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d chunks", len(ids))
	return newBenchEnv(b, url, emb, d)
}

// newBenchEnv opens the store on url for layer "bench", with SciFact's test
// queries in text order.
func newBenchEnv(b *testing.B, url string, emb *bowEmbedder, d *evalData) *benchEnv {
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(st.Close)
	env := &benchEnv{store: st, emb: emb, layer: "bench"}
	for qid := range d.test {
		env.queries = append(env.queries, d.queries[qid])
	}
	sort.Strings(env.queries)
	return env
}

// layerIDs returns the ids of the benchmark's layer.
func (env *benchEnv) layerIDs(b *testing.B) []int64 {
	all, err := env.store.Layers(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var ids []int64
	for _, l := range all {
		if l.Name == env.layer {
			ids = append(ids, l.ID)
		}
	}
	return ids
}

// lexicalTop10 runs the lexical channel alone at depth and returns the ids
// of its first ten hits and how long it took.
// p are the lexical channel's parameters.
func (env *benchEnv) lexicalTop10(b *testing.B, p retrieve.Params, ids []int64, q string, depth int) ([]int64, time.Duration) {
	run := retrieve.New(env.store, retrieve.Options{}).Query(retrieve.Query{Text: q, TopK: 10, Params: &p})
	t0 := time.Now()
	lex, err := run.Lexical(context.Background(), ids, depth, false)
	if err != nil {
		b.Fatal(err)
	}
	hits := lex.Hits
	d := time.Since(t0)
	out := make([]int64, 0, 10)
	for _, h := range hits[:min(10, len(hits))] {
		out = append(out, h.ChunkID)
	}
	return out, d
}

// overlap counts the ids of want that got holds too.
func overlap(got, want []int64) int {
	in := map[int64]bool{}
	for _, id := range got {
		in[id] = true
	}
	n := 0
	for _, id := range want {
		if in[id] {
			n++
		}
	}
	return n
}

// BenchmarkSearch reports strata_search latency (p50, p95 over the 300
// SciFact test queries per round, cache off) for the lexical channel alone
// (no embedder), the vector channel alone, and the whole hybrid search, and
// hybrid throughput with 8 concurrent clients.
func BenchmarkSearch(b *testing.B) {
	runSearchBench(b, setupBench(b))
}
