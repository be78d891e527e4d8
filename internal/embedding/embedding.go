// Package embedding loads the configured embedding provider for either
// daemon: the local USE-lite model through ONNX Runtime, or an
// OpenAI-compatible endpoint.
package embedding

import (
	"log/slog"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/uselite"
)

// Load builds the embedder the configuration names. For the local provider
// it loads the model (a missing file gives one clear error naming it).
func Load(cfg embed.Config, logger *slog.Logger) (embed.Embedder, error) {
	return embed.New(cfg, logger, func(c embed.Config) (embed.Embedder, error) {
		m, err := uselite.Load(uselite.Config{ModelDir: c.ModelDir, LibraryPath: c.LibraryPath,
			IntraOpThreads: c.IntraOpThreads, BatchSize: c.BatchSize})
		if err != nil {
			return nil, err
		}
		return embed.Adapt(m), nil
	})
}
