// Package embedding loads the configured embedding provider for either
// daemon: a local model through ONNX Runtime (a sentence-transformers
// export run by package bert, or USE-lite), or an OpenAI-compatible
// endpoint. A Set also loads, when a layer needs them, the other local
// models whose vectors the database holds.
package embedding

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/bert"
	"github.com/stratakb/stratakb/embed/uselite"
)

// Load builds the embedder the configuration names. For the local provider
// it loads the model (a missing file gives one clear error naming it); the
// result then also has EmbedPassages, which embeds chunks as the model
// wants passages embedded (docs/embeddings.md).
func Load(cfg embed.Config, logger *slog.Logger) (embed.Embedder, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return embed.New(cfg, logger, loadLocal)
}

// Lazy is Load for the daemons: it checks the configuration now, but the
// local model is loaded only when the first vector is needed (see
// embed.Lazy), so a command that embeds nothing never pays for it. onFail,
// when not nil, is called once with the error of a failed load. A remote
// provider loads nothing and is returned as Load returns it.
func Lazy(cfg embed.Config, logger *slog.Logger, onFail func(error)) (embed.Embedder, error) {
	if cfg.Provider != embed.ProviderLocal {
		return Load(cfg, logger)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lm, err := resolveLocal(cfg)
	if err != nil {
		return nil, err
	}
	info := embed.ModelInfo{Name: lm.vectorName(), Dims: lm.dims()}
	load := func(c embed.Config) (embed.Embedder, error) { return loadModel(c, lm) }
	return embed.NewLazy(info, func() (embed.Embedder, error) { return embed.New(cfg, logger, load) }, onFail), nil
}

func loadLocal(c embed.Config) (embed.Embedder, error) {
	lm, err := resolveLocal(c)
	if err != nil {
		return nil, err
	}
	return loadModel(c, lm)
}

// loadModel loads the resolved local model lm with c's library and threads.
func loadModel(c embed.Config, lm localModel) (embed.Embedder, error) {
	if lm.useLite {
		m, err := uselite.Load(uselite.Config{ModelDir: lm.dir, LibraryPath: c.LibraryPath,
			IntraOpThreads: c.IntraOpThreads, BatchSize: c.BatchSize})
		if err != nil {
			return nil, err
		}
		return local{Embedder: embed.Adapt(m), passages: m.EmbedPassages, close: m.Close}, nil
	}
	// EMBEDDING_BATCH_SIZE is how many chunks an embed job hands over at a
	// time; how many of them go to ONNX Runtime in one call is the
	// model's own measured default (bert.DefaultBatchSize).
	m, err := bert.Load(bert.Config{ModelDir: lm.dir, LibraryPath: c.LibraryPath,
		IntraOpThreads: c.IntraOpThreads, FewCalls: c.FewCalls, Spec: lm.spec})
	if err != nil {
		return nil, err
	}
	return local{Embedder: embed.Adapt(m), passages: m.EmbedPassages, close: m.Close}, nil
}

// local is a local model: Embed for queries, EmbedPassages for chunks.
type local struct {
	embed.Embedder
	passages func(ctx context.Context, texts []string) ([][]float32, error)
	close    func() error
}

// EmbedPassages embeds whole passages, one vector each.
func (l local) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := l.passages(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed passages with %s: %w", l.Model().Name, err)
	}
	return vs, nil
}

// Close releases the model's ONNX Runtime session.
func (l local) Close() error { return l.close() }
