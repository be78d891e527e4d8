// Package chunker cuts a parsed document into the passages that are embedded,
// searched and cited (chunks with exact byte spans, lines, page and clause
// path), and splits text into the sentences that extractive answers quote and
// verification checks.
//
// Chunk boundaries are chosen from the text around them, not by counting from
// the start of the document, so an edit to one paragraph moves only the
// boundaries near it: a re-ingest re-embeds the chunks that changed and keeps
// the vectors of the others, which are stored by content hash.
package chunker

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// Version is the version of the chunking rules. It is stored with each
// document; increase it whenever a change to this package can move a chunk
// boundary, so a re-ingest re-chunks documents chunked by an older version.
//
// Version 2: a word longer than MaxWordBytes (or the size, if larger) is cut
// into pieces of that length; before, it was one chunk however long (a
// 63 MB file without a space was one chunk that PostgreSQL's full-text
// index refused), and a section heading longer than 64 KB is read as text
// rather than glued to its body.
//
// Version 3: a chunk that runs past a section start ends only where a
// section starts (or at the end of its block), never inside that section,
// so a subsection's first sentences are no longer chunked under the section
// before it.
//
// Version 4: a span that holds only page furniture (a running head or
// footer, structure.Furniture) joins a neighbouring chunk or is left out; it
// never makes a passage of its own.
const Version = 4

// MaxWordBytes is the longest word kept whole in one chunk when the chunk
// size is smaller: a longer run of non-space bytes (base64 data, a hex
// dump, a file without spaces) is cut into pieces of this many bytes, at
// character boundaries. PostgreSQL's full-text search ignores words of 2,048
// bytes or more, so cutting them loses no lexical match.
const MaxWordBytes = 2047

// maxWord is the longest piece of one word a chunk of the given size holds.
func maxWord(size int) int { return max(size, MaxWordBytes) }

// DefaultSize is the chunk size in bytes of text used when a layer sets none.
//
// Why 800 and not 1,000: the local embedding model reads at most 128
// sentencepiece pieces, about 4.1 characters each on English prose (measured
// on the model's parity sentences) and fewer on code and numbers, so it sees
// roughly the first 500 characters of a chunk; the rest is found only by
// full-text search and the reranker. Because a boundary is placed at the
// best gap between a quarter or a half of the size and all of it, chunks come
// out smaller than the size: on 200 Go blog articles and PEPs the mean chunk
// is 500–540 bytes at 800 (about what the embedder reads) but 600–675 bytes
// at 1,000, where two thirds of the chunks run past the embedder's window.
// A passage must also read on its own: 800 bytes holds a heading with one or
// two whole paragraphs (the median paragraph in those corpora is 150–210
// bytes, the 90th percentile 430–520). And answers pack passages into about
// 1,500 tokens, about 6,000 characters with each passage's id, ref and
// citation, so about ten 500-byte passages fit: close to the default of 10
// results, where 1,000-byte chunks would leave room for six or seven.
const DefaultSize = schema.DefaultChunkSize

// Options controls chunking.
type Options struct {
	// Size is the most bytes of text in a chunk; 0 or less means
	// DefaultSize. A chunk exceeds it only when a single word does, and is
	// then at most MaxWordBytes long (see there). It
	// counts bytes of UTF-8, not characters, because every offset and ref
	// does: a ref's width (End-Start) compares directly with a layer's
	// chunk_size, and a chunk of non-ASCII text is never wider than the
	// size that verification allows it. For English the two are the same.
	Size int
}

func (o Options) size() int {
	if o.Size <= 0 {
		return DefaultSize
	}
	return o.Size
}

// Gap ranks: how good a place the gap before an atom is to end a chunk.
const (
	rankWord     = 1
	rankSentence = 2
	rankPara     = 3
	rankSection  = 4
)

// atomKind says how an atom can be split further.
type atomKind uint8

const (
	atomPara atomKind = iota
	atomSentence
	atomWord
	// atomWords stands for the words of text[start:end], one atom each, not
	// yet listed: a sentence of megabytes without a sentence end (a log line,
	// a file that is one long line) would otherwise hold millions of word
	// atoms at once. Its words are not glued, its first word is ranked by
	// rank and the others rankWord; pack lists them as it goes (wordRun).
	atomWords
)

// minWordRun is the least length of a sentence whose words are listed
// lazily (atomWords) instead of all at once. Below it listing them costs
// less than keeping track; the chunks are the same either way.
var minWordRun = 64 << 10 // a variable so that tests can list every sentence lazily

