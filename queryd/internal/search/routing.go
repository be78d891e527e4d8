package search

import (
	"context"
	"math"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// routed searches the layers routing chooses (patterns, then learned
// affinity, then descriptions, then the layers' own words:
// route.DecideWith). When it chooses none (or all), every layer is searched
// and there is nothing to fall back from. When the routed search returns
// fewer than top_k results, or only low-confidence ones without an exact
// section, every layer is searched again and the response says so; results
// from layers routing had not chosen are marked. A fallback for too few
// results keeps the routed search's results first and fills the rest from
// the search over every layer (routedFirst); one for low confidence takes
// that search's order. Explain says what chose each routed layer.
func (st *state) routed(ctx context.Context, all []store.Layer) (*Response, error) {
	d := route.DecideWith(st.req.Query, all, st.learned, st.words)
	if !d.Routed {
		return st.run(ctx, all, nil)
	}
	chosen := d.Layers
	o, err := st.pass(ctx, chosen, nil)
	if err != nil {
		return nil, err
	}
	reason := route.Fallback(route.Outcome{Found: len(o.resp.Results), Wanted: st.req.TopK,
		Low: o.resp.Confidence == "low", Judged: o.simAvailable, Exact: o.exactCount > 0})
	if reason == "" {
		if o.resp.Explain != nil {
			o.resp.Explain.RoutedLayers, o.resp.Explain.Routing = store.LayerNames(chosen), d.Why
		}
		return o.resp, nil
	}
	resp, err := st.run(ctx, all, &d)
	if err != nil {
		return nil, err
	}
	if reason == route.InsufficientResults && d.Strong() {
		resp.Results = routedFirst(o.resp.Results, resp.Results)
	}
	resp.RoutingFallback = &RoutingFallback{Reason: string(reason), SearchedLayers: "all"}
	if resp.Explain != nil {
		resp.Explain.RoutedLayers, resp.Explain.Routing = store.LayerNames(chosen), d.Why
	}
	return resp, nil
}

// affinities returns the learned affinities of the query's terms; none
// without a source, and none (logged) when the read fails.
func (s *Searcher) affinities(ctx context.Context, query string) []store.LayerAffinity {
	if s.opt.Affinities == nil {
		return nil
	}
	out, err := s.opt.Affinities.LayerAffinities(ctx, learn.Terms(query))
	if err != nil {
		s.logger.Warn("layer_affinities_unavailable", "err", err.Error())
		return nil
	}
	return out
}

// routedFirst is a fallback's results when a strongly routed search
// (route.Decision.Strong) found too few: the exact sections first, as the
// search over every layer orders them; then the routed layers' results,
// those the search over every layer returned in its order, then those only
// the routed search returned, in its order; then the other layers' results,
// as many as the search over every layer returned in all. A result's score
// is capped at the one before it, so scores still fall down the list.
func routedFirst(routed, wide []Result) []Result {
	key := func(r Result) string { return r.Layer + "\x00" + r.Ref }
	var out, rest []Result
	taken := map[string]bool{}
	for _, r := range wide {
		if r.Match == "exact" {
			// Exact sections stay first, the routed layers' before the
			// others' (pass).
			out = append(out, r)
			taken[key(r)] = true
		}
	}
	for _, r := range wide {
		switch {
		case taken[key(r)]:
		case !r.OutsideRouting: // a routed layer's
			out = append(out, r)
			taken[key(r)] = true
		default:
			rest = append(rest, r)
		}
	}
	for _, r := range routed {
		if !taken[key(r)] {
			out = append(out, r)
		}
	}
	for _, r := range rest {
		if len(out) >= max(len(wide), len(routed)) {
			break
		}
		out = append(out, r)
	}
	for i := 1; i < len(out); i++ {
		out[i].Score = math.Min(out[i].Score, out[i-1].Score)
	}
	return out
}
