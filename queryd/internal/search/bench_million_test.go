package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// BenchmarkSearchMillion is BenchmarkSearch at about a million chunks. It
// runs only with STRATA_BENCH_MILLION=1 (loading and indexing take tens of
// minutes on a small machine):
//
//	STRATA_BENCH_MILLION=1 bash scripts/test.sh -run '^$' -bench BenchmarkSearchMillion \
//	    -benchtime 1x -timeout 120m ./queryd/internal/search/
//
// The chunks are SciFact abstracts cut into pieces of two or three sentences,
// replicated with variation: copy c of an abstract is a document of its own
// whose pieces start at a shifted sentence and each borrow one sentence of
// another abstract, so every chunk text differs while the lexeme statistics
// stay those of real abstracts. STRATA_BENCH_CHUNKS sets the number of chunks
// (default 1,000,000). Vectors are random ones of the default model's
// dimension, 384 (bge-small-en-v1.5; the bag-of-words embedder of that size
// still embeds the queries); STRATA_BENCH_VECTORS sets
// how many chunks get one (default all), because the HNSW build is the
// slowest step. The BM25 statistics are computed once after the load with
// strata.refresh_lexical_stats, and the GIN and HNSW indexes are built after
// the load. STRATA_BENCH_QUERIES keeps only the first n test queries (in
// text order) when the lexical channel is too slow for all 300.
func BenchmarkSearchMillion(b *testing.B) {
	if os.Getenv("STRATA_BENCH_MILLION") != "1" {
		b.Skip("set STRATA_BENCH_MILLION=1 to run the 1-million-chunk benchmark")
	}
	env, _ := setupMillion(b)
	runSearchBench(b, env)
}

// millionDims is the vectors' dimension: the default model's,
// bge-small-en-v1.5 (embed.DefaultLocalModel).
const millionDims = 384

// millionSteps is how long each step of setupMillion took (all zero when
// the chunks were already loaded), for BenchmarkSizing.
type millionSteps struct {
	url                                     string // the database
	chunks, vectors                         int
	load, gin, postings, vecs, hnsw, vacuum time.Duration
}

