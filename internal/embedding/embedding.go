// Package embedding loads the configured embedding provider for either
// daemon: the local USE-lite model through ONNX Runtime, or an
// OpenAI-compatible endpoint.
package embedding

import (
	"context"
	"log/slog"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/uselite"
)

// Load builds the embedder the configuration names. For the local provider
// it loads the model (a missing file gives one clear error naming it); the
// result then also has EmbedPassages, which represents a chunk longer than
// the model reads by the mean of its windows (docs/embeddings.md).
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
	info := embed.ModelInfo{Name: uselite.ModelName, Dims: uselite.Dims}
	return embed.NewLazy(info, func() (embed.Embedder, error) { return Load(cfg, logger) }, onFail), nil
}

func loadLocal(c embed.Config) (embed.Embedder, error) {
	m, err := uselite.Load(uselite.Config{ModelDir: c.ModelDir, LibraryPath: c.LibraryPath,
		IntraOpThreads: c.IntraOpThreads, BatchSize: c.BatchSize})
	if err != nil {
		return nil, err
	}
	return local{Embedder: embed.Adapt(m), m: m}, nil
}

// local is the local model: Embed for queries, EmbedPassages for chunks.
type local struct {
	embed.Embedder
	m *uselite.Model
}

// EmbedPassages embeds whole passages, one vector each.
func (l local) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	return l.m.EmbedPassages(ctx, texts)
}

// Close releases the model's ONNX Runtime session.
func (l local) Close() error { return l.m.Close() }
