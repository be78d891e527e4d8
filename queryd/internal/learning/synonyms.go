package learning

import (
	"context"
	"log/slog"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/rewrite"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Synonyms reads learned synonyms; *store.Corpus is one.
type Synonyms interface {
	LearnedSynonyms(ctx context.Context, terms, layers []string) ([]string, error)
}

// WithSynonyms returns strata_ask's rewriter with the learned synonyms
// applied: the question with the synonyms of its content words (for the
// layers it searches) appended becomes the second variant, before inner's
// rewrites. inner may be nil (no rewrite provider). A failed read leaves
// the synonyms out and is logged; it never fails the call.
func WithSynonyms(inner ask.Rewriter, src Synonyms, log *slog.Logger) ask.Rewriter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, question string, layers []store.Layer) ([]string, string) {
		names := make([]string, len(layers))
		for i, l := range layers {
			names[i] = l.Name
		}
		syns, err := src.LearnedSynonyms(ctx, learn.ContentWords(question), names)
		if err != nil {
			log.Warn("learned_synonyms_unavailable", "err", err.Error())
		}
		base, _ := rewrite.Variants(ctx, nil, question, nil, syns)
		if inner == nil {
			return base, ""
		}
		vs, kind := inner(ctx, question, layers)
		if len(vs) > 1 {
			base = append(base, vs[1:]...)
		}
		return rewrite.Merge(base...), kind
	}
}