// millionSentences cuts an abstract into sentences (and its title).
func millionSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := i + 1
		if c == '\n' || ((c == '.' || c == '?' || c == '!') && (i+1 == len(text) || text[i+1] == ' ')) {
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = end
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

func setupMillion(b *testing.B) (*benchEnv, millionSteps) {
	ctx := context.Background()
	want := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("STRATA_BENCH_CHUNKS")); err == nil && n > 0 {
		want = n
	}
	vectors := want
	if n, err := strconv.Atoi(os.Getenv("STRATA_BENCH_VECTORS")); err == nil && n >= 0 {
		vectors = min(n, want)
	}
	d := loadSciFact(b)
	emb := &bowEmbedder{dims: millionDims}
	// STRATA_BENCH_DATABASE_URL keeps the loaded chunks between runs: a
	// database that already holds the layer is searched as it is.
	pool, url := poolFromEnv(b, "STRATA_BENCH_DATABASE_URL")
	st := millionSteps{url: url}
	ingesttest.Migrate(b, pool)
	var have int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id
		WHERE l.name = 'bench'`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have > 0 {
		b.Logf("reusing %d chunks of layer bench", have)
		return millionEnv(b, d, pool, url, emb), st
	}
	l, ids := newBenchLayer(b, pool, d)
	sents := make([][]string, len(ids))
	all := []string{}
	for i, id := range ids {
		sents[i] = millionSentences(d.corpus[id])
		all = append(all, sents[i]...)
	}

	// The statement trigger would recompute lexeme statistics per batch and
	// the GIN index would be updated row by row: both are done once after
	// the load instead.
	for _, q := range []string{
		`ALTER TABLE strata.chunks DISABLE TRIGGER chunks_stats_insert`,
		`ALTER TABLE strata.chunks DISABLE TRIGGER chunks_stats_insert_postings`,
		`DROP INDEX strata.chunks_tsv`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Now()
	loaded, copies := 0, 0
	var (
		paths, bodies                 []string
		cpaths, ctexts                []string
		cords, cstarts, cends, clines []int32
	)
	flush := func() {
		if len(paths) == 0 {
			return
		}
		if _, err := pool.Exec(ctx, `
			WITH docs AS (
				INSERT INTO strata.documents (layer_id, path, status, body)
				SELECT $1, p, 'ok', t FROM unnest($2::text[], $3::text[]) AS x(p, t)
				RETURNING id, layer_id, path)
			INSERT INTO strata.chunks (document_id, layer_id, ord, start_off, end_off, line_start, line_end, text, content_hash)
			SELECT d.id, d.layer_id, c.ord, c.s, c.e, c.ln, c.ln, c.t, sha256(convert_to(c.t, 'UTF8'))
			FROM unnest($4::text[], $5::int[], $6::int[], $7::int[], $8::int[], $9::text[]) AS c(p, ord, s, e, ln, t)
			JOIN docs d ON d.path = c.p`,
			l.ID, paths, bodies, cpaths, cords, cstarts, cends, clines, ctexts); err != nil {
			b.Fatal(err)
		}
		paths, bodies = paths[:0], bodies[:0]
		cpaths, ctexts = cpaths[:0], ctexts[:0]
		cords, cstarts, cends, clines = cords[:0], cstarts[:0], cends[:0], clines[:0]
	}
	for c := 0; loaded < want; c++ {
		copies = c + 1
		for i := 0; i < len(ids) && loaded < want; i++ {
			ss := sents[i]
			if len(ss) == 0 {
				continue
			}
			path := "copy" + strconv.Itoa(c) + "/" + ids[i] + ".txt"
			var body strings.Builder
			shift := c % len(ss)
			ord := 0
			for k := 0; k < len(ss) && loaded < want; {
				n := 2 + (c+k)%2 // two or three sentences a piece
				piece := make([]string, 0, n+1)
				for j := k; j < k+n && j < len(ss); j++ {
					piece = append(piece, ss[(j+shift)%len(ss)])
				}
				k += n
				if c > 0 {
					piece = append(piece, all[rng.IntN(len(all))])
				}
				text := strings.Join(piece, " ")
				if body.Len() > 0 {
					body.WriteString("\n\n")
				}
				start := body.Len()
				body.WriteString(text)
				cpaths = append(cpaths, path)
				ctexts = append(ctexts, text)
				cords = append(cords, int32(ord))
				cstarts = append(cstarts, int32(start))
				cends = append(cends, int32(body.Len()))
				clines = append(clines, int32(1+2*ord))
				ord++
				loaded++
			}
			paths = append(paths, path)
			bodies = append(bodies, body.String())
			if len(ctexts) >= 20000 {
				flush()
			}
		}
	}
	flush()
	st.load, st.chunks = time.Since(t0), loaded
	b.Logf("loaded %d chunks (%d SciFact abstracts, %d copies) in %s", loaded, len(ids), copies, st.load.Round(time.Second))

	t0 = time.Now()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`SET maintenance_work_mem = '4GB'`,
		`SET max_parallel_maintenance_workers = 1`,
		`CREATE INDEX chunks_tsv ON strata.chunks USING gin (tsv)`,
		`ALTER TABLE strata.chunks ENABLE TRIGGER chunks_stats_insert`,
		`ALTER TABLE strata.chunks ENABLE TRIGGER chunks_stats_insert_postings`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	st.gin = time.Since(t0)
	// The postings' impact index is built once after they are all written,
	// not updated row by row.
	t0 = time.Now()
	for _, q := range []string{
		`DROP INDEX strata.postings_impact`,
		`SELECT strata.refresh_lexical_stats(` + strconv.FormatInt(l.ID, 10) + `)`,
		`CREATE INDEX postings_impact ON strata.postings (lexeme, layer_id, impact DESC) INCLUDE (chunk_id)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	st.postings = time.Since(t0)
	var postings int64
	// refresh_lexical_stats packs them into posting lists (migration 0028).
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM strata.postings)
		+ (SELECT coalesce(sum(cardinality(chunk_ids)), 0) FROM strata.posting_lists)`).Scan(&postings); err != nil {
		b.Fatal(err)
	}
	b.Logf("GIN index built in %s, BM25 statistics and %d postings with their index in %s", st.gin.Round(time.Second),
		postings, st.postings.Round(time.Second))

	// Random vectors, made by the server: the chunks in id order (the first
	// copies first), millionDims values in [-0.5, 0.5) each; cosine distance
	// does not care about their length.
	t0 = time.Now()
	if _, err := conn.Exec(ctx, `
		INSERT INTO strata.embeddings (model, content_hash, window_no, dims, embedding)
		SELECT $1, c.content_hash, 0, $4, v.e
		FROM (SELECT content_hash FROM strata.chunks WHERE layer_id = $2 ORDER BY id LIMIT $3) c
		CROSS JOIN LATERAL (SELECT array_agg(random() - 0.5)::vector AS e FROM generate_series(1, $4)
			WHERE c.content_hash IS NOT NULL) v
		ON CONFLICT DO NOTHING`, emb.Model().Name, l.ID, vectors, millionDims); err != nil {
		b.Fatal(err)
	}
	conn.Release()
	st.vecs, st.vectors = time.Since(t0), vectors
	if err := jobs.RegisterModel(ctx, pool, l.ID, emb.Model(), "test"); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE strata.layer_models SET complete = true, updated_at = now() WHERE layer_id = $1`, l.ID); err != nil {
		b.Fatal(err)
	}
	// The HNSW index is built by the same code as in production, on a pool
	// whose sessions may use 4 GB for the build.
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["maintenance_work_mem"] = "4GB"
	cfg.ConnConfig.RuntimeParams["max_parallel_maintenance_workers"] = "1"
	build, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	t0 = time.Now()
	err = jobs.EnsureVectorIndex(ctx, build, emb.Model())
	build.Close()
	if err != nil {
		b.Fatal(err)
	}
	st.hnsw = time.Since(t0)
	b.Logf("%d random vectors stored in %s, HNSW index built in %s", vectors, st.vecs.Round(time.Second), st.hnsw.Round(time.Second))
	// VACUUM sets the visibility map, so the postings are read by
	// index-only scans, as autovacuum would let them be in production.
	t0 = time.Now()
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	st.vacuum = time.Since(t0)
	b.Logf("VACUUM ANALYZE in %s", st.vacuum.Round(time.Second))
	return millionEnv(b, d, pool, url, emb), st
}

