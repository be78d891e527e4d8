package retrieve

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/question"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/structure"
)

// Documents a question names (issue 26): "PEP 572", "RFC 5321", "T.81" by
// their own number (the identity keys of migration 0023, so a document
// that only mentions another's number is not it), or "Organizing Go code"
// by title. The named documents are searched first: their best passage
// comes first, and an exact section the question names is looked up in
// them only.
const (
	// namedCandidates is how many candidate documents the store returns.
	namedCandidates = 20
	// MaxNamedDocs is how many named documents a question may have; past
	// it the name does not single out a document.
	MaxNamedDocs = 3
)

// NamedDoc is a document the query names.
type NamedDoc struct {
	DocumentID int64
	LayerID    int64
	Layer      string
	File       string
	Title      string
	// By is how the query names it: the number as written ("PEP 572") or
	// the title.
	By string
}

// NamedDocuments returns the documents of the layers that q names (see
// the package function), read at the snapshot's version.
func (s *Snapshot) NamedDocuments(ctx context.Context, q *question.Question, layers []store.Layer) ([]NamedDoc, error) {
	return NamedDocuments(ctx, s.e.store, q, layers)
}

// NamedDocuments returns the documents of the layers that q names, at
// most MaxNamedDocs: by number first, then by title, else (for a question
// that names a section) by the parties it names. A number that more than
// MaxNamedDocs documents share, or a title more than one has, names none
// of them.
func NamedDocuments(ctx context.Context, st Corpus, q *question.Question, layers []store.Layer) ([]NamedDoc, error) {
	keys := q.NumberKeys()
	docs, err := st.DocumentsNamed(ctx, store.LayerIDs(layers), append(slices.Clone(keys), q.TitleKeys...), namedCandidates)
	if err != nil {
		return nil, err
	}
	byNumber := map[string][]NamedDoc{}
	byTitle := map[string][]NamedDoc{}
	for _, d := range docs {
		nd := NamedDoc{DocumentID: d.DocumentID, LayerID: d.LayerID, Layer: d.Layer, File: d.File, Title: d.Title}
		if k := sharedKey(d.Keys, keys); k != "" {
			nd.By = q.NumberAsWritten(k)
			byNumber[k] = append(byNumber[k], nd)
			continue
		}
		if structure.TitleNamed(q.Text, d.Title) {
			nd.By = d.Title
			t := structure.FoldWords(d.Title)
			byTitle[t] = append(byTitle[t], nd)
		}
	}
	var out []NamedDoc
	for _, k := range keys {
		if len(byNumber[k]) <= MaxNamedDocs {
			out = append(out, byNumber[k]...)
		}
	}
	titles := make([]string, 0, len(byTitle))
	for t := range byTitle {
		titles = append(titles, t)
	}
	// Longer titles first: "Go modules reference" before "Go modules".
	sort.Slice(titles, func(i, j int) bool {
		return len(titles[i]) > len(titles[j]) || len(titles[i]) == len(titles[j]) && titles[i] < titles[j]
	})
	for _, t := range titles {
		// A title several documents share ("Supply agreement") singles
		// out none of them.
		if len(byTitle[t]) == 1 && !insideLonger(t, titles) {
			out = append(out, byTitle[t]...)
		}
	}
	if len(out) > MaxNamedDocs {
		out = out[:MaxNamedDocs]
	}
	if len(out) > 0 || !q.Explicit() {
		return out, nil
	}
	if len(q.Parties) > 0 {
		out, err = namedByWords(ctx, st, q.Parties, layers, byParties)
		if err != nil || len(out) > 0 {
			return out, err
		}
	}
	if len(q.Described) > 0 {
		return namedByWords(ctx, st, q.Described, layers, byDescription)
	}
	return nil, nil
}

// NamedDoc.By for a document named by its parties, and by a description in
// the question's words.
const (
	byParties     = "the parties"
	byDescription = "the description"
)

// namedByWords: a question that names a section of a document it calls by
// its parties ("section 22 of the Cano Petroleum–Boyd sponsorship
// agreement") or describes ("section 7 of the TS/SCI clearance upgrade
// process") names the documents whose start or path holds every one of
// those words, when at most MaxNamedDocs do: the section is looked up
// there. The parties are tried first; the description when they single
// out no document.
func namedByWords(ctx context.Context, st Corpus, words []string, layers []store.Layer, by string) ([]NamedDoc, error) {
	docs, err := st.DocumentsHolding(ctx, store.LayerIDs(layers), words, MaxNamedDocs+1)
	if err != nil || len(docs) > MaxNamedDocs {
		return nil, err
	}
	out := make([]NamedDoc, len(docs))
	for i, d := range docs {
		out[i] = NamedDoc{DocumentID: d.DocumentID, LayerID: d.LayerID, Layer: d.Layer, File: d.File, Title: d.Title,
			By: by}
	}
	return out, nil
}

