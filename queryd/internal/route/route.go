// Package route chooses the layers a question is searched in when it names
// none, and decides when a routed search falls back to every layer.
//
// A layer's routing_patterns choose it first: the syntax is
// schema.RoutePattern's (a slashed regular expression, or words matched as
// whole words, both ignoring case), the same that ingestd checks when a
// layer is added. A pattern stored before that check that is not a valid
// expression never matches. A short keyword pattern (fewer than
// MinPatternChars letters and digits: "go", "EU", "tax") is weak: it routes
// alone only when it is in capitals and written so in the question (an
// acronym), otherwise only when the layer's description shares another
// word with the question. When no pattern routes, the layers' descriptions
// do (DescriptionScores): the question's content words are weighted by how
// few descriptions hold them, and the best layer is chosen when it clearly
// leads (DescriptionMargin). Learned affinity (DecideLearned, see
// affinity.go) comes between them: when no pattern routes, a layer the
// learning loop has tied to the question's terms routes before the
// descriptions are read.
package route

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

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

// MinPatternChars: a keyword pattern with fewer letters and digits is weak
// (see the package comment).
const MinPatternChars = 4

// DescriptionMargin: descriptions route to the best-scoring layer only when
// the next one scores at most this share of its score.
const DescriptionMargin = 0.5

// patternMatch says whether the pattern routes the query: strong, or weak
// (a short keyword pattern found in the question in any case).
func patternMatch(p, query string) (matched, weak bool) {
	re := compilePattern(p)
	if re == nil || !re.MatchString(query) {
		return false, false
	}
	t := strings.TrimSpace(p)
	if strings.HasPrefix(t, "/") && strings.HasSuffix(t, "/") && len(t) > 2 {
		return true, false
	}
	n := 0
	for _, c := range t {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			n++
		}
	}
	if n >= MinPatternChars {
		return true, false
	}
	// A short acronym written in capitals, as in the pattern, is specific.
	if strings.ToUpper(t) == t && strings.ToLower(t) != t {
		for _, w := range words(query) {
			if w == t {
				return true, false
			}
		}
	}
	return true, true
}