func millionEnv(b *testing.B, d *evalData, pool *pgxpool.Pool, url string, emb *bowEmbedder) *benchEnv {
	var size string
	if err := pool.QueryRow(context.Background(), `SELECT pg_size_pretty(pg_database_size(current_database()))`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	b.Logf("database size %s", size)
	env := newBenchEnv(b, url, emb, d)
	if n, err := strconv.Atoi(os.Getenv("STRATA_BENCH_QUERIES")); err == nil && n > 0 && n < len(env.queries) {
		env.queries = env.queries[:n]
	}
	return env
}

// impactSetting parses "M,C": postings per lexeme and candidates.
func impactSetting(b *testing.B, v string) (m, c int) {
	if _, err := fmt.Sscanf(v, "%d,%d", &m, &c); err != nil {
		b.Fatalf("impact setting %q: want postings per lexeme and candidates, M,C: %v", v, err)
	}
	return m, c
}

// runSearchBench measures env as BenchmarkSearch does: p50 and p95 over the
// queries for the lexical channel, the vector channel and the hybrid
// search (cache off, top_k 10), and hybrid queries/s with 8 clients.
func runSearchBench(b *testing.B, env *benchEnv) {
	runs, lexParams := millionChannels(b, env)
	for _, name := range []string{"lexical", "vector", "hybrid"} {
		fn := runs[name]
		b.Run(name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				lat = append(lat, timeQueries(b, env.queries, fn)...)
			}
			b.ReportMetric(ms(percentile(lat, 0.5)), "p50_ms")
			b.ReportMetric(ms(percentile(lat, 0.95)), "p95_ms")
			b.ReportMetric(ms(percentile(lat, 0.99)), "p99_ms")
			b.ReportMetric(0, "ns/op")
		})
	}
	runAgreementAndClients(b, env, runs, lexParams)
}

