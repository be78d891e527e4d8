package retrieve

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// Exact clause lookup limits, as the spec gives them.
const (
	MaxExactResults = 10 // exact results returned
	MaxReferences   = 10 // references looked up
	MaxCandidates   = 50 // candidate sections read
	// ExactTextLimit bounds an exact section's text: ANSWER_TOKEN_BUDGET's
	// 1,500 tokens at about 4 characters a token. Longer sections are cut
	// at a word and marked cut.
	ExactTextLimit = 6000
	// NeverCut: a section this short is never cut.
	NeverCut = 200
)

// Section is an exact section: one the query names.
type Section struct {
	DocumentID int64
	Layer      string
	File       string
	Page       *int
	// LineStart and LineEnd are the lines of Text; Start and End its span
	// in the document, SectionStart and SectionEnd the whole section's.
	LineStart, LineEnd       int
	Start, End               int
	SectionStart, SectionEnd int
	ClausePath               string
	// Key is the structure map's key, Reference the query's words that
	// named it.
	Key, Reference string
	// Weak is set when the reference was a bare number that may be a
	// version or an amount ("7.2"): it counts only because a section of
	// that number exists.
	Weak bool
	Text string
	// Cut is true when Text was shortened to ExactTextLimit at a word.
	Cut bool
	// Similarity is the whole section's similarity to the query vector; 0
	// without one.
	Similarity float64
}

// Ref is the returned text's span as a ref string.
func (s Section) Ref() string {
	return schema.Ref{DocumentID: s.DocumentID, Start: s.Start, End: s.End}.WithText(s.Text).String()
}

// ExactLookup says how the lookup of the sections the query names went.
type ExactLookup struct {
	// References are the references the query holds, as written; LookedUp
	// how many of them were looked up (at most MaxReferences), Skipped the
	// ones that were not.
	References []string
	LookedUp   int
	Skipped    []string
	// Found is how many sections matched, of which Limit at most are
	// returned (MaxExactResults, or top_k when smaller: exact sections
	// never push the result count over top_k); LimitHit is true when the
	// lookup stopped at MaxCandidates, so more may match.
	Found    int
	Limit    int
	LimitHit bool
	// NotReturned is how many matching sections came back neither as
	// exact results nor inside an ordinary result.
	NotReturned int
	// Missing are the explicit references ("Article 99", "§ 4", not a
	// bare number) that were looked up and matched no section of the
	// layers searched, as written (in the named documents only, when the
	// query names documents); MissingNotes say for each where it was
	// looked for and what is there (missing.go).
	// MissingDecided is false when the place looked in has no numbered
	// sections at all, so the references cannot be said to be missing.
	Missing        []string
	MissingNotes   []string
	MissingDecided bool
	missingKinds   []string
}