// maxHeading is the longest section heading kept glued to its body.
const maxHeading = 64 << 10

// atom is a piece of text a chunk boundary may fall around.
type atom struct {
	start, end int
	rank       int  // rank of the gap before the atom
	glue       bool // no chunk may end after this atom (it is or ends with a heading)
	head       bool // the atom is (part of) a section's heading: all of it is glued
	kind       atomKind
	// from is where a paragraph atom's first line starts: its text is read
	// with Sentences' rules from there, indentation included, as Sentences
	// reads it in the whole text.
	from int
}

// Chunk cuts the body of doc (from doc.BodyStart; front matter is never
// chunked) into chunks of at most opt.Size bytes.
//
// Boundaries:
//   - top-level sections and, for paged documents, pages always start a new
//     chunk; top-level sections are those without a parent, and when there
//     is only one of those (a title heading over the whole document), its
//     children as well;
//   - a chunk never ends right after a heading (a section's heading line or
//     a heading line Sentences recognises), so a heading stays with its body;
//   - within those limits a chunk ends at the best gap that leaves it at
//     least a quarter to a half full: a subsection start before a paragraph
//     break before a sentence end before a space between words, so small
//     subsections of one parent share a chunk and a long section is split at
//     paragraphs, then sentences, then words;
//   - among equally good gaps the choice is made by a hash of the 32 bytes
//     on each side of the gap, not by position, so boundaries depend on the
//     text near them: an edit that keeps a paragraph's length and leaves the
//     32 bytes at each end of its sentences alone changes only the chunks
//     holding it, and after an edit that adds or removes text the
//     boundaries fall back into their old places within a chunk or two
//     (TestEditIsLocal measures about 1.1–1.4 new chunks per edit on real
//     documents).
//
// Chunk spans are trimmed of surrounding blank lines (and of trailing
// spaces), whitespace-only text gives no chunk, and every other byte of the
// body is in exactly one chunk, except page furniture that could not join a
// neighbouring chunk (see placeFurniture). The same input always gives the same chunks.
//
// A table (schema.FormatTable) is cut between rows only: see chunkTable.
func Chunk(doc *schema.ParsedDoc, sections []schema.Section, opt Options) []schema.Chunk {
	text := doc.Text
	size := opt.size()
	if doc.Format == schema.FormatTable {
		return chunkTable(doc, sections, size)
	}
	body := doc.BodyStart
	if body < 0 {
		body = 0
	}
	if body > len(text) {
		body = len(text)
	}

	var spans [][2]int
	hard := hardCuts(doc, sections, body)
	lay := newLayout(sections, body, len(text))
	furn := structure.Furniture(text, doc.Format)
	for i := 0; i+1 < len(hard); i++ {
		bs, be := hard[i], hard[i+1]
		atoms := blockAtoms(text, lay, bs, be)
		atoms = refine(text, atoms, size)
		spans = append(spans, placeFurniture(text, pack(text, atoms, size), furn, size)...)
	}
	return makeChunks(doc, sections, spans)
}

// placeFurniture keeps a span that holds only page furniture (a running
// head or footer, structure.Furniture) from being a passage of its own: it
// joins the span before it in the same block, or else the one after, when
// the joined span stays within size; otherwise it is left out of every
// chunk (it stays in the stored text). spans lie in one block, in order.
func placeFurniture(text string, spans [][2]int, furn [][2]int, size int) [][2]int {
	if len(furn) == 0 {
		return spans
	}
	out := spans[:0:0]
	pending := -1 // start of a furniture span waiting for the next span
	for _, sp := range spans {
		if !onlyFurniture(text, sp, furn) {
			if pending >= 0 && sp[1]-pending <= size {
				sp[0] = pending
			}
			pending = -1
			out = append(out, sp)
			continue
		}
		if n := len(out); n > 0 && sp[1]-out[n-1][0] <= size {
			out[n-1][1] = sp[1]
			continue
		}
		if pending < 0 {
			pending = sp[0]
		}
	}
	return out
}

