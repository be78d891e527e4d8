package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// state is one strata_search call: the engine's run (which embeds the
// query and reads the parameters once, also when routing falls back to all
// layers) and the request.
type state struct {
	s   *Searcher
	req Request
	// learned are the layer affinities of the query's terms, for routing.
	learned []store.LayerAffinity
	// words reads the query's statistics in each layer, for routing by
	// the layers' own words (nil: not available).
	words func() (store.LayerWords, bool)
	q     *retrieve.Run
	// warned and paramsWarned are set once the degraded embedding, and a
	// failure to read the model's parameters, have been logged.
	warned, paramsWarned bool
}

// runOutcome is what one pass over a set of layers produced, turned into a
// response.
type runOutcome struct {
	resp          *Response
	simAvailable  bool
	nonExactCount int
	// exactCount is how many exact sections it returned.
	exactCount int
}

// run searches the layers. d, when routed, is the routing decision whose
// fallback this is: results from layers it had not chosen are marked.
func (st *state) run(ctx context.Context, layers []store.Layer, d *route.Decision) (*Response, error) {
	o, err := st.pass(ctx, layers, d)
	if err != nil {
		return nil, err
	}
	return o.resp, nil
}

func (st *state) pass(ctx context.Context, layers []store.Layer, d *route.Decision) (*runOutcome, error) {
	req := st.req
	out, err := st.q.Search(ctx, layers)
	if err != nil {
		var se *retrieve.StoreError
		if errors.As(err, &se) {
			return nil, store.CallerError(ctx, se.Err, se.Op)
		}
		return nil, err
	}
	if perr := st.q.ParamsError(); perr != nil && !st.paramsWarned {
		st.paramsWarned = true
		st.s.logger.Warn("search_params", "model", out.Model, "err", perr.Error())
	}
	params := out.Params
	resp := &Response{Status: "ok", Query: req.Query, SearchedLayers: store.LayerNames(layers), Results: []Result{},
		Basis: "similarity"}
	ex := &Explain{KeywordSlots: params.KeywordSlots, References: out.Exact.References}
	var degraded, notes []string
	if n := exactNote(out, len(req.Layers) == 0, len(req.MetadataFilter) > 0); n != "" {
		notes = append(notes, n)
	}
	if out.LexicalRan {
		ex.Channels = append(ex.Channels, "lexical")
		ex.ExactTerms = out.ExactTerms
		ex.LexicalCandidates = describePath(out.Lexical)
	}
	if e := out.EmbedError; e != nil {
		reason := embedReason(e)
		if !st.warned {
			st.warned = true
			st.s.logger.Warn("search_degraded", "reason", reason)
		}
		degraded = append(degraded, reason+": results come from the lexical channel only")
	}
	if len(out.MissingVectors) > 0 {
		degraded = append(degraded, fmt.Sprintf("layers without complete %s vectors, searched by their words only: %s",
			out.Model, strings.Join(out.MissingVectors, ", ")))
	}
	if out.VectorRan {
		ex.Channels = append(ex.Channels, "vector")
		ex.Model, ex.QueryEncoder, ex.EFSearch = out.Model, out.QueryEncoder, params.EFSearch
	}
	ex.RRFK, ex.LexicalWeight, ex.VectorWeight = params.RRFK, params.LexicalWeight, params.VectorWeight
	ex.MinSimilarity = params.MinSimilarity

	sections := out.Sections
	if d != nil {
		// A fallback from routing: the sections of the routed layers first.
		routedName := map[string]bool{}
		for _, l := range layers {
			routedName[l.Name] = d.InRouted(l.ID)
		}
		sections = slices.Clone(sections)
		sort.SliceStable(sections, func(i, j int) bool {
			return routedName[sections[i].Layer] && !routedName[sections[j].Layer]
		})
	}
	for _, s := range sections {
		r := Result{Ref: s.Ref(), Layer: s.Layer, File: s.File, Page: s.Page,
			Lines: fmt.Sprintf("%d-%d", s.LineStart, s.LineEnd), ClausePath: s.ClausePath, Text: s.Text,
			Match: "exact", Cut: s.Cut, Score: 1, Similarity: round(s.Similarity)}
		if req.Explain {
			r.Explain = &ResultExplain{Placement: "exact_match",
				Reason: fmt.Sprintf("the query names %q, which is section %s of this file (key %s); exact sections come first",
					s.Reference, s.ClausePath, s.Key)}
		}
		resp.Results = append(resp.Results, r)
	}
	best := 0.0
	for _, c := range out.Candidates {
		best = math.Max(best, c.Fused)
	}
	for _, c := range out.Candidates {
		r := Result{ChunkID: c.ChunkID, Ref: c.Ref(), Layer: c.Layer, File: c.File, Page: c.Page,
			Lines: fmt.Sprintf("%d-%d", c.LineStart, c.LineEnd), ClausePath: c.ClausePath, Text: c.Text,
			Similarity: round(c.Similarity)}
		if best > 0 {
			r.Score = round(c.Fused / best)
		}
		if req.Explain {
			r.Explain = explainOf(c)
		}
		resp.Results = append(resp.Results, r)
	}
	if d != nil {
		inRouted := map[string]bool{}
		for _, l := range layers {
			if d.InRouted(l.ID) {
				inRouted[l.Name] = true
			}
		}
		for i := range resp.Results {
			resp.Results[i].OutsideRouting = !inRouted[resp.Results[i].Layer]
		}
	}

	judge(resp, params, out)

	nonExact := len(resp.Results) - len(out.Sections)
	// Exact sections count: they matched the filter too.
	if len(req.MetadataFilter) > 0 && len(resp.Results) < req.TopK {
		notes = append(notes, fmt.Sprintf("Only %d passages match metadata_filter %s; the filter was not relaxed to fill top_k %d.",
			len(resp.Results), describeFilter(req.MetadataFilter), req.TopK))
	}
	resp.Note = strings.Join(notes, " ")
	if len(degraded) > 0 {
		resp.Degraded = true
		resp.DegradedReason = strings.Join(degraded, "; ")
	}
	if req.Explain {
		resp.Explain = ex
	}
	return &runOutcome{resp: resp, simAvailable: out.SimilarityAvailable, nonExactCount: nonExact,
		exactCount: len(out.Sections)}, nil
}

