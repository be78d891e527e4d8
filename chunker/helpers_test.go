package chunker

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// bodyStart finds the end of YAML front matter (--- … ---) or of a PEP's
// RFC-822 header, the way a parser would; 0 when there is none.
func bodyStart(text string) int {
	if strings.HasPrefix(text, "---\n") {
		if i := strings.Index(text[4:], "\n---\n"); i >= 0 {
			return 4 + i + 5
		}
	}
	if strings.HasPrefix(text, "PEP:") {
		if i := strings.Index(text, "\n\n"); i >= 0 {
			return i + 2
		}
	}
	return 0
}

var clauseNum = regexp.MustCompile(`^(\d+(?:\.\d+)*)\.?\s+(.*)$`)

// testSections is a deliberately small heading detector for tests (the real
// one lives in package structure): Markdown "#" headings and underlined
// headings, nested by level, with a clause number taken from the title.
func testSections(text string, body int) []schema.Section {
	type head struct {
		start, headEnd, level int
		title                 string
	}
	var heads []head
	underlineLevel := map[byte]int{}
	lines := strings.SplitAfter(text[body:], "\n")
	off := body
	for i, ln := range lines {
		t := strings.TrimRight(ln, "\r\n \t")
		switch {
		case strings.HasPrefix(t, "#"):
			n := len(t) - len(strings.TrimLeft(t, "#"))
			if n <= 6 && (len(t) == n || t[n] == ' ') {
				heads = append(heads, head{off, off + len(t), n, strings.TrimSpace(t[n:])})
			}
		case i+1 < len(lines) && t != "" && strings.TrimSpace(t) == t:
			u := strings.TrimRight(lines[i+1], "\r\n \t")
			if len(u) >= 3 && len(u) >= len(t) && strings.Count(u, u[:1]) == len(u) && strings.ContainsAny(u[:1], "=-~^*") {
				lv, ok := underlineLevel[u[0]]
				if !ok {
					lv = len(underlineLevel) + 1
					underlineLevel[u[0]] = lv
				}
				heads = append(heads, head{off, off + len(ln) + len(u), lv, t})
			}
		}
		off += len(ln)
	}
	minLevel := 99
	for _, h := range heads {
		minLevel = min(minLevel, h.level)
	}
	secs := make([]schema.Section, len(heads))
	for i, h := range heads {
		s := schema.Section{Title: h.title, Kind: schema.KindHeading, Level: h.level - minLevel + 1, Start: h.start, HeadingEnd: h.headEnd, End: len(text), Parent: -1}
		if m := clauseNum.FindStringSubmatch(h.title); m != nil {
			s.Number, s.Title, s.Kind = m[1], m[2], schema.KindClause
		}
		for j := i + 1; j < len(heads); j++ {
			if heads[j].level <= h.level {
				s.End = heads[j].start
				break
			}
		}
		for j := i - 1; j >= 0; j-- {
			if heads[j].level < h.level {
				s.Parent = j
				break
			}
		}
		s.Level = 1
		if s.Parent >= 0 {
			s.Level = secs[s.Parent].Level + 1
			s.Path = secs[s.Parent].Path + " > " + s.Label()
		} else {
			s.Path = s.Label()
		}
		secs[i] = s
	}
	return secs
}

// checkInvariants asserts what every chunking must hold.
func checkInvariants(t testing.TB, name string, doc *schema.ParsedDoc, secs []schema.Section, size int, chunks []schema.Chunk) {
	t.Helper()
	if err := invariantErr(doc, secs, size, chunks); err != nil {
		t.Fatalf("%s (size %d): %v", name, size, err)
	}
}