// onlyFurniture reports whether every byte of span sp that is not white
// space lies in one of the sorted furniture spans.
func onlyFurniture(text string, sp [2]int, furn [][2]int) bool {
	k := sort.Search(len(furn), func(i int) bool { return furn[i][1] > sp[0] })
	for pos := sp[0]; pos < sp[1]; pos++ {
		for k < len(furn) && furn[k][1] <= pos {
			k++
		}
		if k < len(furn) && furn[k][0] <= pos {
			pos = furn[k][1] - 1
			continue
		}
		if !isSpaceByte(text[pos]) {
			return false
		}
	}
	return true
}

// hardCuts returns the sorted offsets no chunk may straddle: the body's
// start and end, top-level section starts, page starts and ends.
func hardCuts(doc *schema.ParsedDoc, sections []schema.Section, body int) []int {
	n := len(doc.Text)
	cuts := []int{body, n}
	add := func(off int) {
		if off > body && off < n {
			cuts = append(cuts, off)
		}
	}
	for _, off := range topLevel(doc.Text, sections) {
		add(off)
	}
	for _, p := range doc.Pages {
		add(p.Start)
		add(p.End)
	}
	sort.Ints(cuts)
	return dedup(cuts)
}

// topLevel returns the starts of the sections that count as top-level:
// those without a parent, and, when there is only one such section and it
// has several children (a document title heading above numbered sections),
// its children too, and so on down. A Markdown policy under one "# Title"
// thus keeps its "## 1 Scope" and "## 2 Definitions" in separate chunks. A
// child that follows its parent's heading with no text between them does
// not start a new chunk, so the title stays with the first section.
func topLevel(text string, sections []schema.Section) []int {
	var starts, level []int
	for i, s := range sections {
		if s.Parent < 0 {
			level = append(level, i)
			starts = append(starts, s.Start)
		}
	}
	for len(level) == 1 {
		p := level[0]
		level = nil
		for i, s := range sections {
			if s.Parent == p && i != p {
				level = append(level, i)
			}
		}
		if len(level) < 2 {
			break
		}
		he := min(max(sections[p].HeadingEnd, 0), len(text))
		for _, i := range level {
			s := sections[i]
			if s.Start >= he && s.Start <= len(text) && isBlank(text[he:s.Start]) {
				continue // right under the parent's heading
			}
			starts = append(starts, s.Start)
		}
	}
	return starts
}