// exactSections looks up the sections the query names in the layers. It
// returns every section found (at most MaxCandidates) in the order of the
// references, and within one reference the documents the rest of the
// question points to first (orderByDocument), then by file path, and how
// the lookup went; the caller keeps the first ExactLookup.Limit, so a
// later reference never pushes out an earlier one's sections.
func (r *Run) exactSections(ctx context.Context, ids []int64, named []NamedDoc) ([]Section, ExactLookup, error) {
	refs := r.parsed().References
	if len(refs) == 0 {
		return nil, ExactLookup{}, nil
	}
	var raws []string
	for _, r := range refs {
		raws = append(raws, r.Raw)
	}
	lookup, skipped := refs, []structure.Reference(nil)
	if len(refs) > MaxReferences {
		lookup, skipped = refs[:MaxReferences], refs[MaxReferences:]
	}
	var found []store.Section
	which := map[int64]structure.Reference{}
	refIndex := map[int64]int{}
	seen := map[int64]bool{}
	limitHit := false
	var missing, missingKinds []string
	for ri, ref := range lookup {
		keys := ref.Keys()
		if len(keys) == 0 {
			continue
		}
		room := MaxCandidates - len(found)
		if room <= 0 {
			limitHit = true
			break
		}
		// A section of a document the query names is looked up in that
		// document only: "section 4.1 of RFC 5321" is not RFC 3501's 4.1.
		secs, err := r.e.store.SectionsByKeysIn(ctx, keys, ids, namedIDs(named), r.q.Filter, room)
		if err != nil {
			return nil, ExactLookup{}, err
		}
		if len(secs) == room {
			limitHit = true
		}
		if len(secs) == 0 && ref.Explicit() {
			missing = append(missing, ref.Raw)
			missingKinds = append(missingKinds, ref.Kind)
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
			which[s.ID] = ref
			refIndex[s.ID] = ri
			found = append(found, s)
		}
	}
	found, err := r.orderByDocument(ctx, found, refIndex, lookup, ids)
	if err != nil {
		return nil, ExactLookup{}, err
	}
	var out []Section
	for _, s := range found {
		text, cut := cutAtWord(s.Text, ExactTextLimit)
		lineEnd := s.LineStart + strings.Count(strings.TrimRight(text, "\n"), "\n")
		if !cut {
			lineEnd = s.LineEnd
		}
		out = append(out, Section{DocumentID: s.DocumentID, Layer: s.Layer, File: s.File, Page: s.Page,
			LineStart: s.LineStart, LineEnd: lineEnd, Start: s.Start, End: s.Start + len(text),
			SectionStart: s.Start, SectionEnd: s.End, ClausePath: s.ClausePath,
			Key: s.Key, Reference: which[s.ID].Raw, Weak: which[s.ID].Weak, Text: text, Cut: cut})
	}
	lk := ExactLookup{References: raws, LookedUp: len(lookup), Found: len(found), LimitHit: limitHit,
		Limit: min(MaxExactResults, max(r.q.TopK, 0)), Missing: missing, missingKinds: missingKinds}
	for _, ref := range skipped {
		lk.Skipped = append(lk.Skipped, ref.Raw)
	}
	return out, lk, nil
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
// whether it did. A text of NeverCut characters or less is never cut.
func cutAtWord(s string, limit int) (string, bool) {
	if len(s) <= limit || utf8.RuneCountInString(s) <= NeverCut {
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

// dropOverlappingExact removes the chunks that hold the same text as an
// exact section already returned: a chunk inside the section, one that
// contains it, or one that mostly overlaps it, so the same text does not
// come back twice.
func dropOverlappingExact(ctx context.Context, st Corpus, cands []*Candidate, exact []Section) []*Candidate {
	if len(exact) == 0 || len(cands) == 0 {
		return cands
	}
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.ChunkID
	}
	hits, err := st.Chunks(ctx, ids)
	if err != nil {
		return cands // keeping a duplicate is better than failing
	}
	var out []*Candidate
	for _, c := range cands {
		h, ok := hits[c.ChunkID]
		dup := false
		for _, e := range exact {
			if ok && h.DocumentID == e.DocumentID && sameText(h.Start, h.End, e.Start, e.End) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

// sameText reports whether the spans [aStart, aEnd) and [bStart, bEnd) hold
// mostly the same text: one contains the other, or their overlap is at
// least half of the shorter one.
func sameText(aStart, aEnd, bStart, bEnd int) bool {
	o := min(aEnd, bEnd) - max(aStart, bStart)
	if o <= 0 {
		return false
	}
	return 2*o >= min(aEnd-aStart, bEnd-bStart)
}

// notReturned counts the matching sections in rest (found but not kept as
// exact results) whose text did not come back in an ordinary result either.
func notReturned(rest []Section, cands []Candidate) int {
	n := 0
	for _, s := range rest {
		back := false
		for _, c := range cands {
			if c.DocumentID == s.DocumentID && sameText(c.Start, c.End, s.SectionStart, s.SectionEnd) {
				back = true
				break
			}
		}
		if !back {
			n++
		}
	}
	return n
}