func invariantErr(doc *schema.ParsedDoc, secs []schema.Section, size int, chunks []schema.Chunk) error {
	text := doc.Text
	body := min(max(doc.BodyStart, 0), len(text))
	if size <= 0 {
		size = DefaultSize
	}
	prevEnd := body
	covered := make([]bool, len(text))
	heads := newHeadingIndex(text, body, doc.Pages, secs)
	sort.Ints(heads.topStarts)
	for i, c := range chunks {
		if c.Ordinal != i {
			return fmt.Errorf("chunk %d has ordinal %d", i, c.Ordinal)
		}
		if c.Start < prevEnd || c.End <= c.Start || c.End > len(text) {
			return fmt.Errorf("chunk %d span [%d,%d) out of order or bounds (previous end %d, body %d, len %d)", i, c.Start, c.End, prevEnd, body, len(text))
		}
		prevEnd = c.End
		if c.Text != text[c.Start:c.End] {
			return fmt.Errorf("chunk %d text is not text[%d:%d]", i, c.Start, c.End)
		}
		if c.Hash != schema.ContentHash(c.Text) {
			return fmt.Errorf("chunk %d hash", i)
		}
		if isSpaceByte(c.Text[0]) && c.Text[0] != ' ' && c.Text[0] != '\t' || isSpaceByte(c.Text[len(c.Text)-1]) {
			return fmt.Errorf("chunk %d not trimmed: %q", i, c.Text)
		}
		if first, _, _ := strings.Cut(c.Text, "\n"); isBlank(first) {
			return fmt.Errorf("chunk %d starts with a blank line: %q", i, c.Text)
		}
		if len(c.Text) > size && strings.ContainsAny(c.Text, " \t\n\r\v\f") {
			return fmt.Errorf("chunk %d is %d bytes, over size %d, and is not a single word: %q", i, len(c.Text), size, c.Text)
		}
		if len(c.Text) > maxWord(size) {
			return fmt.Errorf("chunk %d is %d bytes, over the longest word piece %d", i, len(c.Text), maxWord(size))
		}
		if c.LineStart != schema.LineOf(text, c.Start) || c.LineEnd != schema.LineOf(text, c.End-1) {
			return fmt.Errorf("chunk %d lines %d-%d", i, c.LineStart, c.LineEnd)
		}
		if c.Page != doc.PageAt(c.Start) || doc.PageAt(c.End-1) != c.Page {
			return fmt.Errorf("chunk %d [%d,%d) straddles pages %d and %d", i, c.Start, c.End, doc.PageAt(c.Start), doc.PageAt(c.End-1))
		}
		if want := innermostPath(secs, c.Start); c.ClausePath != want {
			return fmt.Errorf("chunk %d clause path %q, want %q", i, c.ClausePath, want)
		}
		if k := sort.SearchInts(heads.topStarts, c.Start+1); k < len(heads.topStarts) && heads.topStarts[k] < c.End {
			return fmt.Errorf("chunk %d [%d,%d) straddles the start of a top-level section at %d", i, c.Start, c.End, heads.topStarts[k])
		}
		for k := c.Start; k < c.End; k++ {
			covered[k] = true
		}
		if hs, ok := heads.endsWithHeadingLine(text, c); ok && i+1 < len(chunks) && !heads.headingMayEnd(doc, size, hs, c, chunks[i+1]) {
			return fmt.Errorf("chunk %d ends with a heading line: %q", i, tail(c.Text))
		}
	}
	// Page furniture that joined no chunk is left out.
	for _, f := range structure.Furniture(text, doc.Format) {
		for k := f[0]; k < f[1]; k++ {
			covered[k] = true
		}
	}
	for k := body; k < len(text); k++ {
		if !covered[k] && !isSpaceByte(text[k]) {
			return fmt.Errorf("byte %d (%q) of the body is in no chunk", k, text[k:min(k+20, len(text))])
		}
	}
	for k := 0; k < body; k++ {
		if covered[k] {
			return fmt.Errorf("front matter byte %d is in a chunk", k)
		}
	}
	return nil
}

func tail(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}

// headingIndex is what the heading checks need from the sections.
type headingIndex struct {
	secs      []schema.Section
	headEnds  map[int]int    // trimmed end of a section heading -> its start
	topStarts []int          // starts of top-level sections (see topLevel)
	paras     map[int][]Span // Sentences of the paragraph starting at a key
	cuts      []int          // where the chunker starts a new paragraph, sorted
}

func newHeadingIndex(text string, body int, pages []schema.Page, secs []schema.Section) headingIndex {
	h := headingIndex{secs: secs, headEnds: map[int]int{}, paras: map[int][]Span{}}
	for _, s := range secs {
		if he := min(s.HeadingEnd, s.End, len(text)); he > s.Start && s.Start >= 0 {
			_, te := trimLine(text, s.Start, he)
			h.headEnds[te] = s.Start
		}
	}
	h.topStarts = topLevel(text, secs)
	h.cuts = append(h.cuts, h.topStarts...)
	for _, s := range secs {
		h.cuts = append(h.cuts, s.Start, min(s.HeadingEnd, s.End))
	}
	h.cuts = append(h.cuts, body)
	for _, p := range pages {
		h.cuts = append(h.cuts, p.Start, p.End)
	}
	sort.Ints(h.cuts)
	return h
}