func dedup(xs []int) []int {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// cut is a place inside a block where a paragraph must end: a subsection
// start (rankSection) or the end of a heading (rankPara).
type cut struct {
	off  int
	rank int
}

// layout is what the sections say about where atoms end, computed once.
type layout struct {
	cuts  []cut    // sorted by offset, one per offset (the best rank)
	heads [][2]int // the union of heading spans, sorted and disjoint
}

func newLayout(sections []schema.Section, body, n int) layout {
	var l layout
	var spans [][2]int
	for _, s := range sections {
		if s.Start >= body && s.Start < n {
			l.cuts = append(l.cuts, cut{s.Start, rankSection})
		}
		he := min(s.HeadingEnd, s.End, n)
		if he > s.Start && he > body {
			l.cuts = append(l.cuts, cut{he, rankPara})
			spans = append(spans, [2]int{max(s.Start, 0), he})
		}
	}
	sort.Slice(l.cuts, func(i, j int) bool {
		if l.cuts[i].off != l.cuts[j].off {
			return l.cuts[i].off < l.cuts[j].off
		}
		return l.cuts[i].rank > l.cuts[j].rank
	})
	out := l.cuts[:0]
	for i, c := range l.cuts {
		if i == 0 || c.off != l.cuts[i-1].off {
			out = append(out, c)
		}
	}
	l.cuts = out
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	for _, sp := range spans {
		if k := len(l.heads) - 1; k >= 0 && sp[0] <= l.heads[k][1] {
			l.heads[k][1] = max(l.heads[k][1], sp[1])
			continue
		}
		l.heads = append(l.heads, sp)
	}
	return l
}

// inHeading reports whether text[a:b] lies inside a section heading.
func (l layout) inHeading(a, b int) bool {
	i := sort.Search(len(l.heads), func(i int) bool { return l.heads[i][0] > a }) - 1
	return i >= 0 && b <= l.heads[i][1]
}

// blockAtoms splits text[bs:be] into paragraph atoms, also cutting at
// subsection starts and heading ends.
func blockAtoms(text string, lay layout, bs, be int) []atom {
	first := sort.Search(len(lay.cuts), func(i int) bool { return lay.cuts[i].off > bs })
	var atoms []atom
	ss, rank := bs, rankSection
	for i := first; ; i++ {
		se, next := be, rankSection
		if i < len(lay.cuts) && lay.cuts[i].off < be {
			se, next = lay.cuts[i].off, lay.cuts[i].rank
		}
		// A "heading" of more than maxHeading bytes (a Markdown file that
		// is one long "# ..." line) is read as text: keeping all of it
		// glued would mean listing every word of it at once.
		heading := lay.inHeading(ss, se) && se-ss <= maxHeading
		for _, p := range paragraphs(text, ss, se) {
			a := atom{start: p.start, end: p.end, from: p.from, rank: rank, kind: atomPara, head: heading}
			a.glue = heading || endsWithHeading(text, p.from, p.end)
			atoms = append(atoms, a)
			rank = rankPara
		}
		if se == be {
			return atoms
		}
		// The first paragraph after a cut is ranked by the cut.
		ss, rank = se, next
	}
}

// para is a paragraph: its span, from the indentation of its first line
// to its last non-space byte, and where its first line starts.
type para struct{ start, end, from int }

// paragraphs returns the blank-line separated paragraphs of text[s:e].
func paragraphs(text string, s, e int) []para {
	var out []para
	cur := para{start: -1}
	pos := s
	for pos < e {
		l := lineAt(text, pos, e)
		if l.blank() {
			if cur.start >= 0 {
				out = append(out, cur)
				cur.start = -1
			}
		} else {
			if cur.start < 0 {
				// Keep the indentation: the spaces and tabs right before
				// the text, not a form feed or other control space.
				cur.start, cur.from = l.ts, l.start
				for cur.start > l.start && (text[cur.start-1] == ' ' || text[cur.start-1] == '\t') {
					cur.start--
				}
			}
			cur.end = l.te
		}
		pos = l.next
	}
	if cur.start >= 0 {
		out = append(out, cur)
	}
	return out
}

// endsWithHeading reports whether the paragraph text[s:e] ends with a line
// Sentences would call a heading.
func endsWithHeading(text string, s, e int) bool {
	ls := s
	for i := e - 1; i > s; i-- {
		if text[i] == '\n' {
			ls = i + 1
			break
		}
	}
	last := lineAt(text, ls, e)
	c := text[last.ts]
	// Cheap checks first: only these lines can end a paragraph as a heading.
	if c != '#' && !(c >= '0' && c <= '9') && !(c >= 'A' && c <= 'Z') && c < utf8.RuneSelf && !isRuleLine(text, last) {
		return false
	}
	units := splitUnits(text, s, e)
	return len(units) > 0 && units[len(units)-1].kind == unitHeading
}

// refine splits atoms until every atom, and every run of atoms glued to a
// heading, fits in size, splitting paragraphs into sentences and sentences
// into words. Only a single word longer than size is left over size (cut
// into pieces of maxWord(size) when it is longer than that); a
// heading that cannot fit with anything after it is let go of.
func refine(text string, atoms []atom, size int) []atom {
	out := make([]atom, 0, len(atoms))
	i := 0
	for i < len(atoms) {
		// The glued run atoms[i..j].
		j := i
		for j < len(atoms)-1 && atoms[j].glue {
			j++
		}
		if atoms[j].end-atoms[i].start <= size {
			out = append(out, atoms[i:j+1]...)
			i = j + 1
			continue
		}
		group := append([]atom(nil), atoms[i:j+1]...)
		for {
			// Runs before k fit and do not change: move them out.
			k, l, ok := firstOversized(group, size)
			if !ok {
				break
			}
			out = append(out, group[:k]...)
			group, l, k = group[k:], l-k, 0
			// A paragraph glued to the text because it ends with a heading
			// is split into its sentences first, so that only the heading
			// stays glued; then the last atom of the run is split; then the
			// headings that do not fit with the text let go of it (the
			// nearest stay); else it is a lone word over size.
			if splitGlued(text, &group, k, l) {
				continue
			}
			pieces := split(text, group[l], size)
			if len(pieces) > 1 {
				group = append(group[:l:l], append(pieces, group[l+1:]...)...)
				continue
			}
			group[l] = pieces[0] // a word, trimmed
			if l > k {
				// Keep the headings nearest the text that fit with it.
				kk := l
				for kk > k && group[l].end-group[kk-1].start <= size {
					kk--
				}
				for x := k; x < kk; x++ {
					group[x].glue = false
				}
				continue
			}
			out = append(out, group[:l+1]...) // a lone word over size
			group = group[l+1:]
		}
		out = append(out, group...)
		i = j + 1
	}
	return out
}

// splitGlued splits the paragraphs of the run group[k..l] that are glued
// because they end with a heading into their sentences, so that only their
// headings stay glued to what follows. It reports whether it split any.
func splitGlued(text string, group *[]atom, k, l int) bool {
	g := *group
	var run []atom
	split := false
	for x := k; x < l; x++ {
		a := g[x]
		if a.kind != atomPara {
			run = append(run, a)
			continue
		}
		units := splitUnits(text, a.from, a.end)
		if len(units) <= 1 {
			a.kind = atomSentence
			run = append(run, a)
			continue
		}
		split = true
		for u, un := range units {
			p := atom{start: un.start, end: un.end, rank: rankSentence, glue: a.head || un.kind == unitHeading, head: a.head, kind: atomSentence}
			if u == 0 {
				p.rank = a.rank
			}
			if u == len(units)-1 {
				p.glue = true
			}
			run = append(run, p)
		}
	}
	if !split {
		copy(g[k:l], run)
		return false
	}
	*group = append(append(g[:k:k], run...), g[l:]...)
	return true
}

// firstOversized finds the first glued run group[k..l] longer than size.
func firstOversized(group []atom, size int) (k, l int, ok bool) {
	for k = 0; k < len(group); {
		l = k
		for l < len(group)-1 && group[l].glue {
			l++
		}
		// The words of an atomWords atom are split as far as they go.
		if group[l].end-group[k].start > size && !(k == l && group[l].kind == atomWords) {
			return k, l, true
		}
		k = l + 1
	}
	return 0, 0, false
}

// split cuts an atom one level finer: a paragraph into sentences (and
// headings and separator lines), a sentence into words, a word longer than
// maxWord(size) into pieces of that length. It returns the atom itself when
// it cannot be split.
func split(text string, a atom, size int) []atom {
	var pieces []atom
	if a.kind == atomPara {
		units := splitUnits(text, a.from, a.end)
		if len(units) > 1 {
			for _, u := range units {
				pieces = append(pieces, atom{start: u.start, end: u.end, rank: rankSentence, glue: a.head || u.kind == unitHeading, head: a.head, kind: atomSentence})
			}
		} else {
			a.kind = atomSentence
		}
	}
	if pieces == nil && a.kind == atomSentence && !a.head && a.end-a.start >= minWordRun {
		if run, ok := wordRun(text, a); ok {
			return run
		}
	}
	if a.kind == atomWords {
		// Not reached (refine leaves these atoms alone); listing the words
		// is always correct.
		a.kind = atomSentence
	}
	if pieces == nil && a.kind == atomSentence {
		for _, w := range words(text, a.start, a.end) {
			pieces = append(pieces, atom{start: w[0], end: w[1], rank: rankWord, glue: a.head, head: a.head, kind: atomWord})
		}
	}
	if len(pieces) <= 1 {
		// One word: drop the indentation around it, so that a word over
		// size is a chunk of its own and nothing more.
		a.kind = atomWord
		if len(pieces) == 1 {
			a.start, a.end = pieces[0].start, pieces[0].end
		}
		if a.end-a.start <= maxWord(size) {
			return []atom{a}
		}
		pieces = nil
		for s := a.start; s < a.end; {
			e := cutWord(text, s, a.end, maxWord(size))
			pieces = append(pieces, atom{start: s, end: e, rank: rankWord, glue: a.head, head: a.head, kind: atomWord})
			s = e
		}
	}
	pieces[0].rank = a.rank
	// The last piece is glued to what follows exactly when the atom was: a
	// heading that had to let go of its text stays let go.
	pieces[len(pieces)-1].glue = a.glue
	return pieces
}

// wordRun splits a long sentence atom the way split does, into its words,
// but lists the words between the first and the last as one atomWords atom.
// The first word takes the sentence's rank (a heading before it may be
// glued to it) and the last its glue, so the atomWords atom is never part of
// a glued run and refine never has to look inside it. It reports false when
// the sentence has fewer than three words.
func wordRun(text string, a atom) (pieces []atom, ok bool) {
	s, e := a.start, a.end
	for s < e && isSpaceByte(text[s]) {
		s++
	}
	for e > s && isSpaceByte(text[e-1]) {
		e--
	}
	fe := s // the first word is text[s:fe]
	for fe < e && !isSpaceByte(text[fe]) {
		fe++
	}
	ls := e // the last word is text[ls:e]
	for ls > fe && !isSpaceByte(text[ls-1]) {
		ls--
	}
	rs, re := fe, ls // the words between them, trimmed
	for rs < re && isSpaceByte(text[rs]) {
		rs++
	}
	for re > rs && isSpaceByte(text[re-1]) {
		re--
	}
	if rs >= re {
		return nil, false
	}
	return []atom{
		{start: s, end: fe, rank: a.rank, kind: atomWord},
		{start: rs, end: re, rank: rankWord, kind: atomWords},
		{start: ls, end: e, rank: rankWord, glue: a.glue, kind: atomWord},
	}, true
}

// cutWord returns where the first piece of the word text[s:e] ends: at most
// limit bytes on, at the start of a character.
func cutWord(text string, s, e, limit int) int {
	if e-s <= limit {
		return e
	}
	c := s + limit
	for c > s+1 && !utf8.RuneStart(text[c]) {
		c--
	}
	if !utf8.RuneStart(text[c]) {
		c = s + limit // not UTF-8: cut at the limit
	}
	return c
}

// atomStream lists atoms in order, with the words of atomWords atoms listed
// one by one as they are asked for, so that at most a chunk's worth of them
// is held at a time. A word longer than limit is listed as pieces, as split
// cuts it.
type atomStream struct {
	text  string
	limit int
	atoms []atom
	next  int  // the next atom of atoms to list
	pos   int  // inside an atomWords atom: where its next word is looked for
	inRun bool // listing the words of atoms[next-1]
	first bool // the next word is the first of its run
}

// pop returns the next atom, or false at the end.
func (st *atomStream) pop() (atom, bool) {
	for {
		if st.inRun {
			run := st.atoms[st.next-1]
			i := st.pos
			for i < run.end && isSpaceByte(st.text[i]) {
				i++
			}
			if i < run.end {
				j := i
				for j < run.end && !isSpaceByte(st.text[j]) {
					j++
				}
				// The rest of a cut word is found from here as a word.
				j = cutWord(st.text, i, j, st.limit)
				st.pos = j
				w := atom{start: i, end: j, rank: rankWord, kind: atomWord}
				if st.first {
					w.rank, st.first = run.rank, false
				}
				return w, true
			}
			st.inRun = false
		}
		if st.next >= len(st.atoms) {
			return atom{}, false
		}
		a := st.atoms[st.next]
		st.next++
		if a.kind != atomWords {
			return a, true
		}
		st.inRun, st.pos, st.first = true, a.start, true
	}
}

// words returns the runs of non-space characters in text[s:e].
func words(text string, s, e int) [][2]int {
	var out [][2]int
	ws := -1
	for i := s; i < e; {
		// Only ASCII whitespace separates words: a no-break space does not.
		if isSpaceByte(text[i]) {
			if ws >= 0 {
				out = append(out, [2]int{ws, i})
				ws = -1
			}
		} else if ws < 0 {
			ws = i
		}
		i++
	}
	if ws >= 0 {
		out = append(out, [2]int{ws, e})
	}
	return out
}

// minFill is how full a chunk must be before a gap of the given rank may end
// it: a subsection start may end a chunk a quarter full, a sentence end only
// half full.
func minFill(rank, size int) int {
	switch rank {
	case rankSection:
		return size / 4
	case rankPara:
		return size / 3
	default:
		return size / 2
	}
}

// gapScore is a hash of the text on both sides of the gap between atoms
// prev and next (the last 32 bytes before it, the first 32 after it). It
// breaks ties between gaps of the same rank by content, so where a boundary
// falls does not depend on where the chunk began, and an edit in the middle
// of a paragraph changes no score. Both sides are hashed because documents
// repeat openings (".. code-block::", "- ") more than they repeat pairs.
func gapScore(text string, prev, next atom) uint32 {
	// FNV-1a, written out so that no byte slice is allocated per gap.
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for _, c := range []byte(text[max(prev.start, prev.end-32):prev.end]) {
		h = (h ^ uint32(c)) * prime
	}
	h *= prime // the 0 byte between the two sides: (h ^ 0) * prime
	for _, c := range []byte(text[next.start:min(next.end, next.start+32)]) {
		h = (h ^ uint32(c)) * prime
	}
	return h
}

// pack groups atoms into chunk spans of at most size bytes. It reads the
// atoms through an atomStream and keeps only those from the start of the
// chunk being packed to just past its size (win).
func pack(text string, atoms []atom, size int) [][2]int {
	if len(atoms) == 0 {
		return nil
	}
	end := atoms[len(atoms)-1].end // where the last atom ends
	st := &atomStream{text: text, limit: maxWord(size), atoms: atoms}
	var win []atom
	done := false
	// has reports whether atom k of the window exists, listing more as
	// needed.
	has := func(k int) bool {
		for len(win) <= k && !done {
			a, ok := st.pop()
			if !ok {
				done = true
				break
			}
			win = append(win, a)
		}
		return k < len(win)
	}
	var out [][2]int
	for has(0) {
		s := win[0].start
		if end-s <= size {
			out = append(out, [2]int{s, end})
			break
		}
		best, bestRank, bestScore := -1, 0, uint32(0)
		far := -1
		// entered is the last section start the chunk could end before
		// and runs past: once inside that section, the chunk may end
		// only where a section starts (or at the end), so a section's
		// first sentences are never chunked under the section before.
		entered := -1
		for k := 0; has(k+1) && win[k].end-s <= size; k++ {
			if win[k].glue {
				continue
			}
			far = k
			next := win[k+1]
			inside := entered >= 0 && next.rank < rankSection
			if next.rank >= rankSection {
				entered = k
			}
			if inside || win[k].end-s < minFill(next.rank, size) {
				continue
			}
			sc := gapScore(text, win[k], next)
			if best < 0 || next.rank > bestRank || next.rank == bestRank && sc >= bestScore {
				best, bestRank, bestScore = k, next.rank, sc
			}
		}
		if best < 0 && entered >= 0 {
			// A short section before a long one: end before the long
			// one rather than inside it.
			best = entered
		}
		if best < 0 {
			best = far
		}
		if best < 0 {
			// Nothing fits: the first glued run holds a word longer than
			// size. End after the run.
			best = 0
			for has(best+1) && win[best].glue {
				best++
			}
		}
		out = append(out, [2]int{s, win[best].end})
		// Drop the packed atoms; copy the rest down so the window's array
		// stays the size of one chunk's atoms.
		win = win[:copy(win, win[best+1:])]
	}
	return out
}

// makeChunks fills in the chunks for spans, which are in order. Lines are
// counted and sections tracked as the spans advance, so the cost is linear
// in the text, not in the text times the chunks.
func makeChunks(doc *schema.ParsedDoc, sections []schema.Section, spans [][2]int) []schema.Chunk {
	text := doc.Text
	out := make([]schema.Chunk, 0, len(spans))
	line, lineOff := 1, 0 // line is the line number of byte lineOff
	lineAt := func(off int) int {
		line += strings.Count(text[lineOff:off], "\n")
		lineOff = off
		return line
	}
	order := make([]int, len(sections))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sections[order[a]].Start < sections[order[b]].Start })
	var active []int // sections that started at or before the current span
	next := 0
	for _, sp := range spans {
		s, e := sp[0], sp[1]
		for next < len(order) && sections[order[next]].Start <= s {
			active = append(active, order[next])
			next++
		}
		kept := active[:0]
		for _, i := range active {
			if sections[i].End > s {
				kept = append(kept, i)
			}
		}
		active = kept
		t := text[s:e]
		c := schema.Chunk{
			Ordinal:    len(out),
			Start:      s,
			End:        e,
			LineStart:  lineAt(s),
			Page:       doc.PageAt(s),
			ClausePath: clausePath(sections, active, s),
			Text:       t,
			Hash:       schema.ContentHash(t),
		}
		c.LineEnd = lineAt(e - 1)
		out = append(out, c)
	}
	return out
}

// clausePath is the Path of the innermost section holding off, among the
// candidates (indexes into sections): the shortest one, the deeper one on a
// tie, the first one listed after that.
func clausePath(sections []schema.Section, candidates []int, off int) string {
	best := -1
	for _, i := range candidates {
		s := sections[i]
		if off < s.Start || off >= s.End {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := sections[best]
		switch {
		case s.End-s.Start < b.End-b.Start,
			s.End-s.Start == b.End-b.Start && s.Level > b.Level,
			s.End-s.Start == b.End-b.Start && s.Level == b.Level && i < best:
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return sections[best].Path
}
