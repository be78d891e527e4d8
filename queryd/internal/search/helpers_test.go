package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// bowEmbedder is a deterministic bag-of-words embedder: each lower-cased
// word adds one to a hashed dimension, and the vector is normalised. Two
// texts are close when they share words, which lets a test arrange the
// vector channel's ranking. Tests of retrieval quality use the real model
// (eval_test.go).
type bowEmbedder struct {
	dims  int // 0: 64
	mu    sync.Mutex
	calls int
	fail  error
}

func (b *bowEmbedder) size() int {
	if b.dims == 0 {
		return 64
	}
	return b.dims
}

func (b *bowEmbedder) Model() embed.ModelInfo {
	return embed.ModelInfo{Name: fmt.Sprintf("test-bow-%d@1", b.size()), Dims: b.size()}
}

func (b *bowEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	b.mu.Lock()
	b.calls++
	fail := b.fail
	b.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = testenv.BagOfWords(t, b.size())
	}
	return out, nil
}

// fixture is a database with layers ingested through the real jobs.
type fixture struct {
	pool  *pgxpool.Pool
	url   string
	store *store.Corpus
	emb   *bowEmbedder
	dir   string
}

// poolFromEnv connects to the database named by the environment variable
// env, which keeps what a slow evaluation or benchmark loaded between runs;
// without it, to a fresh test database.
func poolFromEnv(tb testing.TB, env string) (*pgxpool.Pool, string) {
	tb.Helper()
	url := os.Getenv(env)
	if url == "" {
		return dbtest.NewPool(tb)
	}
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool, url
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool, url := dbtest.NewPool(t)
	f := &fixture{pool: pool, url: url, emb: &bowEmbedder{}, dir: t.TempDir()}
	ingesttest.Migrate(t, pool)
	return f
}

// ingest ingests files as a layer, with bag-of-words vectors.
func (f *fixture) ingest(t *testing.T, layer jobs.Layer, files map[string]string) {
	t.Helper()
	root := filepath.Join(f.dir, layer.Name)
	testenv.WriteFiles(t, root, files)
	layer.Root = root
	ingesttest.Ingest(t, f.pool, layer, ingesttest.Options{Vectorizer: jobs.SingleVector(f.emb)})
}

func (f *fixture) open(t *testing.T) *store.Corpus {
	t.Helper()
	if f.store == nil {
		st, err := store.OpenCorpus(context.Background(), f.url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		f.store = st
	}
	return f.store
}

// searcher returns a Searcher with the bag-of-words embedder and opts
// applied to the defaults.
func (f *fixture) searcher(t *testing.T, opts ...func(*Options)) *Searcher {
	t.Helper()
	o := DefaultOptions()
	o.Embedder = f.emb
	for _, fn := range opts {
		fn(&o)
	}
	return NewWithOptions(f.open(t), o)
}

func (f *fixture) setParams(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func mustSearch(t *testing.T, s *Searcher, req Request) *Response {
	t.Helper()
	resp, err := s.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	return resp
}

func files(resp *Response) []string {
	var out []string
	for _, r := range resp.Results {
		out = append(out, r.Layer+"/"+r.File)
	}
	return out
}

// useliteSearcher ingests the folder root as the layer name, with the
// local model's vectors, into a database of its own (the ingest must
// report want new files and no failure) and returns a Searcher with the
// model and its measured search parameters.
func useliteSearcher(t *testing.T, name, root string, want int) *Searcher {
	t.Helper()
	emb := loadUSELite(t)
	t.Cleanup(func() { embed.Close(emb) })
	pool, url := dbtest.NewPool(t)
	p := ingesttest.Ingest(t, pool, jobs.Layer{Name: name, Root: root}, ingesttest.Options{Vectorizer: jobs.SingleVector(emb)})
	if p.Failed != 0 || p.New != want {
		t.Fatalf("ingest: %+v, want %d new files and none failed", p, want)
	}
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	o := DefaultOptions()
	o.Embedder = emb
	return NewWithOptions(st, o)
}