// endsWithHeadingLine reports whether chunk c ends with a section's heading
// or with a line Sentences calls a heading, and where that heading starts.
func (h headingIndex) endsWithHeadingLine(text string, c schema.Chunk) (int, bool) {
	if hs, ok := h.headEnds[c.End]; ok {
		return hs, true
	}
	units, ps, _ := h.segment(text, c.End-1)
	i := sort.Search(len(units), func(i int) bool { return units[i].End >= c.End })
	if i < len(units) && units[i].End == c.End {
		// Count the heading's indentation, as the chunker's paragraphs do.
		hs := units[i].Start
		for hs > ps && (text[hs-1] == ' ' || text[hs-1] == '\t') {
			hs--
		}
		return hs, units[i].Heading
	}
	return 0, false
}

// segment returns the Sentences of the paragraph holding off as the chunker
// reads it (within its segment: between hard cuts, section starts and
// heading ends), with the paragraph's bounds.
func (h headingIndex) segment(text string, off int) ([]Span, int, int) {
	ps := paragraphStart(text, off)
	pe := paragraphEnd(text, off)
	if k := sort.SearchInts(h.cuts, off+1) - 1; k >= 0 {
		ps = max(ps, h.cuts[k])
	}
	if k := sort.SearchInts(h.cuts, off+1); k < len(h.cuts) {
		pe = min(pe, h.cuts[k])
	}
	units, ok := h.paras[ps]
	if !ok {
		units = Sentences(text, ps, pe)
		h.paras[ps] = units
	}
	return units, ps, pe
}

func (h headingIndex) inSectionHeading(a, b int) bool {
	for _, s := range h.secs {
		if s.Start <= a && b <= max(s.HeadingEnd, s.Start) {
			return true
		}
	}
	return false
}

// headingMayEnd lists the cases where a chunk may end with a heading: the
// next chunk starts past a hard boundary (top-level section, page), or the
// heading (from headStart) and the first word of text after it that is not
// a heading do not fit in one chunk.
func (h headingIndex) headingMayEnd(doc *schema.ParsedDoc, size, headStart int, c, next schema.Chunk) bool {
	for _, s := range h.topStarts {
		if s > c.Start && s <= next.Start {
			return true
		}
	}
	for _, p := range doc.Pages {
		if p.Start > c.Start && p.Start <= next.Start || p.End > c.Start && p.End <= next.Start {
			return true
		}
	}
	text := doc.Text
	pos := next.Start
	for pos < len(text) && pos <= headStart+size {
		for pos < len(text) && isSpaceByte(text[pos]) {
			pos++
		}
		if pos == len(text) {
			break
		}
		units, _, pe := h.segment(text, pos)
		for _, u := range units {
			if u.End <= pos || u.Heading || h.inSectionHeading(u.Start, u.End) {
				continue
			}
			w := words(text, max(u.Start, pos), u.End)
			return w[0][1]-headStart > size
		}
		pos = pe
	}
	return true // nothing but headings within size
}

// spansErr checks Sentences' output for text[start:end]: spans in bounds,
// ordered, non-overlapping, non-empty and trimmed; and, through splitUnits,
// that every non-space byte is in a sentence, a heading or a separator line.
func spansErr(text string, start, end int, spans []Span) error {
	prev := start
	for i, s := range spans {
		if s.Start < prev || s.End <= s.Start || s.End > end {
			return fmt.Errorf("span %d [%d,%d) out of order or bounds (previous end %d, range [%d,%d))", i, s.Start, s.End, prev, start, end)
		}
		if isSpaceByte(text[s.Start]) || isSpaceByte(text[s.End-1]) {
			return fmt.Errorf("span %d not trimmed: %q", i, text[s.Start:s.End])
		}
		prev = s.End
	}
	covered := make([]bool, end-start)
	for _, u := range splitUnits(text, start, end) {
		for k := u.start; k < u.end; k++ {
			covered[k-start] = true
		}
	}
	for k := start; k < end; k++ {
		if !covered[k-start] && !isSpaceByte(text[k]) {
			return fmt.Errorf("byte %d (%q) is in no unit", k, text[k:min(k+20, end)])
		}
	}
	return nil
}

// innermostPath is the clause path rule stated plainly: of the sections
// holding off, the shortest; of equally short ones, the deepest; then the
// first.
func innermostPath(secs []schema.Section, off int) string {
	best := -1
	for i, s := range secs {
		if s.Start <= off && off < s.End {
			if best < 0 || s.End-s.Start < secs[best].End-secs[best].Start ||
				s.End-s.Start == secs[best].End-secs[best].Start && s.Level > secs[best].Level {
				best = i
			}
		}
	}
	if best < 0 {
		return ""
	}
	return secs[best].Path
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
