// Package structure turns a document's parsed text into its structure map
// (the tree of headings and numbered clauses, each with its span and clause
// path) and reads the clause references a question makes ("clause 7.2",
// "Art. 12", "§ 4"), with the lookup keys that join the two.
//
// Detection favours precision over recall: a number at the start of a line
// becomes a clause only when the line looks like a heading (or a clause
// that starts its own paragraph) and the number follows the clauses before
// it, so versions, amounts, dates, list items, table rows, page footers and
// table-of-contents lines stay running text.
package structure

import (
	"slices"
	"strings"
	"unicode"

	"github.com/stratakb/stratakb/schema"
)

// line is one line of the body.
type line struct {
	start, end int    // byte span of the line's content, without its line break
	first      int    // offset of the first character that is not white space
	s          string // text[first:end] with trailing white space removed
	indent     int    // columns of leading white space (a tab counts 4)
	blank      bool
}

// node is a section under construction with what nesting needs to know.
type node struct {
	sec    schema.Section
	markup bool // a Markdown or underlined heading
	// md marks a Markdown heading (ATX or setext): its rank alone decides
	// its level, whatever its number says.
	md       bool
	rank     int // heading rank for markup headings: 1 is the highest
	family   string
	parts    []int
	numbered bool
}

// parser holds the state of one Parse call.
type parser struct {
	text   string
	format string
	lines  []line
	code   []bool // lines inside Markdown code blocks
	boiler []bool // running page headers and footers (PDF)
	used   []bool // lines already consumed by an accepted heading
	nodes  []node
	stack  []int
	// last accepted number per family, and the numbers seen per family.
	last map[string][]int
	seen map[string]bool
	// rst adornment styles in order of first use.
	rstStyles []string
	// titleFor maps a lone number's line to its title's line when PDF text
	// stacks numbers before their titles.
	titleFor map[int]int
	// markupDoc is set for documents whose headings are marked up
	// (Markdown, or text with underlined headings): there "1. Item" is a
	// list item, never a heading.
	markupDoc bool
}

// Parse returns the sections of text, whose body starts at bodyStart (what
// comes before is front matter and holds no sections). format is one of the
// schema.Format constants: Markdown documents get ATX and setext headings,
// plain text gets reStructuredText-style underlined headings, and every
// format gets numbered clauses (7, 7.2, 7.2.1, 7(2)(b), A.1), Article,
// Section, §, Annex, Appendix and Schedule headings. In PDF and image (OCR)
// text, running page headers and footers and page numbers are recognised
// and never become sections.
//
// Sections come in document order. Level is the depth in the tree (1 for a
// top-level section), so for a document of numbered clauses it is the
// numbering depth (7 → 1, 7.2 → 2), and a clause under a Markdown heading is
// one deeper than the heading. End is where the next section that is not a
// descendant starts, or the end of the text.
func Parse(text string, bodyStart int, format string) []schema.Section {
	if bodyStart < 0 {
		bodyStart = 0
	}
	if bodyStart > len(text) {
		bodyStart = len(text)
	}
	p := &parser{
		text:   text,
		format: format,
		last:   map[string][]int{},
		seen:   map[string]bool{},
	}
	p.split(bodyStart)
	p.dedent()
	p.markCode()
	p.markBoiler()
	p.markTables()
	p.markContents()
	p.markupDoc = format == schema.FormatMarkdown || format == schema.FormatText && p.hasUnderlines()
	p.used = make([]bool, len(p.lines))
	for i := range p.lines {
		if p.used[i] || p.lines[i].blank || p.code[i] || p.boiler[i] {
			continue
		}
		switch format {
		case schema.FormatMarkdown:
			if p.atx(i) || p.setext(i) {
				continue
			}
		case schema.FormatText:
			if p.underlined(i) {
				continue
			}
		}
		p.clause(i)
	}
	for _, idx := range p.stack {
		p.nodes[idx].sec.End = len(text)
	}
	out := make([]schema.Section, len(p.nodes))
	for i, n := range p.nodes {
		out[i] = n.sec
	}
	return out
}

// paged reports text extracted from pages (PDF text layers and OCR), where
// running headers, footers and page numbers surround the body.
func (p *parser) paged() bool {
	return p.format == schema.FormatPDF || p.format == schema.FormatImage
}

