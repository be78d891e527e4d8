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
	"hash/fnv"
	"sort"

	"github.com/stratakb/stratakb/schema"
)

// Version is the version of the chunking rules. It is stored with each
// document; increase it whenever a change to this package can move a chunk
// boundary, so a re-ingest re-chunks documents chunked by an older version.
const Version = 1

// DefaultSize is the chunk size in bytes of text used when a layer sets none.
//
// Why 800: the local embedding model reads at most 128 sentencepiece pieces,
// about 4.1 characters each on English prose (measured on the model's parity
// sentences) and fewer on code and numbers, so it sees roughly the first 500
// characters of a chunk. Chunks are cut at the best-placed boundary between
// half and all of the size, so they average about 600 characters: most of a
// typical chunk is in its vector, and the rest is still found by full-text
// search and the reranker. A passage must also read on its own: 800
// characters holds a heading with one or two paragraphs whole (the median
// paragraph in the Go blog and PEP corpora is 150–210 characters, the 90th
// percentile 430–520). And answers pack passages into about 1,500 tokens
// (about 6,000 characters with each passage's id, ref and citation), so about
// eight 600–800 character passages fit, close to the default 10 results; at
// 1,000 characters only five or six would, and half of each would be unseen
// by the embedder.
const DefaultSize = 800

// Options controls chunking.
type Options struct {
	// Size is the most bytes of text in a chunk; 0 or less means
	// DefaultSize. A chunk exceeds it only when a single word does.
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
)

// atom is a piece of text a chunk boundary may fall around.
type atom struct {
	start, end int
	rank       int  // rank of the gap before the atom
	glue       bool // no chunk may end after this atom (it is or ends with a heading)
	kind       atomKind
}