// timeQueries runs fn on each query, one after the other, and returns how
// long each took.
func timeQueries(b *testing.B, queries []string, fn func(q string) error) []time.Duration {
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		t0 := time.Now()
		if err := fn(q); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

// millionChannels gives one search of each channel ("lexical", "vector",
// "hybrid": cache off, top_k 10) and the lexical parameters in force.
func millionChannels(b *testing.B, env *benchEnv) (map[string]func(q string) error, retrieve.Params) {
	ctx := context.Background()
	// STRATA_BENCH_IMPACT=M,C sets the impact path's postings per lexeme and
	// candidates for this run.
	lexParams := retrieve.DefaultParams()
	tune := func(*retrieve.Params) {}
	if v := os.Getenv("STRATA_BENCH_IMPACT"); v != "" {
		m, c := impactSetting(b, v)
		lexParams.ImpactPerTerm, lexParams.ImpactCandidates = m, c
		tune = func(p *retrieve.Params) { p.ImpactPerTerm, p.ImpactCandidates = m, c }
	}
	layers := []string{env.layer}
	lexical := NewWithOptions(env.store, Options{KeywordSlots: 1, Tune: tune})
	hybrid := NewWithOptions(env.store, Options{Embedder: env.emb, KeywordSlots: 1, Tune: tune})
	vectorOnly := NewWithOptions(env.store, Options{Embedder: env.emb, KeywordSlots: 1, Tune: func(p *retrieve.Params) {
		tune(p)
		p.NoLexical = true
	}})
	runs := map[string]func(q string) error{
		"lexical": func(q string) error {
			_, err := lexical.Search(ctx, Request{Query: q, Layers: layers, TopK: 10})
			return err
		},
		"vector": func(q string) error {
			_, err := vectorOnly.Search(ctx, Request{Query: q, Layers: layers, TopK: 10})
			return err
		},
		"hybrid": func(q string) error {
			_, err := hybrid.Search(ctx, Request{Query: q, Layers: layers, TopK: 10})
			return err
		},
	}
	return runs, lexParams
}

// runAgreementAndClients is the rest of runSearchBench: the lexical
// channel's agreement with exhaustive BM25, and 8 clients at once.
func runAgreementAndClients(b *testing.B, env *benchEnv, runs map[string]func(q string) error, lexParams retrieve.Params) {
	// How far the impact-ordered lexical channel is from scoring every
	// candidate the GIN index selects: the share of the exact path's top 10
	// it returns too, over the first 50 queries (the exact path is slow at a
	// million chunks).
	b.Run("lexical-agreement", func(b *testing.B) {
		ids := env.layerIDs(b)
		exhaustive := lexParams
		exhaustive.ImpactPerTerm = 0
		for b.Loop() {
			var same, total float64
			var exactLat []time.Duration
			for i, q := range env.queries {
				if i == 50 {
					break
				}
				got, _ := env.lexicalTop10(b, lexParams, ids, q, 10)
				want, d := env.lexicalTop10(b, exhaustive, ids, q, 10)
				exactLat = append(exactLat, d)
				same += float64(overlap(got, want))
				total += float64(len(want))
			}
			b.ReportMetric(same/max(total, 1), "overlap@10")
			b.ReportMetric(ms(percentile(exactLat, 0.5)), "exact_p50_ms")
			b.ReportMetric(ms(percentile(exactLat, 0.95)), "exact_p95_ms")
		}
		b.ReportMetric(0, "ns/op")
	})
	b.Run("hybrid-8-clients", func(b *testing.B) {
		for b.Loop() {
			t0 := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failed error
			next := 0
			for c := 0; c < 8; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= len(env.queries) {
							return
						}
						if err := runs["hybrid"](env.queries[i]); err != nil {
							mu.Lock()
							failed = err
							mu.Unlock()
							return
						}
					}
				}()
			}
			wg.Wait()
			if failed != nil {
				b.Fatal(failed)
			}
			b.ReportMetric(float64(len(env.queries))/time.Since(t0).Seconds(), "queries/s")
		}
		b.ReportMetric(0, "ns/op")
	})
}