// AbsentDoc is a document a question names by number that no document of
// the searched layers is, in a series they hold ("RFC 5246" beside RFC
// 3339 and RFC 5321).
type AbsentDoc struct {
	Raw  string   // as written
	Held []string // keys of the series the layers hold, up to eight
	// Subject: the question names no document the layers have, and the
	// series is how the layers' documents are named (SubjectSeriesShare):
	// the missing document is what the question is about ("What does PEP
	// 246 propose?" over a folder of PEPs), so passages of other documents
	// that mention it do not answer it.
	Subject bool
}

// SubjectSeriesShare is the share of the searched layers' documents with a
// number of the series at or above which a missing number of that series
// is the question's subject (AbsentDoc.Subject): PEPs in a folder of PEPs,
// RFCs among RFCs, not the release notes among a blog's posts, whose
// version numbers ("Go 1.5") are mostly not documents at all.
const SubjectSeriesShare = 0.5

// AbsentDocuments returns the numbers q writes that name no document of
// the layers while some document of the layers is of that series; numbers
// are the number keys of the layers' documents, read only when q writes
// such a number.
func AbsentDocuments(ctx context.Context, numbers func(context.Context) (store.NumberKeys, error), q *question.Question,
	named []NamedDoc) ([]AbsentDoc, error) {
	var missing []structure.NamedNumber
	var series []string
	for _, n := range q.Numbers {
		if !slices.ContainsFunc(named, func(d NamedDoc) bool { return d.By == n.Raw }) {
			missing = append(missing, n)
			sr, _, _ := strings.Cut(n.Key, " ")
			series = append(series, sr)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	nk, err := numbers(ctx)
	if err != nil {
		return nil, err
	}
	held := nk.SeriesHeld(series)
	var out []AbsentDoc
	for i, n := range missing {
		if sr := held[series[i]]; len(sr.Keys) > 0 && !slices.Contains(sr.Keys, n.Key) {
			out = append(out, AbsentDoc{Raw: n.Raw, Held: sr.Keys,
				Subject: len(named) == 0 && sr.Share >= SubjectSeriesShare})
		}
	}
	return out, nil
}

// insideLonger reports whether title t is part of a longer title the query
// also names: the longer one is the document meant.
func insideLonger(t string, titles []string) bool {
	for _, o := range titles {
		if len(o) > len(t) && strings.Contains(" "+o+" ", " "+t+" ") {
			return true
		}
	}
	return false
}

func sharedKey(have, want []string) string {
	for _, w := range want {
		if slices.Contains(have, w) {
			return w
		}
	}
	return ""
}

// namedIDs are the named documents' ids; nil when there are none.
func namedIDs(named []NamedDoc) []int64 {
	if len(named) == 0 {
		return nil
	}
	out := make([]int64, len(named))
	for i, d := range named {
		out[i] = d.DocumentID
	}
	return out
}

// PlacedNamed: the passage is the best of a document the query names,
// brought to the top.
const PlacedNamed Placement = "named_document"

// promoteNamed brings the best passage of the named documents to the top
// of top: the first of them already there (hits are top's passages, as
// read), or else the nearest to the query vector (without one, the best by
// the query's words) of their passages, which then takes the last place's
// room and whose passage is read into hits.
func (r *Run) promoteNamed(ctx context.Context, top []*Candidate, hits map[int64]store.Hit, qv []float32, model string,
	named []NamedDoc, room int) ([]*Candidate, map[int64]float64, error) {
	if len(named) == 0 || room <= 0 {
		return top, nil, nil
	}
	ids := namedIDs(named)
	for i, c := range top {
		if h, ok := hits[c.ChunkID]; ok && slices.Contains(ids, h.DocumentID) {
			if i > 0 {
				c.Placement = PlacedNamed
				top = slices.Insert(slices.Delete(top, i, i+1), 0, c)
			}
			return top, nil, nil
		}
	}
	var best int64
	sims := map[int64]float64{}
	if qv != nil {
		vh, err := r.e.store.NearestInDocuments(ctx, model, qv, ids, 1)
		if err != nil {
			return nil, nil, err
		}
		if len(vh) > 0 {
			best, sims[vh[0].ChunkID] = vh[0].ChunkID, vh[0].Similarity
		}
	}
	if best == 0 {
		ws, err := r.e.store.BestWordsInDocuments(ctx, r.q.Text, ids, 1)
		if err != nil {
			return nil, nil, err
		}
		if len(ws) == 0 {
			return top, nil, nil
		}
		best = ws[0]
	}
	more, err := r.e.store.Chunks(ctx, []int64{best})
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(hits, more)
	c := &Candidate{ChunkID: best, Placement: PlacedNamed}
	if len(top) > 0 {
		c.Fused = top[0].Fused // shown as the best score: it is placed first
	}
	top = slices.Insert(top, 0, c)
	if len(top) > room {
		top = top[:room]
	}
	return top, sims, nil
}