// Chunk cuts the body of doc (from doc.BodyStart; front matter is never
// chunked) into chunks of at most opt.Size bytes.
//
// Boundaries:
//   - top-level sections (Parent < 0) and, for paged documents, pages always
//     start a new chunk;
//   - a chunk never ends right after a heading (a section's heading line or
//     a heading line Sentences recognises), so a heading stays with its body;
//   - within those limits a chunk ends at the best gap that leaves it at
//     least a quarter to a half full: a subsection start before a paragraph
//     break before a sentence end before a space between words, so small
//     subsections of one parent share a chunk and a long section is split at
//     paragraphs, then sentences, then words;
//   - among equally good gaps the choice is made by a hash of the words
//     right after each gap, not by position, so after an edit the boundaries
//     fall back into their old places within a chunk or two.
//
// Chunk spans are trimmed of surrounding blank lines (and of trailing
// spaces), whitespace-only text gives no chunk, and every other byte of the
// body is in exactly one chunk. The same input always gives the same chunks.
func Chunk(doc *schema.ParsedDoc, sections []schema.Section, opt Options) []schema.Chunk {
	text := doc.Text
	size := opt.size()
	body := doc.BodyStart
	if body < 0 {
		body = 0
	}
	if body > len(text) {
		body = len(text)
	}

	var out []schema.Chunk
	hard := hardCuts(doc, sections, body)
	for i := 0; i+1 < len(hard); i++ {
		bs, be := hard[i], hard[i+1]
		atoms := blockAtoms(text, sections, bs, be)
		atoms = refine(text, atoms, size)
		for _, r := range pack(text, atoms, size) {
			out = append(out, makeChunk(doc, sections, len(out), r[0], r[1]))
		}
	}
	return out
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
	for _, s := range sections {
		if s.Parent < 0 {
			add(s.Start)
		}
	}
	for _, p := range doc.Pages {
		add(p.Start)
		add(p.End)
	}
	sort.Ints(cuts)
	return dedup(cuts)
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

// blockAtoms splits text[bs:be] into paragraph atoms, also cutting at
// subsection starts and heading ends.
func blockAtoms(text string, sections []schema.Section, bs, be int) []atom {
	type cut struct {
		off  int
		rank int
	}
	cuts := []cut{{bs, rankSection}}
	var heads [][2]int
	for _, s := range sections {
		if s.End <= bs || s.Start >= be {
			continue
		}
		if s.Start > bs && s.Start < be {
			cuts = append(cuts, cut{s.Start, rankSection})
		}
		he := min(s.HeadingEnd, s.End, be)
		if he > s.Start && he > bs && he < be {
			cuts = append(cuts, cut{he, rankPara})
		}
		if he > s.Start {
			heads = append(heads, [2]int{max(s.Start, bs), he})
		}
	}
	sort.Slice(cuts, func(i, j int) bool {
		if cuts[i].off != cuts[j].off {
			return cuts[i].off < cuts[j].off
		}
		return cuts[i].rank > cuts[j].rank
	})
	inHeading := func(a, b int) bool {
		for _, h := range heads {
			if h[0] <= a && b <= h[1] {
				return true
			}
		}
		return false
	}

	var atoms []atom
	for i := 0; i < len(cuts); i++ {
		if i > 0 && cuts[i].off == cuts[i-1].off {
			continue
		}
		ss, se := cuts[i].off, be
		for k := i + 1; k < len(cuts); k++ {
			if cuts[k].off > ss {
				se = cuts[k].off
				break
			}
		}
		rank := cuts[i].rank
		heading := inHeading(ss, se)
		for _, p := range paragraphs(text, ss, se) {
			a := atom{start: p[0], end: p[1], rank: rank, kind: atomPara}
			a.glue = heading || endsWithHeading(text, p[0], p[1])
			atoms = append(atoms, a)
			rank = rankPara
		}
	}
	return atoms
}

// paragraphs returns the blank-line separated paragraphs of text[s:e], each
// from the start of its first line (indentation kept) to its last non-space
// byte.
func paragraphs(text string, s, e int) [][2]int {
	var out [][2]int
	ps := -1
	lastEnd := -1
	pos := s
	for pos < e {
		l := lineAt(text, pos, e)
		if l.blank() {
			if ps >= 0 {
				out = append(out, [2]int{ps, lastEnd})
				ps = -1
			}
		} else {
			if ps < 0 {
				ps = l.start
			}
			lastEnd = l.te
		}
		pos = l.next
	}
	if ps >= 0 {
		out = append(out, [2]int{ps, lastEnd})
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
	if c != '#' && !(c >= '0' && c <= '9') && !(c >= 'A' && c <= 'Z') && c != 0xC2 && !isRuleLine(text, last) {
		return false
	}
	units := splitUnits(text, s, e)
	return len(units) > 0 && units[len(units)-1].kind == unitHeading
}

// refine splits atoms until every atom, and every run of atoms glued to a
// heading, fits in size, splitting paragraphs into sentences and sentences
// into words. Only a single word longer than size is left over size; a
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
		from := 0
		for {
			k, l, ok := firstOversized(group, from, size)
			if !ok {
				break
			}
			// A paragraph glued to the text because it ends with a heading
			// is split into its sentences first, so that only the heading
			// stays glued; then the last atom of the run is split; then the
			// glue of the first heading is let go (the headings nearest
			// the text stay with it); else it is a lone word over size.
			if l > k && group[l-1].kind == atomPara {
				units := splitUnits(text, group[l-1].start, group[l-1].end)
				if len(units) > 1 {
					pieces := make([]atom, len(units))
					for u, un := range units {
						pieces[u] = atom{start: un.start, end: un.end, rank: rankSentence, glue: un.kind == unitHeading, kind: atomSentence}
					}
					pieces[0].rank = group[l-1].rank
					pieces[len(pieces)-1].glue = true
					group = append(group[:l-1:l-1], append(pieces, group[l:]...)...)
					continue
				}
				group[l-1].kind = atomSentence
			}
			if pieces := split(text, group[l]); len(pieces) > 1 {
				group = append(group[:l:l], append(pieces, group[l+1:]...)...)
				continue
			}
			group[l].kind = atomWord
			if l > k {
				group[k].glue = false
				continue
			}
			from = l + 1
		}
		out = append(out, group...)
		i = j + 1
	}
	return out
}