// split cuts the body into lines.
func (p *parser) split(bodyStart int) {
	t := p.text
	for pos := bodyStart; pos < len(t); {
		nl := strings.IndexByte(t[pos:], '\n')
		end, next := len(t), len(t)
		if nl >= 0 {
			end, next = pos+nl, pos+nl+1
		}
		content := end
		if content > pos && t[content-1] == '\r' {
			content--
		}
		l := line{start: pos, end: content}
		i, col := pos, 0
		for i < content {
			switch t[i] {
			case ' ':
				col++
			case '\t':
				col += 4
			case '\f', '\v':
			default:
				goto done
			}
			i++
		}
	done:
		l.first = i
		l.indent = col
		if p.format != schema.FormatMarkdown {
			// Text extraction that runs an agreement's clauses onto one
			// line ("…by DSS.   9.2. Remedies Cumulative; Waiver. The
			// rights…"): each clause starts a line of its own.
			for _, k := range runOnClauses(t, i, content) {
				head := line{start: l.start, first: l.first, indent: l.indent}
				head.s = strings.TrimRight(t[head.first:k], " \t\f\v\r")
				head.end = head.first + len(head.s)
				p.lines = append(p.lines, head)
				l = line{start: k, end: content, first: k}
			}
		}
		l.s = strings.TrimRight(t[l.first:content], " \t\f\v\r")
		l.blank = l.s == ""
		p.lines = append(p.lines, l)
		pos = next
	}
}

// dedent measures plain text's indentation from its body's margin: some
// filings indent every paragraph ("         Section 1. The Offering. …"),
// and a clause there starts at the margin, not nine columns in. The margin
// is the smallest indentation (at most 12 columns) that at least a third
// of the lines starting a paragraph share, page numbers and list items
// not counted; Markdown, where indentation means code, and page text,
// which has its own margins, keep theirs.
func (p *parser) dedent() {
	if p.format == schema.FormatMarkdown || p.paged() {
		return
	}
	count := map[int]int{}
	starts := 0
	for i, l := range p.lines {
		if !l.blank && (i == 0 || p.lines[i-1].blank) && !marginless(l.s) {
			count[l.indent]++
			starts++
		}
	}
	// The smallest indentation that a third of the paragraphs share: the
	// continuations of list items indent further, as often as the body.
	margin := -1
	for ind, n := range count {
		if 3*n >= starts && (margin < 0 || ind < margin) {
			margin = ind
		}
	}
	if margin <= 0 || margin > 12 {
		return
	}
	for i := range p.lines {
		if !p.lines[i].blank {
			p.lines[i].indent = max(0, p.lines[i].indent-margin)
		}
	}
}

// marginless reports whether a paragraph's first line says nothing about
// the body's margin: a page number standing alone, or a list item
// ("(a) A management fee…"), which filings indent under their paragraph.
func marginless(s string) bool {
	if strings.Trim(s, "0123456789-–— ") == "" {
		return true
	}
	return strings.HasPrefix(s, "(")
}

