package app

import (
	"context"
	"fmt"
	"log/slog"

	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/rerank"
	"github.com/stratakb/stratakb/queryd/internal/rewrite"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// newRewriter returns strata_ask's query rewriter for the configured
// provider: nil without one. mcp_sampling asks the calling client's model,
// per call, when the client declared sampling; otherwise the question is
// searched as written.
func newRewriter(cfg Config, log *slog.Logger) (askpkg.Rewriter, error) {
	rc := cfg.rewriteConfig()
	infos := func(layers []store.Layer) []rewrite.LayerInfo {
		out := make([]rewrite.LayerInfo, len(layers))
		for i, l := range layers {
			out[i] = rewrite.LayerInfo{Name: l.Name, Description: l.Description}
		}
		return out
	}
	switch rc.Provider {
	case rewrite.ProviderNone:
		return nil, nil
	case rewrite.ProviderMCPSampling:
		return func(ctx context.Context, q string, layers []store.Layer) ([]string, string) {
			sample := caller.SamplerFrom(ctx)
			if sample == nil {
				return []string{q}, ""
			}
			s := rewrite.NewSampling(func(ctx context.Context, system, user string) (string, error) {
				return sample(ctx, system, user, rc.MaxTokens)
			}, rc.Timeout)
			return rewrite.Variants(ctx, s, q, infos(layers), nil)
		}, nil
	}
	r, err := rewrite.New(rc, log)
	if err != nil {
		return nil, fmt.Errorf("query rewriting: %w", err)
	}
	return func(ctx context.Context, q string, layers []store.Layer) ([]string, string) {
		return rewrite.Variants(ctx, r, q, infos(layers), nil)
	}, nil
}

// newReranker returns strata_ask's reranker, or nil and the reason there
// is none. cross is the in-process cross-encoder when
// RERANKING_PROVIDER=onnx.
func newReranker(cfg Config, log *slog.Logger, cross *crossEncoder) (askpkg.Reranker, string, error) {
	if !cfg.Reranking.Enabled {
		return nil, "reranking is off (RERANKING_ENABLED=false)", nil
	}
	if cross != nil {
		return askpkg.Texts{R: cross}, "", nil
	}
	if cfg.Reranking.HTTP.Provider == rerank.ProviderHTTP {
		h, err := rerank.NewHTTP(cfg.rerankHTTP(), log)
		if err != nil {
			return nil, "", fmt.Errorf("reranking: %w", err)
		}
		return askpkg.Texts{R: h}, "", nil
	}
	if err := lrank.Default.Check(); err != nil {
		return nil, "", fmt.Errorf("reranking: %w", err)
	}
	return askpkg.Offline{Model: lrank.Default}, "", nil
}