// BenchmarkLexicalImpactSweep compares settings of the impact-ordered
// lexical channel on the million-chunk layer (STRATA_BENCH_MILLION=1, best
// with STRATA_BENCH_DATABASE_URL so the layer is loaded once): for each
// (postings per lexeme, candidates) it reports latency over the queries and
// overlap@10 with exhaustive BM25 (every chunk holding a query lexeme
// scored, no pruning) over the first STRATA_BENCH_AGREE_QUERIES (default 30).
func BenchmarkLexicalImpactSweep(b *testing.B) {
	if os.Getenv("STRATA_BENCH_MILLION") != "1" {
		b.Skip("set STRATA_BENCH_MILLION=1 to run the 1-million-chunk benchmark")
	}
	env, _ := setupMillion(b)
	ids := env.layerIDs(b)
	top10 := func(p retrieve.Params, q string) ([]int64, time.Duration) {
		return env.lexicalTop10(b, p, ids, q, 50)
	}
	agree := 30
	if n, err := strconv.Atoi(os.Getenv("STRATA_BENCH_AGREE_QUERIES")); err == nil && n > 0 {
		agree = n
	}
	agree = min(agree, len(env.queries))
	// The reference: exhaustive BM25.
	exhaustive := retrieve.DefaultParams()
	exhaustive.ImpactPerTerm, exhaustive.PruneMinChunks = 0, math.MaxInt64
	ref := make([][]int64, agree)
	var refLat []time.Duration
	for i := range agree {
		var d time.Duration
		ref[i], d = top10(exhaustive, env.queries[i])
		refLat = append(refLat, d)
	}
	b.Logf("exhaustive BM25 over %d queries: p50 %s p95 %s", agree, percentile(refLat, 0.5).Round(time.Millisecond),
		percentile(refLat, 0.95).Round(time.Millisecond))
	type cfg struct{ m, c int }
	cfgs := []cfg{{0, 0}, {500, 200}, {1000, 200}, {2000, 200}, {1000, 400}, {4000, 400}}
	// STRATA_BENCH_SWEEP="M,C M,C ..." replaces the list.
	if v := os.Getenv("STRATA_BENCH_SWEEP"); v != "" {
		cfgs = nil
		for _, f := range strings.Fields(v) {
			var c cfg
			c.m, c.c = impactSetting(b, f)
			cfgs = append(cfgs, c)
		}
	}
	for _, c := range cfgs {
		name := "gin-pruned"
		if c.m > 0 {
			name = "postings-" + strconv.Itoa(c.m) + "-candidates-" + strconv.Itoa(c.c)
		}
		b.Run(name, func(b *testing.B) {
			p := retrieve.DefaultParams()
			p.ImpactPerTerm, p.ImpactCandidates = c.m, c.c
			for b.Loop() {
				var same, total float64
				for i := range agree {
					got, _ := top10(p, env.queries[i])
					same += float64(overlap(got, ref[i]))
					total += float64(len(ref[i]))
				}
				var lat []time.Duration
				n := len(env.queries)
				if c.m == 0 {
					n = agree // the GIN path is slow at this size
				}
				for _, q := range env.queries[:n] {
					_, d := top10(p, q)
					lat = append(lat, d)
				}
				b.ReportMetric(same/max(total, 1), "overlap@10")
				b.ReportMetric(ms(percentile(lat, 0.5)), "p50_ms")
				b.ReportMetric(ms(percentile(lat, 0.95)), "p95_ms")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
