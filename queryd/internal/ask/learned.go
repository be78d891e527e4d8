package ask

import (
	"context"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Affinities reads the layer affinities the learning loop learned for a
// question's terms; *store.Corpus is one.
type Affinities interface {
	LayerAffinities(ctx context.Context, terms []string) ([]store.LayerAffinity, error)
}

// affinities returns the learned affinities of the question's terms for
// routing; none without a source, and none (logged) when the read fails:
// routing then uses patterns and descriptions only.
func (a *Asker) affinities(ctx context.Context, question string) []store.LayerAffinity {
	if a.opt.Affinities == nil {
		return nil
	}
	out, err := a.opt.Affinities.LayerAffinities(ctx, learn.Terms(question))
	if err != nil {
		a.log.Warn("layer_affinities_unavailable", "err", err.Error())
		return nil
	}
	return out
}