// runOnClauses returns where, inside the line t[from:to], a numbered clause
// with an inline title starts after a gap of three or more spaces that
// follows the end of a sentence: "…previously approved in writing by DSS.
// 9.2. Remedies Cumulative; Waiver. The rights…". A single number counts
// only written with its dot ("9. Miscellaneous."), so a run of figures in
// a table stays one line.
func runOnClauses(t string, from, to int) []int {
	var out []int
	for i := from; i+4 < to; {
		g := strings.Index(t[i:to], "   ")
		if g < 0 {
			break
		}
		gap := i + g
		k := gap
		for k < to && t[k] == ' ' {
			k++
		}
		i = k
		if k >= to || gap == from || !isDigit(t[k]) {
			continue
		}
		before := strings.TrimRight(t[from:gap], " ")
		if before == "" || !strings.ContainsRune(".;:)", rune(before[len(before)-1])) {
			continue
		}
		ld, ok := parseLead(t[k:to])
		if !ok || ld.keyword || ld.family != "" || len(ld.parts) < 2 && !ld.trailDot || InlineTitle(ld.rest) == "" {
			continue
		}
		out = append(out, k)
	}
	// An article heading in capitals runs on after a sentence however
	// few spaces part them: "…as follows: ARTICLE I. SCOPE OF ALLIANCE.
	// A. COOL TECH shall…" or "…at least 12 point type. ARTICLE II.
	// PERIOD OF PERFORMANCE. This Agreement…".
	for _, kw := range []string{"ARTICLE ", "SECTION "} {
		for i := from + 1; i < to; {
			g := strings.Index(t[i:to], kw)
			if g < 0 {
				break
			}
			k := i + g
			i = k + len(kw)
			if t[k-1] != ' ' || slices.Contains(out, k) {
				continue
			}
			before := strings.TrimRight(t[from:k], " ")
			if before == "" || !strings.ContainsRune(".;:)", rune(before[len(before)-1])) {
				continue
			}
			if runOnArticle(t[k:to]) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// runOnArticle reports whether s opens with an article heading written in
// capitals, its title in capitals too: "ARTICLE II. PERIOD OF PERFORMANCE.
// This Agreement…" or "ARTICLE  I APPOINTMENT OF DISTRIBUTORSHIP".
func runOnArticle(s string) bool {
	ld, ok := parseLead(s)
	if !ok || !ld.keyword || ld.kind != schema.KindArticle && ld.kind != schema.KindSection {
		return false
	}
	if t := InlineTitle(ld.rest); t != "" {
		return inCapitals(t)
	}
	return inCapitals(ld.rest) && titleLike(ld.rest, "")
}

// inCapitals reports whether s has letters and none of them in lower case.
func inCapitals(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0 && strings.IndexFunc(s, unicode.IsLower) < 0
}

// lineAfter returns the text of the line right after i, or "".
func (p *parser) lineAfter(i int) string {
	if i+1 < len(p.lines) && !p.boiler[i+1] {
		return p.lines[i+1].s
	}
	return ""
}

// nextText returns the index of the next non-blank line after i that is not
// a page header or footer, looking at most max blank lines ahead, or -1.
func (p *parser) nextText(i, max int) int {
	blanks := 0
	for j := i + 1; j < len(p.lines); j++ {
		if p.lines[j].blank {
			blanks++
			if blanks > max {
				return -1
			}
			continue
		}
		if p.boiler[j] || p.code[j] {
			return -1
		}
		return j
	}
	return -1
}

// prevText is nextText looking backwards.
func (p *parser) prevText(i, max int) int {
	blanks := 0
	for j := i - 1; j >= 0; j-- {
		if p.lines[j].blank {
			blanks++
			if blanks > max {
				return -1
			}
			continue
		}
		if p.boiler[j] || p.code[j] {
			return -1
		}
		return j
	}
	return -1
}

// push adds a section: it closes the open sections that cannot contain it,
// links it to its parent and builds its path.
func (p *parser) push(n node) {
	for len(p.stack) > 0 {
		top := p.stack[len(p.stack)-1]
		if contains(p.nodes[top], n) {
			break
		}
		p.nodes[top].sec.End = n.sec.Start
		p.stack = p.stack[:len(p.stack)-1]
	}
	// Keep the tree shallow whatever the input: paths repeat every
	// ancestor's label.
	for len(p.stack) >= maxDepth {
		top := p.stack[len(p.stack)-1]
		p.nodes[top].sec.End = n.sec.Start
		p.stack = p.stack[:len(p.stack)-1]
	}
	n.sec.Parent = -1
	n.sec.Level = 1
	n.sec.Path = n.sec.Label()
	if len(p.stack) > 0 {
		parent := p.stack[len(p.stack)-1]
		n.sec.Parent = parent
		n.sec.Level = p.nodes[parent].sec.Level + 1
		n.sec.Path = p.nodes[parent].sec.Path + " > " + n.sec.Label()
	}
	p.nodes = append(p.nodes, n)
	p.stack = append(p.stack, len(p.nodes)-1)
}

// maxDepth is the deepest level a section can have; maxTitle the longest
// heading title kept, in bytes.
const (
	maxDepth = 16
	maxTitle = 200
)

// strength orders section kinds for nesting: an annex holds articles and
// clauses, an article holds clauses.
func strength(kind string) int {
	switch kind {
	case schema.KindAnnex, schema.KindAppendix, schema.KindSchedule:
		return 3
	case schema.KindArticle, schema.KindSection:
		return 2
	default:
		return 1
	}
}

// contains reports whether the open section t can hold the new section s.
func contains(t, s node) bool {
	if t.md && s.md {
		// Markdown headings carry their own level: "### 7" never holds
		// "# 7.2". Only at the same rank does the number nest ("## 7"
		// holds "## 7.2").
		if t.rank != s.rank {
			return t.rank < s.rank
		}
		return t.numbered && s.numbered && t.family == s.family && t.sec.Kind == s.sec.Kind &&
			strength(t.sec.Kind) == 1 && properPrefix(t.parts, s.parts)
	}
	if t.numbered && s.numbered && t.family == s.family && t.sec.Kind == s.sec.Kind && strength(t.sec.Kind) == 1 {
		return properPrefix(t.parts, s.parts)
	}
	if s.markup && !s.numbered {
		return t.markup && t.rank < s.rank
	}
	if t.markup && !t.numbered {
		return !s.markup || t.rank < s.rank
	}
	if s.numbered && t.numbered && s.family == t.family && s.family != "" && strength(t.sec.Kind) == 3 && t.sec.Kind == s.sec.Kind {
		return false
	}
	if t.numbered && strength(t.sec.Kind) > strength(s.sec.Kind) {
		// An annex holds its own lettered clauses and plain ones, not
		// another annex's.
		if s.family != "" && s.family != t.family && s.sec.Kind == schema.KindClause && strength(t.sec.Kind) == 3 {
			return s.family == t.sec.Number
		}
		return true
	}
	if t.markup && s.markup {
		return t.rank < s.rank
	}
	return false
}

func properPrefix(a, b []int) bool {
	return len(a) < len(b) && equalParts(a, b[:len(a)])
}

func equalParts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func allOnes(a []int) bool {
	for _, v := range a {
		if v != 1 {
			return false
		}
	}
	return true
}

// compareParts orders numbers part by part; a longer number with an equal
// prefix sorts after.
func compareParts(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}
