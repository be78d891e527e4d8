package search

import (
	"context"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// routed searches the layers routing chooses (patterns, then learned
// affinity, then descriptions: route.DecideLearned). When it chooses none (or all), every layer is searched and
// there is nothing to fall back from. When the routed search returns fewer
// than top_k results, or only low-confidence ones without an exact section,
// every layer is searched again and the response says so; results from
// layers routing had not chosen are marked. Explain says what chose each
// routed layer.
func (st *state) routed(ctx context.Context, all []store.Layer) (*Response, error) {
	d := route.DecideLearned(st.req.Query, all, st.learned)
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
			o.resp.Explain.RoutedLayers, o.resp.Explain.Routing = layerNames(chosen), d.Why
		}
		return o.resp, nil
	}
	resp, err := st.run(ctx, all, &d)
	if err != nil {
		return nil, err
	}
	resp.RoutingFallback = &RoutingFallback{Reason: string(reason), SearchedLayers: "all"}
	if resp.Explain != nil {
		resp.Explain.RoutedLayers, resp.Explain.Routing = layerNames(chosen), d.Why
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
