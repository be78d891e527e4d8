package app

import (
	"context"
	"log/slog"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/embedding"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
)

// queryEmbedder holds the model queries are embedded with. When it cannot
// be loaded, search answers from the lexical channel and says it is
// degraded; /healthz reports the error.
type queryEmbedder struct {
	emb     embed.Embedder
	name    string
	loadErr error
}

func newQueryEmbedder(cfg embed.Config, log *slog.Logger) *queryEmbedder {
	q := &queryEmbedder{}
	emb, err := embedding.Load(cfg, log)
	if err == nil {
		var mi embed.ModelInfo
		if mi, err = embed.ResolveModel(context.Background(), emb); err == nil {
			q.emb, q.name = emb, mi.Name
			return q
		}
		_ = embed.Close(emb)
	}
	q.loadErr = err
	log.Warn("embedding model unavailable: search answers from full text only (degraded)", slog.String("error", err.Error()))
	return q
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
	return o
}

// ModelHealth reports the model for /healthz.
func (q *queryEmbedder) ModelHealth(context.Context) (string, error) {
	return q.name, q.loadErr
}

func (q *queryEmbedder) close() {
	if q.emb != nil {
		_ = embed.Close(q.emb)
	}
}
