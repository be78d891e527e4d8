package route

import (
	"math"
	"sort"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Affinity returns the layer the learned affinities route the question to,
// among the layers given: the question's terms (learn.Terms) score each
// layer (learn.AffinityScores), and the best layer is chosen when its score
// reaches learn.AffinityMinScore and learn.AffinityMinShare of the
// question's terms, and the next layer scores at most DescriptionMargin of
// it. ok is false when affinity does not route.
func Affinity(query string, layers []store.Layer, learned []store.LayerAffinity) (Why, bool) {
	if len(learned) == 0 {
		return Why{}, false
	}
	known := map[string]bool{}
	for _, l := range layers {
		known[l.Name] = true
	}
	terms := learn.Terms(query)
	var ev []learn.Evidence
	for _, a := range learned {
		if known[a.Layer] {
			ev = append(ev, learn.Evidence{Term: a.Term, Layer: a.Layer, Count: a.Evidence})
		}
	}
	scores := learn.AffinityScores(terms, ev)
	best, second := "", 0.0
	names := make([]string, 0, len(scores))
	for l := range scores {
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		switch {
		case best == "" || scores[l] > scores[best]:
			if best != "" {
				second = math.Max(second, scores[best])
			}
			best = l
		default:
			second = math.Max(second, scores[l])
		}
	}
	s := scores[best]
	if best == "" || s < learn.AffinityMinScore || s < learn.AffinityMinShare*float64(len(terms)) || second > DescriptionMargin*s {
		return Why{}, false
	}
	var words []string
	for _, e := range ev {
		if e.Layer == best && e.Count > 0 {
			for _, t := range terms {
				if t == e.Term {
					words = append(words, t)
				}
			}
		}
	}
	sort.Strings(words)
	return Why{Layer: best, By: "affinity", Words: words, Score: math.Round(s*100) / 100}, true
}
