package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/stratakb/stratakb/embed/bert"
)

// crossEncoder is RERANKING_PROVIDER=onnx: a sequence-classification
// export (a BERT-family cross-encoder, a pair of texts in, one logit out)
// run in process. Its probability is the rerank basis, and it scores
// extractive sentences too. It is loaded on first use, so a command that
// reranks nothing never pays for it.
type crossEncoder struct {
	dir, lib string
	threads  int

	once sync.Once
	m    *bert.CrossEncoder
	err  error
}

// crossMaxTokens is the pair's truncation length: BERT's 512 positions,
// which every BERT-family cross-encoder has.
const crossMaxTokens = 512

func newCrossEncoder(cfg Config) *crossEncoder {
	return &crossEncoder{dir: cfg.Reranking.Model, lib: cfg.Embed.LibraryPath, threads: cfg.Embed.IntraOpThreads}
}

// Name says which cross-encoder, by its folder's name.
func (c *crossEncoder) Name() string { return "cross-encoder:" + filepath.Base(c.dir) }

// Rerank returns each passage's probability of answering the query.
func (c *crossEncoder) Rerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	c.once.Do(func() {
		c.m, c.err = bert.LoadCrossEncoder(bert.CrossConfig{ModelDir: c.dir, LibraryPath: c.lib,
			IntraOpThreads: c.threads, MaxTokens: crossMaxTokens})
	})
	if c.err != nil {
		return nil, fmt.Errorf("load the cross-encoder in %s: %w", c.dir, c.err)
	}
	return c.m.Score(ctx, query, passages)
}

// Close releases the model when it was loaded.
func (c *crossEncoder) Close() error {
	if c.m != nil {
		return c.m.Close()
	}
	return nil
}