// Match returns the layers whose routing patterns match the query, in the
// order given, short patterns included (see Decide for how they route).
func Match(query string, layers []store.Layer) []store.Layer {
	var out []store.Layer
	for _, l := range layers {
		for _, p := range l.RoutingPatterns {
			if ok, _ := patternMatch(p, query); ok {
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
	// Why says, for each chosen layer when Routed, what chose it.
	Why []Why
	// firm: see Strong.
	firm bool
}

// Why is what chose one layer.
type Why struct {
	Layer string `json:"layer"`
	// By is "document" (the question names a document of the layer, its
	// file in Pattern), "pattern", "affinity", "description" or "content"
	// (the layer's own chunks hold the question's words far more often
	// than the others do).
	By string `json:"by"`
	// Pattern is the routing pattern that matched; Words the question's
	// words found in the description, or (affinity) the question's terms
	// the learning loop tied to the layer, stemmed.
	Pattern string   `json:"pattern,omitempty"`
	Words   []string `json:"words,omitempty"`
	// Score is the layer's affinity score (learn.AffinityScores).
	Score float64 `json:"score,omitempty"`
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

// Strong says whether the layers were chosen on firm evidence: a routing
// pattern, the learning loop's affinity or the layer's own words, or a
// description whose layer's own chunks also hold the question's words more
// than any other layer's do; a word of a description alone is not. A
// fallback for too few results keeps a strong decision's results first.
func (d Decision) Strong() bool { return d.Routed && d.firm }

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

// Decide routes the query over all layers: the layers a routing pattern
// chooses (a short pattern only as the package comment says), else the
// layer whose description clearly leads. When routing chooses none, or
// all, every layer is searched and there is nothing to fall back from.
func Decide(query string, all []store.Layer) Decision {
	return DecideLearned(query, all, nil)
}

// DecideLearned is Decide with the learned affinities of the question's
// terms: when no pattern routes, the layer affinity clearly leads with
// (Affinity) is chosen before the descriptions are read.
func DecideLearned(query string, all []store.Layer, learned []store.LayerAffinity) Decision {
	return DecideWith(query, all, learned, nil)
}

// DecideWith is DecideLearned with routing by the layers' own words last:
// when nothing else routes, words (called only then; nil or false: not
// available) gives the question's statistics in each layer, and the layer
// that clearly leads by ContentScores is chosen.
func DecideWith(query string, all []store.Layer, learned []store.LayerAffinity, words func() (store.LayerWords, bool)) Decision {
	desc := DescriptionScores(query, all)
	var chosen []store.Layer
	var why []Why
	for i, l := range all {
		for _, p := range l.RoutingPatterns {
			ok, weak := patternMatch(p, query)
			if !ok {
				continue
			}
			if weak && !supports(desc[i], p) {
				continue
			}
			chosen = append(chosen, l)
			why = append(why, Why{Layer: l.Name, By: "pattern", Pattern: p})
			break
		}
	}
	if len(chosen) == 0 {
		if w, ok := Affinity(query, all, learned); ok {
			for _, l := range all {
				if l.Name == w.Layer {
					chosen, why = []store.Layer{l}, []Why{w}
				}
			}
		}
	}
	firm := len(chosen) > 0 // a pattern or learned affinity
	if len(chosen) == 0 {
		if best, ok := leader(desc); ok {
			chosen = []store.Layer{all[best]}
			why = []Why{{Layer: all[best].Name, By: "description", Words: desc[best].Words}}
			// A word of a description is weak evidence on its own; it is
			// firm when the layer's own chunks also hold the question's
			// words more than any other layer's do.
			if words != nil {
				if w, ok := words(); ok {
					scores := ContentScores(w, all)
					top := 0
					for i := range scores {
						if scores[i].Score > scores[top].Score {
							top = i
						}
					}
					firm = top == best && scores[best].Score >= ContentMinScore
				}
			}
		}
	}
	if len(chosen) == 0 && words != nil && len(all) > 1 {
		if w, ok := words(); ok {
			scores := ContentScores(w, all)
			if best, ok := contentLeader(scores); ok {
				chosen = []store.Layer{all[best]}
				why = []Why{{Layer: all[best].Name, By: "content", Words: scores[best].Words, Score: math.Round(scores[best].Score*100) / 100}}
				firm = true
			}
		}
	}
	if len(chosen) == 0 || len(chosen) == len(all) {
		return Decision{Layers: all, All: all}
	}
	return Decision{Layers: chosen, All: all, Routed: true, Why: why, firm: firm}
}

// supports says whether the description shares a word with the question
// other than the pattern's own.
func supports(d DescriptionScore, pattern string) bool {
	own := map[string]bool{}
	for _, w := range contentTerms(pattern) {
		own[w] = true
	}
	for _, w := range d.Words {
		if !own[w] {
			return true
		}
	}
	return false
}

// leader returns the layer whose description clearly leads: the best
// score is positive and the next is at most DescriptionMargin of it.
func leader(scores []DescriptionScore) (int, bool) {
	v := make([]float64, len(scores))
	for i, d := range scores {
		v[i] = d.Score
	}
	return clearLead(v, math.SmallestNonzeroFloat64, DescriptionMargin)
}

// clearLead returns the index of the best score when it is at least least
// and the next best is at most margin of it.
func clearLead(scores []float64, least, margin float64) (int, bool) {
	best, second := -1, 0.0
	for i, v := range scores {
		switch {
		case best < 0 || v > scores[best]:
			if best >= 0 {
				second = math.Max(second, scores[best])
			}
			best = i
		default:
			second = math.Max(second, v)
		}
	}
	if best < 0 || scores[best] < least || second > margin*scores[best] {
		return 0, false
	}
	return best, true
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
	// Exact is true when it returned a section the question names: that
	// is a confident answer, whatever the similarities.
	Exact bool
}

// Fallback returns why a routed search must be run again over every layer:
// it found fewer than top_k passages, or only low-confidence ones (an exact
// section the question names, found in the routed layers, is no
// low-confidence answer). It returns "" when the routed search stands.
func Fallback(o Outcome) Reason {
	switch {
	case o.Found < o.Wanted:
		return InsufficientResults
	case o.Low && o.Judged && !o.Exact:
		return LowConfidence
	}
	return ""
}

// ByDocument routes to the layers of the documents the question names
// (files, by layer id: "PEP 572" is pep-0572.rst of layer peps): firm
// evidence, before any pattern. It does not route when those layers are
// all the layers.
func ByDocument(all []store.Layer, files map[int64][]string) Decision {
	d := Decision{Layers: all, All: all}
	var chosen []store.Layer
	var why []Why
	for _, l := range all {
		if fs := files[l.ID]; len(fs) > 0 {
			chosen = append(chosen, l)
			why = append(why, Why{Layer: l.Name, By: "document", Pattern: strings.Join(fs, ", ")})
		}
	}
	if len(chosen) == 0 || len(chosen) == len(all) {
		return d
	}
	return Decision{Layers: chosen, All: all, Routed: true, Why: why, firm: true}
}