// firstOversized finds the first glued run group[k..l], k >= from, longer
// than size.
func firstOversized(group []atom, from, size int) (k, l int, ok bool) {
	for k = from; k < len(group); {
		l = k
		for l < len(group)-1 && group[l].glue {
			l++
		}
		if group[l].end-group[k].start > size {
			return k, l, true
		}
		k = l + 1
	}
	return 0, 0, false
}

// split cuts an atom one level finer: a paragraph into sentences (and
// headings and separator lines), a sentence into words. It returns the atom
// itself when it cannot be split.
func split(text string, a atom) []atom {
	var pieces []atom
	if a.kind == atomPara {
		units := splitUnits(text, a.start, a.end)
		if len(units) > 1 {
			for _, u := range units {
				pieces = append(pieces, atom{start: u.start, end: u.end, rank: rankSentence, glue: u.kind == unitHeading, kind: atomSentence})
			}
		} else {
			a.kind = atomSentence
		}
	}
	if pieces == nil && a.kind == atomSentence {
		for _, w := range words(text, a.start, a.end) {
			pieces = append(pieces, atom{start: w[0], end: w[1], rank: rankWord, kind: atomWord})
		}
	}
	if len(pieces) <= 1 {
		a.kind = atomWord
		return []atom{a}
	}
	pieces[0].rank = a.rank
	if a.glue {
		pieces[len(pieces)-1].glue = true
	}
	return pieces
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
	h := fnv.New32a()
	h.Write([]byte(text[max(prev.start, prev.end-32):prev.end]))
	h.Write([]byte{0})
	h.Write([]byte(text[next.start:min(next.end, next.start+32)]))
	return h.Sum32()
}

// pack groups atoms into chunk spans of at most size bytes.
func pack(text string, atoms []atom, size int) [][2]int {
	var out [][2]int
	i := 0
	for i < len(atoms) {
		s := atoms[i].start
		last := len(atoms) - 1
		if atoms[last].end-s <= size {
			out = append(out, [2]int{s, atoms[last].end})
			break
		}
		best, bestRank, bestScore := -1, 0, uint32(0)
		far := -1
		for k := i; k < last && atoms[k].end-s <= size; k++ {
			if atoms[k].glue {
				continue
			}
			far = k
			next := atoms[k+1]
			if atoms[k].end-s < minFill(next.rank, size) {
				continue
			}
			sc := gapScore(text, atoms[k], next)
			if best < 0 || next.rank > bestRank || next.rank == bestRank && sc >= bestScore {
				best, bestRank, bestScore = k, next.rank, sc
			}
		}
		if best < 0 {
			best = far
		}
		if best < 0 {
			// Nothing fits: the first glued run holds a word longer than
			// size. End after the run.
			best = i
			for best < last && atoms[best].glue {
				best++
			}
		}
		out = append(out, [2]int{s, atoms[best].end})
		i = best + 1
	}
	return out
}

func makeChunk(doc *schema.ParsedDoc, sections []schema.Section, ord, s, e int) schema.Chunk {
	t := doc.Text[s:e]
	return schema.Chunk{
		Ordinal:    ord,
		Start:      s,
		End:        e,
		LineStart:  schema.LineOf(doc.Text, s),
		LineEnd:    schema.LineOf(doc.Text, e-1),
		Page:       doc.PageAt(s),
		ClausePath: clausePath(sections, s),
		Text:       t,
		Hash:       schema.ContentHash(t),
	}
}

// clausePath is the Path of the innermost section holding off: the
// shortest one, the deeper one on a tie.
func clausePath(sections []schema.Section, off int) string {
	best := -1
	for i, s := range sections {
		if off < s.Start || off >= s.End {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := sections[best]
		if s.End-s.Start < b.End-b.Start || s.End-s.Start == b.End-b.Start && s.Level > b.Level {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return sections[best].Path
}
