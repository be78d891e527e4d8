package embedding

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/stratakb/stratakb/embed"
)

// ForQueries returns the embedder queryd embeds queries with for e, the
// local model cfg configures: e itself, or, when cfg.QueryInt8 is set, the
// model has an int8 export (embed.QueryExport) and its folder is there
// beside the model's, a QueryExport that embeds queries with the export
// (loaded lazily) and answers to e's name, so that the layers' vectors
// still match. A missing export folder is logged once and e is used.
func ForQueries(cfg embed.Config, logger *slog.Logger, e embed.Embedder) embed.Embedder {
	if e == nil || cfg.Provider != embed.ProviderLocal || !cfg.QueryInt8 {
		return e
	}
	lm, err := resolveLocal(cfg)
	if err != nil {
		return e
	}
	name, ok := LocalNameOf(lm.vectorName())
	if !ok {
		return e
	}
	export, ok := embed.QueryExport(name)
	if !ok {
		return e
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	qdir := filepath.Join(filepath.Dir(lm.dir), export)
	if !fileExists(filepath.Join(qdir, "model.onnx")) {
		logger.Warn("the int8 export for queries is not there: queries are embedded with the full model (make setup fetches it)",
			slog.String("model", name), slog.String("export", qdir))
		return e
	}
	qcfg := cfg
	qcfg.ModelName, qcfg.ModelDir = export, qdir
	q, err := Lazy(qcfg, logger, func(err error) {
		logger.Warn("int8 query export failed to load", slog.String("export", export), slog.String("error", err.Error()))
	})
	if err != nil {
		logger.Warn("int8 query export unusable: queries are embedded with the full model", slog.String("error", err.Error()))
		return e
	}
	return &QueryExport{Embedder: e, query: q, name: export}
}

// QueryExport embeds queries with a model's int8 export and passages with
// the model itself; Model is the model's, whose name the vectors carry.
type QueryExport struct {
	embed.Embedder
	query embed.Embedder
	name  string
}

// Embed embeds queries with the export.
func (x *QueryExport) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return x.query.Embed(ctx, texts)
}

// EmbedPassages embeds passages with the model itself.
func (x *QueryExport) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	if p, ok := x.Embedder.(interface {
		EmbedPassages(context.Context, []string) ([][]float32, error)
	}); ok {
		return p.EmbedPassages(ctx, texts)
	}
	return x.Embedder.Embed(ctx, texts)
}

// QueryEncoder names the export queries are embedded with, for explain.
func (x *QueryExport) QueryEncoder() string { return x.name }

// Warm starts loading the export in the background.
func (x *QueryExport) Warm() {
	if w, ok := x.query.(interface{ Warm() }); ok {
		w.Warm()
	}
}

// Close releases both models.
func (x *QueryExport) Close() error {
	return errors.Join(embed.Close(x.query), embed.Close(x.Embedder))
}

// State is the export's load state: queries wait for it alone.
func (x *QueryExport) State() (embed.LoadState, error) {
	if l, ok := x.query.(*embed.Lazy); ok {
		return l.State()
	}
	return embed.Loaded, nil
}
