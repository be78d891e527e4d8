// Package route chooses the layers a question is searched in when it names
// none, and decides when a routed search falls back to every layer.
//
// A layer's routing_patterns choose it: the syntax is schema.RoutePattern's
// (a slashed regular expression, or words matched as whole words, both
// ignoring case), the same that ingestd checks when a layer is added. A
// pattern stored before that check that is not a valid expression never
// matches. Layer descriptions do not route yet; learned affinity (a later
// issue) will be one more input to Decide.
package route

import (
	"regexp"
	"sort"
	"sync"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

var patternCache sync.Map // pattern → *regexp.Regexp (nil when invalid)

func compilePattern(p string) *regexp.Regexp {
	if v, ok := patternCache.Load(p); ok {
		re, _ := v.(*regexp.Regexp)
		return re
	}
	re, _ := schema.RoutePattern(p) // nil when invalid
	patternCache.Store(p, re)
	return re
}

// Match returns the layers whose routing patterns match the query, in the
// order given.
func Match(query string, layers []store.Layer) []store.Layer {
	var out []store.Layer
	for _, l := range layers {
		for _, p := range l.RoutingPatterns {
			if re := compilePattern(p); re != nil && re.MatchString(query) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// Decision is where a question that names no layers is searched.
type Decision struct {
	// Layers are the layers to search first: the chosen ones when Routed,
	// else all of them.
	Layers []store.Layer
	// All is every layer, what a fallback searches.
	All []store.Layer
	// Routed is true when routing chose some layers but not all: only then
	// can the search fall back.
	Routed bool
}

// Chosen returns the names of the layers routing chose, sorted; nil when
// it did not route.
func (d Decision) Chosen() []string {
	if !d.Routed {
		return nil
	}
	out := make([]string, len(d.Layers))
	for i, l := range d.Layers {
		out[i] = l.Name
	}
	sort.Strings(out)
	return out
}

// InRouted says whether the layer was one routing chose. Without routing
// every layer is.
func (d Decision) InRouted(id int64) bool {
	if !d.Routed {
		return true
	}
	for _, l := range d.Layers {
		if l.ID == id {
			return true
		}
	}
	return false
}

// Decide routes the query over all layers. When routing chooses none, or
// all, every layer is searched and there is nothing to fall back from.
func Decide(query string, all []store.Layer) Decision {
	chosen := Match(query, all)
	if len(chosen) == 0 || len(chosen) == len(all) {
		return Decision{Layers: all, All: all}
	}
	return Decision{Layers: chosen, All: all, Routed: true}
}

// Reason is why a routed search fell back to every layer; "" when it did
// not.
type Reason string

// The fallback reasons, as strata_search reports them.
const (
	InsufficientResults Reason = "insufficient_results"
	LowConfidence       Reason = "low_confidence"
)

// Outcome is what the fallback rule reads of a routed search.
type Outcome struct {
	// Found is how many passages it returned besides exact sections.
	Found int
	// Wanted is top_k.
	Wanted int
	// Low is true when its confidence was low; Judged when that confidence
	// was judged on similarities (not on words only).
	Low, Judged bool
}

// Fallback returns why a routed search must be run again over every layer:
// it found fewer than top_k passages, or only low-confidence ones. It
// returns "" when the routed search stands.
func Fallback(o Outcome) Reason {
	switch {
	case o.Found < o.Wanted:
		return InsufficientResults
	case o.Low && o.Judged:
		return LowConfidence
	}
	return ""
}
