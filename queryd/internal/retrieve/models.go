package retrieve

import (
	"context"
	"sort"

	"github.com/stratakb/stratakb/embed"
)

// chooseModel picks, once per run, the model the query is embedded with:
// the configured one unless the searched layers' vectors are of another
// model. Each layer counts for its newest complete model; the model most
// layers count for wins, the configured model winning a tie. A layer whose
// vectors are of another model than the winner's is searched by the
// lexical channel alone and named in the outcome's MissingVectors. When
// the winner cannot be loaded here the configured model is kept.
func (r *Run) chooseModel(ctx context.Context, ids []int64) {
	r.modelOnce.Do(func() {
		if r.e.opt.Models == nil || len(ids) == 0 {
			return
		}
		models, err := r.mv.getLayerModels(ctx, r.e.store, ids)
		if err != nil {
			return
		}
		name := pickModel(models, ids, r.e.Model())
		if name == "" || name == r.e.Model() {
			return
		}
		if e, err := r.e.opt.Models(name); err == nil && e != nil {
			r.modelMu.Lock()
			r.emb = e
			r.modelMu.Unlock()
		}
	})
}

// pickModel returns the model most of the layers have as their newest
// complete model; def wins a tie, then the name that sorts first. "" when
// no layer has complete vectors.
func pickModel(models map[int64][]string, ids []int64, def string) string {
	count := map[string]int{}
	for _, id := range ids {
		if ms := models[id]; len(ms) > 0 {
			count[ms[0]]++
		}
	}
	if len(count) == 0 {
		return ""
	}
	names := make([]string, 0, len(count))
	for n := range count {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if count[a] != count[b] {
			return count[a] > count[b]
		}
		if (a == def) != (b == def) {
			return a == def
		}
		return a < b
	})
	return names[0]
}

// embedder is the run's model: the one chooseModel picked, or the
// configured one before a search chose.
func (r *Run) embedder() embed.Embedder {
	r.modelMu.Lock()
	defer r.modelMu.Unlock()
	if r.emb != nil {
		return r.emb
	}
	return r.e.opt.Embedder
}

// queryEncoder names the export the run's model embeds queries with, when
// it is not the model itself (embedding.QueryExport); "" otherwise.
func (r *Run) queryEncoder() string {
	if e, ok := r.embedder().(interface{ QueryEncoder() string }); ok {
		return e.QueryEncoder()
	}
	return ""
}

// modelName is the name of the run's model's vectors, "" without one.
func (r *Run) modelName() string {
	if e := r.embedder(); e != nil {
		return e.Model().Name
	}
	return ""
}
