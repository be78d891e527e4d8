package learning

import (
	"context"
	"log/slog"
	"slices"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/rewrite"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Lookup reads what the promoter learned for a question; *store.Corpus is
// one.
type Lookup interface {
	LearnedSynonyms(ctx context.Context, terms, layers []string) ([]string, error)
	LearnedRewrites(ctx context.Context, terms, layers []string) ([]store.LearnedRewrite, error)
}

// WithLearned returns strata_ask's rewriter with what was learned applied.
// The question as asked comes first. When proven rewrites were learned for
// a question like this one (learn.Like, for the layers it searches), they
// come next, at most learn.MaxRewrites, and inner (the language model) is
// not called at all: a proven rewrite replaces it. Then the question with
// the learned synonyms of its content words appended. Without a proven
// rewrite, inner's rewrites follow the synonyms; inner may be nil (no
// rewrite provider). A failed read leaves that part out and is logged; it
// never fails the call.
func WithLearned(inner ask.Rewriter, src Lookup, log *slog.Logger) ask.Rewriter {
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
		if proven := ProvenRewrites(ctx, src, question, names, log); len(proven) > 0 {
			return rewrite.Merge(slices.Concat([]string{question}, proven, base[1:])...), ""
		}
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

// ProvenRewrites returns the learned rewrites that serve the question in
// the layers: learned from a question like it, at most learn.MaxRewrites,
// most proven first, none the question itself.
func ProvenRewrites(ctx context.Context, src Lookup, question string, layers []string, log *slog.Logger) []string {
	terms := learn.Terms(question)
	rws, err := src.LearnedRewrites(ctx, terms, layers)
	if err != nil {
		log.Warn("learned_rewrites_unavailable", "err", err.Error())
		return nil
	}
	var out []string
	for _, r := range rws {
		if len(out) == learn.MaxRewrites {
			break
		}
		if learn.Like(r.Terms, terms) && r.Rewrite != question && !slices.Contains(out, r.Rewrite) {
			out = append(out, r.Rewrite)
		}
	}
	return out
}
