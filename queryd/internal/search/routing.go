package search

import (
	"context"
	"regexp"
	"sync"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// Routing patterns: a layer's routing_patterns choose it for a query that
// names no layers. The syntax is schema.RoutePattern's (a slashed regular
// expression, or words matched as whole words, both ignoring case), the same
// that ingestd checks when a layer is added. A pattern stored before that
// check that is not a valid expression never matches.
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

// Route returns the layers whose routing patterns match the query, in the
// order given.
func Route(query string, layers []store.Layer) []store.Layer {
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

// routed searches the layers routing chooses. When it chooses none (or all),
// every layer is searched and there is nothing to fall back from. When the
// routed search returns fewer than top_k results, or only low-confidence
// ones, every layer is searched again and the response says so; results
// from layers routing had not chosen are marked.
func (st *state) routed(ctx context.Context, all []store.Layer) (*Response, error) {
	chosen := Route(st.req.Query, all)
	if len(chosen) == 0 || len(chosen) == len(all) {
		return st.run(ctx, all, nil)
	}
	o, err := st.pass(ctx, chosen, nil)
	if err != nil {
		return nil, err
	}
	reason := ""
	switch {
	case o.nonExactCount < st.req.TopK:
		reason = "insufficient_results"
	case o.resp.Confidence == "low" && o.simAvailable:
		reason = "low_confidence"
	}
	if reason == "" {
		if o.resp.Explain != nil {
			o.resp.Explain.RoutedLayers = layerNames(chosen)
		}
		return o.resp, nil
	}
	set := map[int64]bool{}
	for _, l := range chosen {
		set[l.ID] = true
	}
	resp, err := st.run(ctx, all, set)
	if err != nil {
		return nil, err
	}
	resp.RoutingFallback = &RoutingFallback{Reason: reason, SearchedLayers: "all"}
	if resp.Explain != nil {
		resp.Explain.RoutedLayers = layerNames(chosen)
	}
	return resp, nil
}