// embedReason says in words, redacted, why the query had no vector.
func embedReason(e *retrieve.EmbedError) string {
	switch e.Kind {
	case retrieve.LoadFailed:
		return fmt.Sprintf("the embedding model failed to load (%s)", redact(e.Err.Error()))
	case retrieve.Failed:
		return fmt.Sprintf("embedding model %s failed: %s", e.Model, redact(e.Err.Error()))
	case retrieve.NoVector:
		return fmt.Sprintf("embedding model %s returned no vector", e.Model)
	}
	return "no embedding model is configured"
}

// describePath is explain's lexical_candidates.
func describePath(p retrieve.LexicalPath) string {
	switch {
	case p.Kind == "postings":
		return fmt.Sprintf("postings: the best %d per query word and layer by BM25 impact; the %d best sums scored exactly",
			p.PerTerm, p.Candidates)
	case p.Kind == "gin" && p.FellBack:
		return fmt.Sprintf("gin: the metadata_filter left %d of the postings' candidates, fewer than %d; "+
			"every chunk holding one of the query's rarer words scored exactly", p.FilterLeft, p.Depth)
	case p.Kind == "gin":
		return "gin: every chunk holding one of the query's rarer words scored exactly"
	}
	return ""
}

// exactNote is the note on the exact sections: more matched than are
// returned, references not looked up, sections cut.
func exactNote(out *retrieve.Outcome, noLayersNamed, filtered bool) string {
	lk := out.Exact
	var notes []string
	switch {
	case len(lk.MissingNotes) > 0 && !filtered:
		// Where it was looked for and what is there (retrieve/missing.go).
		notes = append(notes, lk.MissingNotes...)
	default:
		for _, m := range lk.Missing {
			if filtered {
				notes = append(notes, fmt.Sprintf("The query names %s, but no section of that number that matches metadata_filter is in the searched layers.", m))
			} else {
				notes = append(notes, fmt.Sprintf("The query names %s, but no section of that number is in the searched layers.", m))
			}
		}
	}
	for _, d := range out.Absent {
		notes = append(notes, fmt.Sprintf("The query names %s, which is not among the documents of the searched layers.", d.Raw))
	}
	// Sections whose text came back as ordinary results are not counted.
	if extra := lk.NotReturned; extra > 0 || lk.LimitHit {
		switch {
		case lk.LimitHit && extra > 0:
			notes = append(notes, fmt.Sprintf("At least %d more sections match the references and were not returned (at most %d are).", extra, lk.Limit))
		case extra > 0:
			notes = append(notes, fmt.Sprintf("%d more sections match the references and were not returned (at most %d are).", extra, lk.Limit))
		default:
			notes = append(notes, fmt.Sprintf("More sections may match: the lookup stopped at %d candidate sections.", retrieve.MaxCandidates))
		}
		if lk.LookedUp > 1 {
			notes = append(notes, "Ask about fewer clauses at a time.")
		}
		if noLayersNamed {
			notes = append(notes, "Naming a layer narrows the lookup.")
		}
	}
	if len(lk.Skipped) > 0 {
		notes = append(notes, fmt.Sprintf("Only the first %d references were looked up; not looked up: %s.",
			retrieve.MaxReferences, strings.Join(lk.Skipped, ", ")))
	}
	for _, s := range out.Sections {
		if s.Cut {
			notes = append(notes, fmt.Sprintf("%s in %s was cut: read the whole section in the file.", s.ClausePath, s.File))
		}
	}
	return strings.Join(notes, " ")
}

