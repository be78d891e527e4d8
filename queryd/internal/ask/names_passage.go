package ask

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// MatchNames marks a passage that comes back because it holds names the
// question gives (a contract's parties, say) that the best passages lack.
// It is taken from the document of a returned passage, adds no score and
// changes no ranking: it shows that the document the answer comes from is
// the one the question names.
const MatchNames = "names"

// namesDocs is the most documents whose chunks are searched for the names,
// the best ranked first (each read up to store.NamesScanChunks chunks).
const namesDocs = 10

// firstDocs returns the first n distinct ids of docs, in order.
func firstDocs(docs []int64, n int) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for _, d := range docs {
		if !seen[d] && len(out) < n {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// minNamesChars is the least of a names passage worth handing back, in
// characters: a line or two around the names.
const minNamesChars = 200

// namesPattern is the regular expression, in PostgreSQL's syntax (sql) and
// in Go's, that finds a folded name key in a text: any run of characters
// that are neither letters nor digits may come between its characters,
// and a number may have leading zeros, as the names rule's folding allows.
// A match is a candidate only: the folded text is checked after.
func namesPattern(key string, sql bool) string {
	gap := `[^\pL\pN]*`
	if sql {
		gap = `[^[:alnum:]]*`
	}
	var b strings.Builder
	prevDigit := false
	for i, r := range key {
		digit := unicode.IsDigit(r)
		if i > 0 {
			b.WriteString(gap)
		}
		if digit && (i == 0 || !prevDigit) {
			b.WriteString("0*")
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
		prevDigit = digit
	}
	return b.String()
}

// namesCandidate is a chunk that holds some of the missing names, and
// where the first of them starts in its text.
type namesCandidate struct {
	hit  store.Hit
	held int
	at   int
}

// namesChunks reads the chunks among the first of docs' chunks (the first
// namesDocs documents, best ranked first) that may hold any of names: the
// patterns find candidates, the folded text decides (namesIn).
func namesChunks(ctx context.Context, d Documents, docs []int64, names []Name) ([]store.Hit, error) {
	if len(names) == 0 || len(docs) == 0 {
		return nil, nil
	}
	patterns := make([]string, len(names))
	for i, n := range names {
		patterns[i] = namesPattern(n.key, true)
	}
	hits, err := d.ChunksMatching(ctx, firstDocs(docs, namesDocs), patterns, namesScan)
	if err != nil {
		return nil, store.CallerError(ctx, err, "find the chunks holding the names the question gives")
	}
	return hits, nil
}

// namesIn returns the names text holds, folded.
func namesIn(text string, names []Name) []Name {
	f := foldText(text)
	var out []Name
	for _, n := range names {
		if f.contains(n.key) {
			out = append(out, n)
		}
	}
	return out
}

// findNamesPassage chooses among hits (chunks namesChunks read) of docs
// (the documents to take it from, best first) the chunk holding the most
// of the names missing from every returned passage; ties go to the better
// document, then the earlier chunk. It returns nil when no chunk of those
// documents that is not already returned (returned: chunk ids) holds any.
func findNamesPassage(hits []store.Hit, docs []int64, missing []Name, returned map[int64]bool) *namesCandidate {
	if len(missing) == 0 {
		return nil
	}
	rank := make(map[int64]int, len(docs))
	for i, id := range docs {
		if _, ok := rank[id]; !ok {
			rank[id] = i
		}
	}
	patterns := make(map[string]*regexp.Regexp, len(missing))
	for _, n := range missing {
		patterns[n.key] = regexp.MustCompile(`(?i)` + namesPattern(n.key, false))
	}
	var best *namesCandidate
	for _, h := range hits {
		if _, ok := rank[h.DocumentID]; !ok || returned[h.ChunkID] {
			continue
		}
		held := namesIn(h.Text, missing)
		if len(held) == 0 {
			continue
		}
		c := namesCandidate{hit: h, held: len(held), at: len(h.Text)}
		for _, n := range held {
			if loc := patterns[n.key].FindStringIndex(h.Text); loc != nil && loc[0] < c.at {
				c.at = loc[0]
			}
		}
		if c.at == len(h.Text) {
			c.at = 0
		}
		if best == nil || c.held > best.held || c.held == best.held && rank[h.DocumentID] < rank[best.hit.DocumentID] {
			best = &c
		}
	}
	return best
}

// window is the part of the chunk handed back within room characters:
// the whole chunk when it fits, else from the start of the line where the
// first name is, cut at a word. ok is false when less than minNamesChars
// (or the whole chunk, when shorter) fits.
func (c namesCandidate) window(room int) (start, end int, ok bool) {
	text := c.hit.Text
	n := utf8.RuneCountInString(text)
	if n <= room {
		return 0, len(text), true
	}
	if room < minNamesChars {
		return 0, 0, false
	}
	start = strings.LastIndexByte(text[:c.at], '\n') + 1
	// Leading blank space is not worth a character of the budget.
	for start < len(text) {
		r, size := utf8.DecodeRuneInString(text[start:])
		if !unicode.IsSpace(r) {
			break
		}
		start += size
	}
	// A long line (a filed contract's preamble is often a single line of
	// a thousand characters) can put the name past the window: then the
	// window starts within the line, at a word about a third of the room
	// before the name.
	if lead := room / 3; utf8.RuneCountInString(text[start:c.at]) > lead {
		at := c.at
		for k := 0; k < lead && at > start; k++ {
			_, size := utf8.DecodeLastRuneInString(text[:at])
			at -= size
		}
		// Forward to the start of a word, unless the name is the word.
		for i := at; i < c.at; {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			if unicode.IsSpace(r) {
				at = i
				break
			}
		}
		start = at
	}
	part := cutAtWord(text[start:], room)
	if part == "" {
		return 0, 0, false
	}
	return start, start + len(part), true
}

// passage is the names passage for the window [start, end) of the chunk,
// its citation's lines counted within the chunk.
func (c namesCandidate) passage(id string, start, end int, d store.DocInfo) Passage {
	h := c.hit
	lineStart := h.LineStart + strings.Count(h.Text[:start], "\n")
	lineEnd := lineStart + strings.Count(strings.TrimRight(h.Text[start:end], "\n"), "\n")
	if start == 0 && end == len(h.Text) {
		lineStart, lineEnd = h.LineStart, h.LineEnd
	}
	ref := schema.Ref{DocumentID: h.DocumentID, Start: h.Start + start, End: h.Start + end}.WithText(h.Text[start:end])
	return Passage{ID: id, Ref: ref.String(), Text: h.Text[start:end],
		Citation: citation(h.Layer, h.File, h.Page, lineStart, lineEnd, h.ClausePath, d), Match: MatchNames}
}

// addNamesPassage appends the names passage to resp when the question
// names something (names) that sources (what the names check reads) lack and a
// chunk of the documents order holds it, and returns its chunk id (0 for
// none) and the note that says where the names are. hits are the chunks
// namesChunks read (nil: read them here, over order). room is the budget
// left, in characters; giveWay drops the weakest passage to make room (in
// the budget, or under MaxPassages) and reports whether it could.
func (a *Asker) addNamesPassage(ctx context.Context, names []Name, resp *Response, sources []NameSource,
	hits []store.Hit, order []int64, returned map[int64]bool, docs map[int64]store.DocInfo,
	room func() int, giveWay func() bool, nextID func() string) (int64, string, error) {
	missing := Missing(names, sources)
	if len(missing) == 0 {
		return 0, "", nil
	}
	if hits == nil {
		var err error
		if hits, err = namesChunks(ctx, a.opt.Docs, order, missing); err != nil {
			return 0, "", err
		}
	}
	nc := findNamesPassage(hits, order, missing, returned)
	if nc == nil {
		return 0, "", nil
	}
	d := docs[nc.hit.DocumentID]
	for {
		// Like the budget, the cap of MaxPassages makes the weakest
		// passage give way to the names passage, or leaves it out.
		if len(resp.Passages) >= MaxPassages {
			if !giveWay() {
				return 0, "", nil
			}
			continue
		}
		id := fmt.Sprintf("S%d", len(resp.Passages)+1)
		over := overhead(id, nc.hit.Ref(), citation(nc.hit.Layer, nc.hit.File, nc.hit.Page, nc.hit.LineStart, nc.hit.LineEnd, nc.hit.ClausePath, d))
		if start, end, ok := nc.window(room() - over); ok {
			p := nc.passage(nextID(), start, end, d)
			resp.Passages = append(resp.Passages, p)
			held := namesIn(p.Text, missing)
			if len(held) == 0 {
				// The window lost them (a name past its end): the
				// passage is no use.
				resp.Passages = resp.Passages[:len(resp.Passages)-1]
				return 0, "", nil
			}
			return nc.hit.ChunkID, fmt.Sprintf("%s %s named in %s (%s, lines %s), from %s.",
				quoteNames(held), isAre(len(held)), p.ID, p.Citation.File, p.Citation.Lines,
				fromDocument(resp.Passages[:len(resp.Passages)-1], nc.hit.DocumentID)), nil
		}
		if !giveWay() {
			return 0, "", nil
		}
	}
}

// fromDocument says which of passages come from the document doc, for
// the names passage's note: the passages of the agreement the question
// names, told apart from those of other documents ranked above them.
func fromDocument(passages []Passage, doc int64) string {
	var ids []string
	for _, p := range passages {
		if r, err := schema.ParseRef(p.Ref); err == nil && r.DocumentID == doc {
			ids = append(ids, p.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "a document no other returned passage comes from"
	case 1:
		return "the document " + ids[0] + " comes from"
	case 2:
		return "the document " + ids[0] + " and " + ids[1] + " come from"
	}
	return "the document " + strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1] + " come from"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// documents are, for an extractive answer, the documents of the passages
// its chosen sentences come from, in the answer's order, and the chunk ids
// of every returned passage.
func (ex *extraction) documents(passages []Passage, kept map[int]string, cands []retrieve.Candidate) ([]int64, map[int64]bool) {
	var order []int64
	for _, s := range ex.answer {
		if r, err := schema.ParseRef(passages[s.passage].Ref); err == nil {
			order = append(order, r.DocumentID)
		}
	}
	returned := map[int64]bool{}
	for i := range kept {
		returned[cands[i].ChunkID] = true
	}
	return order, returned
}

// namesScan is the most chunks namesChunks reads.
const namesScan = 1000

// namesHeld counts, for each document of the passages, how many of the
// names it holds: in its file path, in a returned passage of it, or in one
// of its first chunks (the first namesDocs documents only). Names select
// the document: a contract question that names the parties is answered
// from their agreement. It returns the chunks read as well, for the names
// passage.
func namesHeld(ctx context.Context, d Documents, names []Name, passages []Passage) (map[int64]int, []store.Hit, error) {
	held := map[int64]map[string]bool{}
	var docs []int64
	mark := func(doc int64, text string) {
		for _, n := range namesIn(text, names) {
			held[doc][n.key] = true
		}
	}
	for _, p := range passages {
		r, err := schema.ParseRef(p.Ref)
		if err != nil {
			continue
		}
		if held[r.DocumentID] == nil {
			held[r.DocumentID] = map[string]bool{}
			docs = append(docs, r.DocumentID)
			mark(r.DocumentID, p.Citation.File)
		}
		mark(r.DocumentID, p.Text)
	}
	hits, err := namesChunks(ctx, d, docs, names)
	if err != nil {
		return nil, nil, err
	}
	for _, h := range hits {
		if held[h.DocumentID] != nil {
			mark(h.DocumentID, h.Text)
		}
	}
	out := make(map[int64]int, len(held))
	for doc, m := range held {
		out[doc] = len(m)
	}
	if hits == nil {
		hits = []store.Hit{} // read, and none matched
	}
	return out, hits, nil
}
