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
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

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
	sec      schema.Section
	markup   bool // a Markdown or underlined heading
	rank     int  // heading rank for markup headings: 1 is the highest
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
// Section, §, Annex, Appendix and Schedule headings.
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
	p.markCode()
	p.markBoiler()
	p.markTables()
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
		l.s = strings.TrimRight(t[i:content], " \t\f\v\r")
		l.blank = l.s == ""
		p.lines = append(p.lines, l)
		pos = next
	}
}

// markCode marks Markdown fenced and indented code blocks, where nothing is a
// heading.
func (p *parser) markCode() {
	p.code = make([]bool, len(p.lines))
	if p.format != schema.FormatMarkdown {
		return
	}
	fence := ""
	prevBlank := true
	inIndented := false
	for i, l := range p.lines {
		if fence != "" {
			p.code[i] = true
			if l.indent <= 3 && strings.HasPrefix(l.s, fence) && strings.Trim(l.s, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if l.indent <= 3 && (strings.HasPrefix(l.s, "```") || strings.HasPrefix(l.s, "~~~")) {
			n := 0
			for n < len(l.s) && l.s[n] == l.s[0] {
				n++
			}
			fence = l.s[:n]
			p.code[i] = true
			continue
		}
		if !l.blank && l.indent >= 4 && (prevBlank || inIndented) {
			inIndented = true
			p.code[i] = true
		} else if !l.blank {
			inIndented = false
		}
		prevBlank = l.blank
	}
}

// markBoiler marks running page headers and footers of PDFs: lines that,
// without page numbers, occur at least three times and hold a digit or 40
// characters.
func (p *parser) markBoiler() {
	p.boiler = make([]bool, len(p.lines))
	if p.format != schema.FormatPDF && !strings.Contains(p.text, "\f") {
		return
	}
	keys := make([]string, len(p.lines))
	count := map[string]int{}
	for i, l := range p.lines {
		if l.blank || len(l.s) > 120 {
			continue
		}
		k := boilerKey(l.s)
		if k == "" {
			continue
		}
		keys[i] = k
		count[k]++
	}
	for i, k := range keys {
		// Headings repeat too ("Introduction" in every annex); running
		// headers and footers carry a document number or are long.
		if k != "" && count[k] >= 3 && (strings.ContainsAny(k, "0123456789") || len(k) >= 40) {
			p.boiler[i] = true
		}
	}
}

// boilerKey is a line with white space collapsed and page numbers (plain or
// lower-case roman) removed from both ends.
func boilerKey(s string) string {
	f := strings.Fields(s)
	isPage := func(w string) bool {
		if w == "" {
			return false
		}
		if strings.Trim(w, "0123456789") == "" {
			return true
		}
		return strings.Trim(w, "ivxl") == "" && len(w) <= 5
	}
	// "[Page 3]", "Page 3 of 9".
	for i := 0; i+1 < len(f); i++ {
		if w := strings.Trim(strings.ToLower(f[i]), "[("); w == "page" || w == "seite" {
			f[i+1] = "#"
			if i+3 < len(f) && f[i+2] == "of" {
				f[i+3] = "#"
			}
		}
	}
	for len(f) > 0 && isPage(f[0]) {
		f = f[1:]
	}
	for len(f) > 0 && isPage(f[len(f)-1]) {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// tableBorder matches the border of a reStructuredText simple table
// ("=====  =====") or a grid table ("+-----+-----+").
var tableBorder = regexp.MustCompile(`^(?:[=-]+(?: +[=-]+)+|\+[-=+]+\+)$`)

var attrBlock = regexp.MustCompile(`\s*\{[#.][^{}]*\}$`)

// markTables marks the paragraphs (runs of non-blank lines) that hold a
// table border, and Markdown table rows, as code: rows are not headings.
func (p *parser) markTables() {
	for i := 0; i < len(p.lines); {
		if p.lines[i].blank {
			i++
			continue
		}
		j := i
		table := false
		for j < len(p.lines) && !p.lines[j].blank {
			if tableBorder.MatchString(p.lines[j].s) || strings.HasPrefix(p.lines[j].s, "|") {
				table = true
			}
			j++
		}
		if table {
			for k := i; k < j; k++ {
				p.code[k] = true
			}
		}
		i = j
	}
}

// hasUnderlines reports whether the text has at least one underlined
// heading.
func (p *parser) hasUnderlines() bool {
	for i := 0; i+1 < len(p.lines); i++ {
		l, u := p.lines[i], p.lines[i+1]
		if l.blank || l.indent != 0 || isAdornment(l.s) || u.indent != 0 || !isAdornment(u.s) || len(u.s) < 3 {
			continue
		}
		if (i == 0 || p.lines[i-1].blank) && utf8.RuneCountInString(u.s) >= utf8.RuneCountInString(l.s) {
			return true
		}
	}
	return false
}

// atx detects a Markdown ATX heading on line i.
func (p *parser) atx(i int) bool {
	l := p.lines[i]
	if l.indent > 3 || !strings.HasPrefix(l.s, "#") {
		return false
	}
	n := 0
	for n < len(l.s) && l.s[n] == '#' {
		n++
	}
	if n > 6 || (n < len(l.s) && l.s[n] != ' ' && l.s[n] != '\t') {
		return false
	}
	title := strings.TrimSpace(l.s[n:])
	// A closing sequence of #s is not part of the title.
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		title = strings.TrimSpace(t)
	}
	// A trailing attribute block ("## Testing {#testing}") names an anchor.
	if attrBlock.MatchString(title) {
		title = strings.TrimSpace(attrBlock.ReplaceAllString(title, ""))
	}
	if title == "" {
		return false
	}
	p.addMarkup(i, i, l.first, title, n)
	return true
}

// setext detects a Markdown setext heading: a one-line paragraph underlined
// with === (rank 1) or --- (rank 2).
func (p *parser) setext(i int) bool {
	if i+1 >= len(p.lines) || p.code[i+1] {
		return false
	}
	l, u := p.lines[i], p.lines[i+1]
	if l.indent > 3 || u.indent > 3 || len(u.s) < 3 {
		return false
	}
	c := u.s[0]
	if (c != '=' && c != '-') || strings.Trim(u.s, string(c)) != "" {
		return false
	}
	if i > 0 && !p.lines[i-1].blank {
		return false
	}
	if strings.HasPrefix(l.s, "|") || strings.HasPrefix(l.s, ">") || strings.HasPrefix(l.s, "- ") || strings.HasPrefix(l.s, "* ") || strings.HasPrefix(l.s, "<") {
		return false
	}
	rank := 1
	if c == '-' {
		rank = 2
	}
	p.addMarkup(i, i+1, l.first, l.s, rank)
	return true
}

// adornChars are the characters reStructuredText headings are underlined with.
const adornChars = "=-~^*#\"+'`:._"

func isAdornment(s string) bool {
	if len(s) < 2 || !strings.ContainsRune(adornChars, rune(s[0])) {
		return false
	}
	return strings.Trim(s, s[:1]) == ""
}

// underlined detects a reStructuredText-style heading on line i: a title
// underlined (and optionally overlined) with a line of one punctuation
// character at least as long as the title.
func (p *parser) underlined(i int) bool {
	l := p.lines[i]
	over := false
	titleIdx := i
	if isAdornment(l.s) && l.indent == 0 {
		// An overline: title on the next line, the same line below it.
		if i+2 >= len(p.lines) || p.lines[i+1].blank || p.lines[i+2].s != l.s {
			return false
		}
		if i > 0 && !p.lines[i-1].blank {
			return false
		}
		over = true
		titleIdx = i + 1
	} else {
		if l.indent != 0 || isAdornment(l.s) || i+1 >= len(p.lines) {
			return false
		}
		u := p.lines[i+1]
		if u.indent != 0 || !isAdornment(u.s) || len(u.s) < 3 {
			return false
		}
		if i > 0 && !p.lines[i-1].blank {
			return false
		}
	}
	t := p.lines[titleIdx]
	adorn := p.lines[titleIdx+1].s
	title := strings.TrimSpace(t.s)
	if utf8.RuneCountInString(adorn) < utf8.RuneCountInString(title) {
		return false
	}
	style := adorn[:1]
	if over {
		style = "over" + style
	}
	rank := 0
	for k, s := range p.rstStyles {
		if s == style {
			rank = k + 1
		}
	}
	if rank == 0 {
		p.rstStyles = append(p.rstStyles, style)
		rank = len(p.rstStyles)
	}
	start := t.first
	if over {
		start = l.first
	}
	p.addMarkup(i, titleIdx+1, start, title, rank)
	return true
}

// addMarkup adds a Markdown or underlined heading spanning lines from..to,
// reading a clause number off its title when the number is plausible.
func (p *parser) addMarkup(from, to, start int, title string, rank int) {
	n := node{markup: true, rank: rank}
	title = clip(title)
	n.sec = schema.Section{Kind: schema.KindHeading, Title: title, Start: start, HeadingEnd: p.lines[to].end}
	// "**7.2 Notice**" and "7.2 Notice" carry the same number.
	plain := trimEmphasis(title)
	// A heading that is only a number ("1.1" over "---") names a version
	// in a change log more often than a clause, and one that goes on in
	// lower case ("2 years of support") is a phrase.
	if ld, ok := parseLead(plain); ok && (ld.rest != "" || ld.keyword) && !startsLower(ld.rest) {
		if p.inSequence(ld, 3) {
			n.sec.Kind = ld.kind
			n.sec.Number = ld.number
			n.sec.Title = ld.rest
			n.family, n.parts, n.numbered = ld.family, ld.parts, true
			p.accept(ld)
		}
	}
	for k := from; k <= to; k++ {
		p.used[k] = true
	}
	p.push(n)
}

// clause considers line i as a numbered clause or a keyword heading.
func (p *parser) clause(i int) {
	l := p.lines[i]
	s := l.s
	skip := 0 // bytes of emphasis before the number
	if p.format == schema.FormatMarkdown {
		if l.indent > 3 {
			return
		}
		// A bold line ("**7. Termination**") is a heading written in
		// emphasis; a plain "7. Buy milk" is an ordered list item.
		for _, em := range []string{"**", "__"} {
			if b := strings.TrimSuffix(strings.TrimPrefix(s, em), em); len(b) == len(s)-4 {
				s, skip = b, 2
				break
			}
		}
	}
	ld, ok := parseLead(s)
	if !ok {
		return
	}
	if p.markupDoc && ld.trailDot && len(ld.parts) == 1 && ld.family == "" && skip == 0 {
		return
	}
	// A first line whose continuation is indented under it is a list
	// item ("1. Backwards compatibility…" / "   and more…"). Laid-out
	// PDF text indents body text under headings, so not there.
	if p.format != schema.FormatPDF && i+1 < len(p.lines) && !p.lines[i+1].blank && p.lines[i+1].indent > l.indent && !p.code[i+1] {
		if len(ld.parts) == 1 && !ld.keyword {
			return
		}
	}
	maxIndent := 3
	if p.format == schema.FormatPDF && ld.keyword && ld.kind != schema.KindPara {
		maxIndent = 80 // centred "Annex A" headings
	} else if p.format == schema.FormatPDF {
		maxIndent = 6
	}
	if l.indent > maxIndent {
		return
	}
	headingEnd := l.end
	title := ""
	form := p.classify(i, ld)
	switch form {
	case formAlone:
		// The title may stand on the next non-blank line ("Annex A" /
		// "Mathematical definitions", or "1.1" / "Scope" in PDF text).
		j := p.nextText(i, 2)
		if p.markupDoc {
			// Headings there are marked up; a lone number is a list
			// marker or program output.
			j = -1
		} else if _, done := p.titleFor[i]; j >= 0 && !done {
			p.stackedTitles(i)
		}
		if k, ok := p.titleFor[i]; ok {
			title = collapse(p.lines[k].s)
			p.used[k] = true
			// The last number of a stack owns the titles after it;
			// the others end at their own line.
			if next, ok := parseLead(p.lines[j].s); !ok || next.rest != "" {
				headingEnd = p.lines[k].end
			}
		} else if j >= 0 && !p.isCandidate(j) && titleLike(p.lines[j].s, p.lineAfter(j)) && !isAdornment(p.lineAfter(j)) {
			title = collapse(p.lines[j].s)
			headingEnd = p.lines[j].end
			p.used[j] = true
		} else if t := ""; j >= 0 && len(ld.parts) > 1 && func() bool { t = termTitle(p.lines[j].s); return t != "" }() {
			// "3.1.6" / "arithmetic decoder: An embodiment…"
			title = t
			headingEnd = p.lines[j].first + strings.Index(p.lines[j].s, ":") + 1
		} else if len(ld.parts) == 1 && !ld.keyword {
			// A lone number without a title line is a page number or
			// a list marker.
			return
		}
	case formTitle:
		title = collapse(ld.rest)
	case formSentence:
		if ld.keyword || len(ld.parts) < 2 && !strings.Contains(ld.number, "(") {
			return
		}
		if t := termTitle(ld.rest); t != "" {
			title = t
			headingEnd = l.first + skip + ld.restOff + strings.Index(ld.rest, ":") + 1
		} else {
			headingEnd = l.first + skip + ld.numEnd
		}
	}
	if !p.plausible(i, ld, form, title != "") {
		return
	}
	p.accept(ld)
	p.push(node{
		sec: schema.Section{
			Number: ld.number, Title: title, Kind: ld.kind,
			Start: l.first, HeadingEnd: headingEnd,
		},
		family: ld.family, parts: ld.parts, numbered: true,
	})
}

// stackedTitles pairs a run of lone numbers with the run of titles after it,
// in order: PDF text extraction sometimes gives "4.2.1" / "4.2.1.1" / "Data"
// / "Parameter K" for two headings.
func (p *parser) stackedTitles(i int) {
	// Only dotted numbers of one family stack: "49" above "F.4.2.4" is a
	// page number, "Annex A." ends a sentence.
	first, ok := parseLead(p.lines[i].s)
	if !ok || first.keyword || len(first.parts) < 2 {
		return
	}
	run := []int{i}
	for x := i; len(run) < 4; {
		y := p.nextText(x, 1)
		if y < 0 {
			break
		}
		ld, ok := parseLead(p.lines[y].s)
		if !ok || ld.rest != "" || ld.keyword || len(ld.parts) < 2 || ld.family != first.family {
			break
		}
		run = append(run, y)
		x = y
	}
	if len(run) < 2 {
		return
	}
	titles := make([]int, 0, len(run))
	for t := run[len(run)-1]; len(titles) < len(run); {
		t = p.nextText(t, 2)
		if t < 0 || p.isCandidate(t) || !titleLike(p.lines[t].s, "") {
			return
		}
		titles = append(titles, t)
	}
	if p.titleFor == nil {
		p.titleFor = map[int]int{}
	}
	for m, n := range run {
		p.titleFor[n] = titles[m]
	}
}

// Forms of a numbered line.
const (
	formAlone    = iota // the number stands alone
	formTitle           // the number and a title
	formSentence        // the number and running text
)

func (p *parser) classify(i int, ld lead) int {
	switch {
	case ld.rest == "":
		return formAlone
	case titleLike(ld.rest, p.lineAfter(i)):
		return formTitle
	default:
		return formSentence
	}
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

// nearBoiler reports whether the nearest non-blank line before or after i
// is a page header or footer: a lone number there is a page number.
func (p *parser) nearBoiler(i int) bool {
	for _, step := range []int{-1, 1} {
		for j := i + step; j >= 0 && j < len(p.lines) && (j-i)*step <= 3; j += step {
			if p.lines[j].blank {
				continue
			}
			if p.boiler[j] {
				return true
			}
			break
		}
	}
	return false
}

// isCandidate reports whether line j starts with a clause number.
func (p *parser) isCandidate(j int) bool {
	_, ok := parseLead(p.lines[j].s)
	return ok
}

// plausible applies the checks that keep running text out: the line must
// start a paragraph, not sit in a run of list items or table-of-contents
// lines, and its number must follow the numbers before it.
func (p *parser) plausible(i int, ld lead, form int, titled bool) bool {
	if ld.keyword {
		if p.seen[ld.family+":"+ld.number] {
			return false
		}
		if form == formAlone && !titled && strings.HasSuffix(p.lines[i].s, ".") {
			return false // "… described in\nSchedule 1." ends a sentence
		}
		if !p.startsParagraph(i) {
			return false
		}
		if len(ld.parts) > 0 && ld.parts[0] >= 0 {
			if last, ok := p.last[ld.family]; ok && compareParts(ld.parts, last) <= 0 {
				return false
			}
		}
		return true
	}
	if ld.family != "" {
		// "A.1" belongs to Annex A, which must have come first.
		if !p.seen[schema.KindAnnex+":"+ld.family] && !p.seen[schema.KindAppendix+":"+ld.family] {
			return false
		}
	}
	exact := p.inSequence(ld, 1)
	switch form {
	case formSentence:
		// A clause that opens with its text needs the exact next number
		// and a fresh paragraph.
		if !exact || p.last[ld.family] == nil {
			return false
		}
		return p.startsParagraph(i)
	case formAlone:
		if !exact {
			return false
		}
		if len(ld.parts) == 1 && ld.family == "" && p.last[ld.family] == nil && ld.parts[0] > 1 {
			return false
		}
		if !titled && (p.last[ld.family] == nil || p.nearBoiler(i)) {
			return false
		}
		if j := p.nextText(i, 2); !titled && j >= 0 && tocLine(p.lines[j].s) {
			return false
		}
		// A number alone on its line with its title alone on the next
		// is a heading however the text before it ends.
		return titled || p.startsParagraph(i)
	default:
		if !p.inSequence(ld, 2) {
			return false
		}
		if p.listRun(i, ld) {
			return false
		}
		if len(ld.parts) == 1 || !exact {
			return p.startsParagraph(i)
		}
		return true
	}
}

// startsParagraph reports whether line i begins a paragraph: the line before
// is blank, a page header or footer, a heading, or ends a sentence.
func (p *parser) startsParagraph(i int) bool {
	if i == 0 {
		return true
	}
	prev := p.lines[i-1]
	if prev.blank || p.boiler[i-1] || p.used[i-1] {
		return true
	}
	if len(p.nodes) > 0 {
		// The line before is a whole heading ("7.2 Notice"), not a
		// clause that runs on as text.
		last := p.nodes[len(p.nodes)-1].sec
		if last.HeadingEnd >= prev.end && last.Start <= prev.end {
			return true
		}
	}
	if p.format == schema.FormatPDF && strings.Trim(prev.s, "0123456789ivxlc ") == "" {
		return true // a page number
	}
	r, _ := utf8.DecodeLastRuneInString(prev.s)
	return strings.ContainsRune(".:;!?)]\"”’'*", r)
}

// listRun reports whether line i sits in a run of numbered lines with
// nothing between them: an ordered list or a table of contents.
func (p *parser) listRun(i int, ld lead) bool {
	for _, j := range []int{p.prevText(i, 1), p.nextText(i, 1)} {
		if j < 0 {
			continue
		}
		other, ok := parseLead(p.lines[j].s)
		if !ok || other.keyword || other.family != ld.family || len(other.parts) != len(ld.parts) {
			continue
		}
		if other.rest == "" {
			continue
		}
		d := other.parts[len(other.parts)-1] - ld.parts[len(ld.parts)-1]
		// Single numbers next to each other are list items; two
		// sibling clause headings with nothing between them are a
		// table of contents.
		if (d == 1 || d == -1) && (len(ld.parts) == 1 || titleLike(other.rest, "")) {
			return true
		}
	}
	return false
}

// inSequence reports whether ld's number may follow the last accepted number
// of its family, allowing up to gap-1 missed numbers at the level that
// advances.
func (p *parser) inSequence(ld lead, gap int) bool {
	if ld.keyword {
		return !p.seen[ld.family+":"+ld.number]
	}
	if p.seen[ld.family+":"+ld.number] {
		return false
	}
	n := ld.parts
	for _, v := range n {
		if v < 0 {
			// Parts without an order (roman numerals in parentheses)
			// only need their parent to exist.
			return p.hasPrefix(ld)
		}
	}
	last, ok := p.last[ld.family]
	if !ok {
		if n[0] > 9 && ld.family == "" {
			return false
		}
		for _, v := range n[1:] {
			if v > 1 {
				return false
			}
		}
		return true
	}
	// A first child: last + [1] (+ [1]...), or a later one within gap.
	if len(n) > len(last) && equalParts(n[:len(last)], last) && n[len(last)] >= 1 && n[len(last)] <= gap && allOnes(n[len(last)+1:]) {
		return true
	}
	// The next sibling at some level k, possibly followed by first children.
	for k := min(len(last), len(n)) - 1; k >= 0; k-- {
		if !equalParts(n[:k], last[:k]) {
			continue
		}
		d := n[k] - last[k]
		if d >= 1 && d <= gap && allOnes(n[k+1:]) {
			return true
		}
	}
	return false
}

// hasPrefix reports whether ld's parent number has been accepted.
func (p *parser) hasPrefix(ld lead) bool {
	num := ld.number
	if i := strings.LastIndexByte(num, '('); i > 0 {
		return p.seen[ld.family+":"+num[:i]]
	}
	return false
}

func (p *parser) accept(ld lead) {
	p.seen[ld.family+":"+ld.number] = true
	ordered := true
	for _, v := range ld.parts {
		if v < 0 {
			ordered = false
		}
	}
	if ordered && len(ld.parts) > 0 {
		p.last[ld.family] = ld.parts
	}
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

// collapse trims s and collapses runs of white space to one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// titleLike reports whether s (the text after a clause number) reads as a
// heading's title rather than running text. next is the line that follows.
func titleLike(s, next string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) && !unicode.IsDigit(r) && !strings.ContainsRune("(\"“'‘[", r) {
		return false
	}
	if !hasWord(s) || strings.Contains(s, " = ") {
		return false
	}
	// Captions are not headings.
	if w, _, _ := strings.Cut(s, " "); strings.EqualFold(w, "table") || strings.EqualFold(w, "figure") {
		return false
	}
	// Table columns, justified text and tables of contents.
	if strings.Contains(s, "   ") || strings.Contains(s, "\t") || tocLine(s) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(s)
	if strings.ContainsRune(".,;", last) && !strings.HasSuffix(s, "etc.") {
		return false
	}
	words := strings.Fields(s)
	if len(words) > 14 {
		return false
	}
	for _, w := range words[1:] {
		if titleCase(words) {
			break
		}
		switch strings.ToLower(strings.Trim(w, ",.;:")) {
		case "shall", "should", "must", "will", "would", "may", "can", "could", "is", "are", "was", "were", "be", "has", "have", "does", "means":
			return false
		}
	}
	if last == ':' && len(words) > 6 {
		return false
	}
	// A sentence that wraps onto the next line, or a table-of-contents
	// entry that does.
	if tocLine(next) {
		return false
	}
	if next != "" {
		nr, _ := utf8.DecodeRuneInString(next)
		if unicode.IsLower(nr) && len(s) > 40 {
			return false
		}
	}
	return true
}

// tocLine reports a table-of-contents line: dot leaders, or a page number
// after a wide gap.
func tocLine(s string) bool {
	if strings.Contains(s, "....") || strings.Contains(s, ". . .") || strings.Contains(s, "…") {
		return true
	}
	f := strings.Fields(s)
	if len(f) >= 2 && strings.Contains(s, "   ") {
		lastw := f[len(f)-1]
		if strings.Trim(lastw, "0123456789") == "" || strings.Trim(lastw, "ivxl") == "" {
			return true
		}
	}
	return false
}

// termTitle returns the term of a definition clause ("abbreviated format: A
// representation…"), or "".
func termTitle(rest string) string {
	i := strings.Index(rest, ":")
	if i <= 0 || i > 60 {
		return ""
	}
	term := rest[:i]
	if strings.ContainsAny(term, ".;") || len(strings.Fields(term)) > 6 {
		return ""
	}
	return collapse(term)
}

// hasWord reports whether s holds a run of at least three letters: figure
// labels such as "H(0,3)" or "P, V(0)" do not.
func hasWord(s string) bool {
	run := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			run++
			if run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// trimEmphasis removes Markdown emphasis around a whole heading
// ("**7.2 Notice**").
func trimEmphasis(s string) string {
	for _, em := range []string{"**", "__", "*", "_"} {
		if len(s) > 2*len(em) && strings.HasPrefix(s, em) && strings.HasSuffix(s, em) {
			return strings.TrimSpace(s[len(em) : len(s)-len(em)])
		}
	}
	return s
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// titleCase reports whether most words of four letters or more start with
// a capital, as in "What is Cacheable".
func titleCase(words []string) bool {
	long, upper := 0, 0
	for _, w := range words {
		w = strings.Trim(w, "\"'“”‘’()[],.;:")
		if utf8.RuneCountInString(w) < 4 {
			continue
		}
		long++
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
			upper++
		}
	}
	return long >= 2 && upper*10 >= long*8
}

// clip shortens a title to at most maxTitle bytes, at a word boundary.
func clip(s string) string {
	if len(s) <= maxTitle {
		return s
	}
	cut := maxTitle
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > maxTitle/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]) + "…"
}
