package search

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

func TestBadInputAndCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "handbook"}, handbook)
	f.open(t)
	ctx := context.Background()

	// PostgreSQL refused these with SQLSTATE 22021, which search answered
	// as 503 "unavailable: lexical search" with Retry-After.
	t.Run("NUL bytes and invalid UTF-8 are the caller's mistake", func(t *testing.T) {
		s := f.searcher(t)
		for _, c := range []struct {
			name string
			req  Request
			arg  string
		}{
			{"NUL in query", Request{Query: "leave\x00days"}, "query"},
			{"invalid UTF-8 in query", Request{Query: "leave \xff\xfe days"}, "query"},
			{"NUL in a layer", Request{Query: "leave", Layers: []string{"hand\x00book"}}, "layers"},
			{"NUL in a filter key", Request{Query: "leave", MetadataFilter: map[string]string{"te\x00am": "x"}}, "metadata_filter"},
			{"NUL in a filter value", Request{Query: "leave", MetadataFilter: map[string]string{"team": "pay\x00ments"}}, "metadata_filter"},
			{"invalid UTF-8 in a filter value", Request{Query: "leave", MetadataFilter: map[string]string{"team": "\xc3"}}, "metadata_filter"},
		} {
			_, err := s.Search(ctx, c.req)
			var qe *qerr.Error
			if !errors.As(err, &qe) || qe.Kind != qerr.Invalid || qe.Arg != c.arg {
				t.Errorf("%s: want an invalid-argument error naming %s, got %v", c.name, c.arg, err)
			}
		}
	})

	t.Run("a data error the checks miss is still invalid input", func(t *testing.T) {
		_, err := f.open(t).PrepareLexical(ctx, "a\x00b", nil, []int64{})
		if err == nil {
			t.Fatal("PostgreSQL took a NUL byte")
		}
		if got := store.CallerError(ctx, err, "run the full-text search"); qerr.KindOf(got) != qerr.Invalid {
			t.Errorf("SQLSTATE 22021 became %v", got)
		}
	})

	t.Run("nothing found comes back as [] from the cache too", func(t *testing.T) {
		// Words only: the bag-of-words vectors find something for any query.
		s := f.searcher(t, func(o *Options) { o.Embedder = nil })
		for i := range 2 {
			resp := mustSearch(t, s, Request{Query: "zyxwvut", Layers: []string{"handbook"}, Explain: true})
			b, _ := json.Marshal(resp)
			if !strings.Contains(string(b), `"results":[]`) {
				t.Errorf("search %d: %s", i+1, b)
			}
			if cached := resp.Explain.Cached; cached != (i == 1) {
				t.Errorf("search %d: cached %v", i+1, cached)
			}
		}
	})

	t.Run("a layer named twice is the same search", func(t *testing.T) {
		hits := 0
		s := f.searcher(t, func(o *Options) { o.OnCacheHit = func() { hits++ } })
		first := mustSearch(t, s, Request{Query: "carry over leave", Layers: []string{"handbook", " handbook"}})
		second := mustSearch(t, s, Request{Query: "carry over leave", Layers: []string{"handbook"}})
		if hits != 1 {
			t.Errorf("[handbook, handbook] then [handbook]: %d cache hits, want 1", hits)
		}
		for _, r := range []*Response{first, second} {
			if !slices.Equal(r.SearchedLayers, []string{"handbook"}) {
				t.Errorf("searched_layers %v, want [handbook]", r.SearchedLayers)
			}
		}
		req := Request{Query: "x", Layers: []string{"b", "a", "b"}}
		if err := req.Validate(); err != nil || !slices.Equal(req.Layers, []string{"b", "a"}) {
			t.Errorf("Validate left layers %v (%v), want [b a]", req.Layers, err)
		}
	})

	t.Run("a model that failed to load is named as such", func(t *testing.T) {
		loadErr := errors.New("load local embedding model (STRATA_MODEL_DIR=/srv/strata/var/models/use-lite, ONNXRUNTIME_LIB=/srv/strata/var/lib/libonnxruntime.so.1): " +
			"open /srv/strata/var/models/use-lite/model.json: no such file or directory")
		s := f.searcher(t, func(o *Options) { o.Embedder, o.EmbedderError = nil, loadErr })
		resp := mustSearch(t, s, Request{Query: "carry over leave"})
		r := resp.DegradedReason
		if !resp.Degraded || !strings.Contains(r, "failed to load") || !strings.Contains(r, "model.json: no such file") {
			t.Errorf("degraded reason %q", r)
		}
		if strings.Contains(r, "/srv/strata") || strings.Contains(r, "not configured") {
			t.Errorf("degraded reason %q shows server paths or says no model is configured", r)
		}
		plain := mustSearch(t, f.searcher(t, func(o *Options) { o.Embedder = nil }), Request{Query: "carry over leave"})
		if !strings.Contains(plain.DegradedReason, "no embedding model is configured") {
			t.Errorf("without a model: %q", plain.DegradedReason)
		}
	})
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`embed texts 1-1 of 1 with m: Post "https://user:pw@api.example.com/v1/embeddings?key=abc": dial tcp: i/o timeout`,
			`embed texts 1-1 of 1 with m: Post "https://***@api.example.com/v1/embeddings?***": dial tcp: i/o timeout`},
		{"provider said: invalid api_key=sk-abcdef123456 (Bearer tok123)", "provider said: invalid api_key=*** (Bearer ***)"},
		{"open /home/ops/strata/var/models/use-lite/vocab.json: permission denied", "open …/vocab.json: permission denied"},
	} {
		if got := redact(c.in); got != c.want {
			t.Errorf("redact(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// The issue: with PostgreSQL gone, searches said "unavailable: read data
// version" or "unavailable: lexical search".
func TestUnreachableDatabaseSaysSo(t *testing.T) {
	t.Parallel()
	base := dbtest.URL(t)
	dbURL := dbtest.NewDatabase(t)
	ctx := context.Background()
	f := &fixture{url: dbURL, emb: &bowEmbedder{}, dir: t.TempDir()}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	f.pool = pool
	ingesttest.Migrate(t, pool)
	f.ingest(t, jobs.Layer{Name: "handbook"}, handbook)
	s := f.searcher(t)
	mustSearch(t, s, Request{Query: "carry over leave"})
	pool.Close()

	// Take the database away from under the store.
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	u, _ := url.Parse(dbURL)
	if _, err := admin.Exec(ctx, "DROP DATABASE "+pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	gated := false
	for i := range 3 {
		_, err := s.Search(ctx, Request{Query: "carry over leave days"})
		var qe *qerr.Error
		if !errors.As(err, &qe) || qe.Kind != qerr.Unavailable || qe.Msg != store.MsgUnreachable {
			t.Fatalf("search %d with the database gone: %v", i+1, err)
		}
		if !store.IsUnreachable(err) {
			t.Errorf("search %d: the error does not carry the connection failure: %v", i+1, err)
		}
		gated = gated || (errors.Is(err, store.ErrUnreachable) && qe.RetryAfter > 0)
	}
	if !gated {
		t.Error("no search was refused by the reconnect gate with a time to retry")
	}
}
