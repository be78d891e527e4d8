package search

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// Exact clause lookup limits, as the spec gives them.
const (
	maxExactResults = 10 // exact results returned
	maxReferences   = 10 // references looked up
	maxCandidates   = 50 // candidate sections read
	// exactTextLimit bounds an exact section's text: ANSWER_TOKEN_BUDGET's
	// 1,500 tokens at about 4 characters a token. Longer sections are cut
	// at a word and marked cut.
	exactTextLimit = 6000
	// neverCut: a section this short is never cut.
	neverCut = 200
)

type exactHit struct {
	Result
	docID      int64
	start, end int // the whole section's span
	explain    *ResultExplain
}

// exactSections looks up the sections the query names in the layers. It
// returns up to maxExactResults, in the order of the references and then by
// file path, the top-level note, and the references as written.
func (st *state) exactSections(ctx context.Context, ids []int64) ([]exactHit, string, []string, error) {
	refs := structure.ParseReferences(st.req.Query)
	if len(refs) == 0 {
		return nil, "", nil, nil
	}
	var raws []string
	for _, r := range refs {
		raws = append(raws, r.Raw)
	}
	lookup, skipped := refs, []structure.Reference(nil)
	if len(refs) > maxReferences {
		lookup, skipped = refs[:maxReferences], refs[maxReferences:]
	}
	var found []store.Section
	which := map[int64]structure.Reference{}
	seen := map[int64]bool{}
	limitHit := false
	for _, r := range lookup {
		keys := r.Keys()
		if len(keys) == 0 {
			continue
		}
		room := maxCandidates - len(found)
		if room <= 0 {
			limitHit = true
			break
		}
		secs, err := st.s.store.SectionsByKeys(ctx, keys, ids, st.req.MetadataFilter, room)
		if err != nil {
			return nil, "", nil, err
		}
		if len(secs) == room {
			limitHit = true
		}
		// Per document, only the most likely kind of section counts: "clause
		// 4" is clause 4 where a document has one, else its Section 4.
		bestKey := map[int64]int{}
		for _, s := range secs {
			k := keyIndex(keys, s.Key)
			if b, ok := bestKey[s.DocumentID]; !ok || k < b {
				bestKey[s.DocumentID] = k
			}
		}
		for _, s := range secs {
			if keyIndex(keys, s.Key) != bestKey[s.DocumentID] || seen[s.ID] {
				continue
			}
			seen[s.ID] = true
			which[s.ID] = r
			found = append(found, s)
		}
	}
	var out []exactHit
	for i, s := range found {
		if i == maxExactResults {
			break
		}
		text, cut := cutAtWord(s.Text, exactTextLimit)
		end := s.Start + len(text)
		lineEnd := s.LineStart + strings.Count(strings.TrimRight(text, "\n"), "\n")
		if !cut {
			lineEnd = s.LineEnd
		}
		r := which[s.ID]
		h := exactHit{docID: s.DocumentID, start: s.Start, end: s.End, Result: Result{
			Ref:   schema.Ref{DocumentID: s.DocumentID, Start: s.Start, End: end}.String(),
			Layer: s.Layer, File: s.File, Page: s.Page, Lines: fmt.Sprintf("%d-%d", s.LineStart, lineEnd),
			ClausePath: s.ClausePath, Text: text, Match: "exact", Cut: cut,
		}}
		h.explain = &ResultExplain{Placement: "exact_match",
			Reason: fmt.Sprintf("the query names %q, which is section %s of this file (key %s); exact sections come first",
				r.Raw, s.ClausePath, s.Key)}
		out = append(out, h)
	}
	var notes []string
	if extra := len(found) - len(out); extra > 0 || limitHit {
		switch {
		case limitHit && extra > 0:
			notes = append(notes, fmt.Sprintf("At least %d more sections match the references and were not returned (at most %d are).", extra, maxExactResults))
		case extra > 0:
			notes = append(notes, fmt.Sprintf("%d more sections match the references and were not returned (at most %d are).", extra, maxExactResults))
		default:
			notes = append(notes, fmt.Sprintf("More sections may match: the lookup stopped at %d candidate sections.", maxCandidates))
		}
		if len(lookup) > 1 {
			notes = append(notes, "Ask about fewer clauses at a time.")
		}
		if len(st.req.Layers) == 0 {
			notes = append(notes, "Naming a layer narrows the lookup.")
		}
	}
	if len(skipped) > 0 {
		var names []string
		for _, r := range skipped {
			names = append(names, r.Raw)
		}
		notes = append(notes, fmt.Sprintf("Only the first %d references were looked up; not looked up: %s.",
			maxReferences, strings.Join(names, ", ")))
	}
	for _, h := range out {
		if h.Cut {
			notes = append(notes, fmt.Sprintf("%s in %s was cut: read the whole section in the file.", h.ClausePath, h.File))
		}
	}
	return out, strings.Join(notes, " "), raws, nil
}

func keyIndex(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return len(keys)
}

// cutAtWord shortens s to at most limit bytes, ending at a word, and says
// whether it did. A text of neverCut characters or less is never cut.
func cutAtWord(s string, limit int) (string, bool) {
	if len(s) <= limit || utf8.RuneCountInString(s) <= neverCut {
		return s, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexAny(s[:cut], " \t\n"); i > 0 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " \t\n"), true
}

// dropInsideExact removes the chunks that lie inside an exact section
// already returned, so the same text does not come back twice.
func dropInsideExact(ctx context.Context, st *store.Store, cands []*candidate, exact []exactHit) []*candidate {
	if len(exact) == 0 || len(cands) == 0 {
		return cands
	}
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	hits, err := st.Chunks(ctx, ids)
	if err != nil {
		return cands // keeping a duplicate is better than failing
	}
	var out []*candidate
	for _, c := range cands {
		h, ok := hits[c.id]
		inside := false
		for _, e := range exact {
			if ok && h.DocumentID == e.docID && h.Start >= e.start && h.End <= e.end {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, c)
		}
	}
	return out
}