func explainOf(c retrieve.Candidate) *ResultExplain {
	e := &ResultExplain{Lexical: channelHit(c.Lexical), Vector: channelHit(c.Vector), Fused: round6(c.Fused),
		Placement: string(c.Placement), ExactTerms: c.ExactTerms}
	switch c.Placement {
	case retrieve.PlacedBySlot:
		e.Reason = "one of the best full-text matches: it keeps one of the HYBRID_KEYWORD_SLOTS places although fusion ranked it lower"
	case retrieve.PlacedLexicalOnly:
		e.Reason = "ranked by BM25 alone: the vector channel did not run"
	default:
		var found []string
		if c.Lexical != nil {
			found = append(found, "lexical")
		}
		if c.Vector != nil {
			found = append(found, "vector")
		}
		e.Reason = "placed by reciprocal rank fusion of the " + strings.Join(found, " and ") + " channel"
		if len(found) > 1 {
			e.Reason += "s"
		}
	}
	if len(c.ExactTerms) > 0 {
		e.Reason += "; holds " + strings.Join(c.ExactTerms, ", ") + " as written"
	}
	e.FusedRank = c.FusedRank
	return e
}

func channelHit(h *retrieve.ChannelHit) *ChannelHit {
	if h == nil {
		return nil
	}
	return &ChannelHit{Rank: h.Rank, Score: round(h.Score)}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func describeFilter(f map[string]string) string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, f[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// judge sets the confidence level from the similarities of the exact
// sections and of the first retrieve.ConfidenceWindow passages of the
// ranking, whatever top_k (so the level, and routing's fallback, do not
// change with top_k), and from the evidence the returned passages give
// (evidence.go). Similarity alone: high when the best reaches the high mark
// and three or more reach the medium mark, medium when the best reaches
// the medium mark, else low with a warning. Evidence raises that: an exact
// section the question names makes the level high (a bare "7.2" that may
// be a version: at least medium); a phrase or a code of the question in
// the first result makes it at least medium, and high when the best
// similarity also reaches the medium mark. resp.Evidence lists the
// evidence that raised the level (none when similarity alone set it).
func judge(resp *Response, p retrieve.Params, out *retrieve.Outcome) {
	best, atMedium := 0.0, 0
	sims := slices.Clone(out.JudgeSimilarities)
	for _, s := range out.Sections {
		sims = append(sims, s.Similarity)
	}
	// An exact section counts as named when the reference says what it
	// is ("clause 7.2", "Article 5") or is a number that cannot be a
	// version ("4.3.2", "B.1.1"); a bare "7.2" that a section happens to
	// match only lifts the level to medium.
	named, weakNamed := false, false
	for _, s := range out.Sections {
		if s.Weak {
			weakNamed = true
		} else {
			named = true
		}
	}
	for _, s := range sims {
		best = math.Max(best, s)
		if s >= p.ConfidenceMedium {
			atMedium++
		}
	}
	// ev is the first result's phrase or code; withNamed adds a named
	// document first, which lifts a medium similarity to high but alone
	// lifts nothing: that the document asked about came back says nothing
	// of whether it answers (on the answer set's test split it lifted 4
	// of the 25 original unanswerable questions out of low).
	var ev, withNamed []Evidence
	if len(resp.Results) > 0 {
		ev = evidenceOf(resp.Query, resp.Results[0].Text, resp.Results[0].File)
		withNamed = ev
		if firstIsNamed(out, resp.Results[0]) {
			withNamed = append(slices.Clone(ev), EvidenceNamedDocument)
		}
	}
	raise := func(level string, e ...Evidence) {
		resp.Confidence = level
		for _, x := range e {
			resp.Evidence = append(resp.Evidence, string(x))
		}
	}
	switch {
	case missingOnly(out) || len(out.Absent) > 0 && !named:
		// The section or the document the query names is not there (the
		// note says what is): whatever else came back is not it.
		resp.Confidence = "low"
		resp.Warning = "What the query names is not in the searched layers (see the note). The results are related text, not it."
	case named && len(resp.Results) > 0:
		// The question names the section and the section came back
		// verbatim: that is the answer asked for, whatever its words'
		// similarity (issue 12, class 10).
		raise("high", EvidenceExactSection)
	case !out.SimilarityAvailable && len(ev) > 0:
		// The first passage holds the question's phrase or code: that
		// does not depend on a similarity, though without one it is not
		// high.
		raise("medium", ev...)
	case !out.SimilarityAvailable:
		resp.Confidence = "low"
		resp.Warning = "Confidence could not be judged: no similarity between the query and the passages was available, so results are ranked by their words only. Check that they answer the question."
	case len(resp.Results) == 0:
		resp.Confidence = "low"
		resp.Warning = "Nothing matched. The knowledge base probably does not cover this: try other terms or another layer."
	case best >= p.ConfidenceHigh && atMedium >= 3:
		resp.Confidence = "high"
	case best >= p.ConfidenceMedium && len(withNamed) > 0:
		raise("high", withNamed...)
	case best >= p.ConfidenceMedium:
		resp.Confidence = "medium"
	case weakNamed:
		raise("medium", EvidenceExactSection)
	case len(ev) > 0:
		raise("medium", ev...)
	default:
		resp.Confidence = "low"
		resp.Warning = "No passage is close to the query in meaning. The knowledge base probably does not cover this: try other terms or another layer."
	}
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// firstIsNamed reports whether the first result is from a document the
// query names ("PEP 572", a title): confident evidence that it is the
// document asked about.
func firstIsNamed(out *retrieve.Outcome, first Result) bool {
	for _, d := range out.Named {
		if d.Layer == first.Layer && d.File == first.File {
			return true
		}
	}
	return false
}

// missingOnly reports whether the query names sections, none of which the
// documents it names (or the searched layers) were found to have.
func missingOnly(out *retrieve.Outcome) bool {
	return out.Exact.MissingDecided && len(out.Exact.Missing) > 0 && len(out.Sections) == 0
}
