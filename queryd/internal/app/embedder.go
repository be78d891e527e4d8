package app

import (
	"context"
	"log/slog"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/server"
)

// queryEmbedder holds the model queries are embedded with. The local model
// is loaded when the first query needs a vector (or, for serve, in the
// background at start; see warm). When it cannot be loaded, search answers
// from the lexical channel and says it is degraded; /healthz reports the
// error.
type queryEmbedder struct {
	emb     embed.Embedder
	set     *embedding.Set // emb and the other local models a layer's vectors may need
	name    string
	threads int   // the local model's threads per call
	loadErr error // a configuration or remote-provider error at start
	// vectors keeps recent query vectors for every engine of the process.
	vectors *retrieve.VectorCache
}

// queryVectors is how many recent query vectors a process keeps: about
// 1.5 MiB at 384 dimensions.
const queryVectors = 1024

// queryThreads is the local model's thread count in queryd when
// EMBEDDING_THREADS is unset. A query is one short text, and queryd runs up
// to QUERYD_MAX_CONCURRENT_SEARCHES of them at once: one thread per query
// lets two queries run side by side on 2 CPUs instead of sharing both. With
// 8 clients on 2 CPUs it used 10-15 % less CPU per search than 2 threads at
// the same throughput (docs/embeddings.md). ingestd keeps the model's
// default (one per CPU), which embedded chunks 1.5 times faster.
const queryThreads = 1

func newQueryEmbedder(cfg embed.Config, log *slog.Logger) *queryEmbedder {
	q := &queryEmbedder{vectors: retrieve.NewVectorCache(queryVectors)}
	if cfg.IntraOpThreads == 0 {
		cfg.IntraOpThreads = queryThreads
	}
	q.threads = cfg.IntraOpThreads
	warn := func(err error) {
		log.Warn("embedding model unavailable: search answers from full text only (degraded)", slog.String("error", err.Error()))
	}
	emb, err := embedding.Lazy(cfg, log, warn)
	if err == nil {
		var mi embed.ModelInfo
		if mi, err = embed.ResolveModel(context.Background(), emb); err == nil {
			emb = embedding.ForQueries(cfg, log, emb)
			q.emb, q.name = emb, mi.Name
			q.set = embedding.NewSet(cfg, log, emb)
			return q
		}
		_ = embed.Close(emb)
	}
	q.loadErr = err
	warn(err)
	q.set = embedding.NewSet(cfg, log, nil)
	return q
}

// warm starts loading a lazily loaded model in the background, so that the
// first query of a server does not wait for it.
func (q *queryEmbedder) warm() {
	if e, ok := q.emb.(interface{ Warm() }); ok {
		e.Warm()
	}
}

// options are the search options with this embedder.
func (q *queryEmbedder) options(cfg Config) searchpkg.Options {
	o := searchpkg.DefaultOptions()
	o.KeywordSlots = cfg.KeywordSlots
	if q.emb != nil {
		o.Embedder = q.emb
	} else {
		o.EmbedderError = q.loadErr
	}
	if q.set != nil {
		o.Models = q.set.ByName
	}
	o.Vectors = q.vectors
	return o
}

// ModelHealth reports the model for /healthz: its name, and an error while
// it is not loaded yet, is loading or failed to load.
func (q *queryEmbedder) ModelHealth(context.Context) (string, error) {
	if q.loadErr != nil {
		return q.name, q.loadErr
	}
	if l, ok := q.emb.(interface {
		State() (embed.LoadState, error)
	}); ok {
		switch st, err := l.State(); st {
		case embed.Loaded:
			return q.name, nil
		case embed.Failed:
			return q.name, err
		default:
			return q.name, server.ErrModelNotLoaded
		}
	}
	return q.name, nil
}

func (q *queryEmbedder) close() {
	if q.set != nil {
		q.set.Close() // closes emb too
		return
	}
	if q.emb != nil {
		_ = embed.Close(q.emb)
	}
}
