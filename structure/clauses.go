package structure

import (
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/schema"
)

// markBoiler marks running page headers and footers of PDFs: lines that,
// without page numbers, occur at least three times and hold a digit or 40
// characters.
func (p *parser) markBoiler() {
	p.boiler = make([]bool, len(p.lines))
	// Plain text without page breaks has no running headers, except in
	// filings that kept their page footers as lines of their own
	// ("Source: ACME CORP, 8-K, 1/10/2020" after each page's number):
	// there only a long line with a date or number that stands alone
	// between blank lines and recurs on three pages or more counts.
	plain := !p.paged() && !strings.Contains(p.text, "\f")
	if plain && p.format != schema.FormatText {
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
		if k == "" || count[k] < 3 {
			continue
		}
		if plain {
			if len(k) >= 30 && strings.ContainsAny(k, "0123456789") && p.standsAlone(i) {
				p.boiler[i] = true
			}
			continue
		}
		if strings.ContainsAny(k, "0123456789") || len(k) >= 40 {
			p.boiler[i] = true
		}
	}
	p.markFurniture()
}

// markFurniture marks the lines that Furniture finds as running heads and
// footers (issue 32: a book's running head "SECTION 1.1 HELLO, WORLD 3"
// headed a section).
func (p *parser) markFurniture() {
	spans := Furniture(p.text, p.format)
	j := 0
	for i, l := range p.lines {
		for j < len(spans) && spans[j][1] <= l.first {
			j++
		}
		if j < len(spans) && !l.blank && l.first >= spans[j][0] && l.first < spans[j][1] {
			p.boiler[i] = true
		}
	}
}

// standsAlone reports whether line i has a blank line (or the text's
// start or end) on each side.
func (p *parser) standsAlone(i int) bool {
	return (i == 0 || p.lines[i-1].blank) && (i+1 == len(p.lines) || p.lines[i+1].blank)
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

// headerGap is the least run of spaces between a lone number and the
// words after it on one line that makes the line a running header.
const headerGap = 20

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
	// A page number laid out at the left of a running header, the
	// exhibit's label far to the right ("1" and sixty spaces, then
	// "EXHIBIT 10.3"): a lone number without its dot, a page's width
	// from its words, heads nothing.
	if len(ld.parts) == 1 && !ld.trailDot && !ld.keyword && ld.rest != "" && ld.restOff-ld.numEnd >= headerGap {
		return
	}
	// A first line whose continuation is indented under it is a list
	// item ("1. Backwards compatibility…" / "   and more…"). Laid-out
	// PDF text indents body text under headings, so not there.
	if !p.paged() && i+1 < len(p.lines) && !p.lines[i+1].blank && p.lines[i+1].indent > l.indent && !p.code[i+1] {
		if len(ld.parts) == 1 && !ld.keyword {
			return
		}
	}
	form := p.classify(i, ld)
	maxIndent := 3
	if p.paged() && ld.keyword && ld.kind != schema.KindPara {
		maxIndent = 80 // centred "Annex A" headings
	} else if p.paged() {
		maxIndent = 6
	} else if p.format != schema.FormatMarkdown && ld.keyword && ld.kind != schema.KindPara && (form == formAlone || form == formTitle) {
		// Plain-text agreements centre their article headings
		// ("                 ARTICLE I" / "DEFINITIONS"); a keyword
		// heading alone on its line is no running text.
		maxIndent = 80
	} else if p.format != schema.FormatMarkdown && form == formInline {
		// A numbered clause whose title runs on ("    3. Proprietary
		// Rights.   3.1. Subject to…") reads as a heading however the
		// page break before it indented it; running text and list items
		// do not pass InlineTitle.
		maxIndent = 8
	}
	if l.indent > maxIndent {
		return
	}
	headingEnd := l.end
	title := ""
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
	case formInline:
		// The title ends at its period; the clause's text runs on.
		t := InlineTitle(ld.rest)
		title = collapse(t)
		headingEnd = l.first + skip + ld.restOff + len(t) + 1
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
	formInline          // the number, a title ending in a period, and text ("1. Term. This Agreement…")
)

func (p *parser) classify(i int, ld lead) int {
	switch {
	case ld.rest == "":
		return formAlone
	case titleLike(ld.rest, p.lineAfter(i)):
		return formTitle
	case InlineTitle(ld.rest) != "":
		return formInline
	default:
		return formSentence
	}
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
		// (or to be the first clause of the article it sits in: "ARTICLE
		// V" / "5.1 Subject to…") and a fresh paragraph.
		if !(exact && p.last[ld.family] != nil || p.firstOfArticle(ld)) {
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
	case formInline:
		// Agreements run their clauses on as numbered paragraphs, one
		// after another: a titled paragraph is no list item, but it
		// must still follow the numbering and start a paragraph.
		return p.inSequence(ld, 2) && p.startsParagraph(i)
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

// firstOfArticle reports whether ld is the first clause of the open
// Article or Section it sits in: 5.1 (or 5.1.1) right under "ARTICLE V" or
// "Section 5", before any other clause of that number.
func (p *parser) firstOfArticle(ld lead) bool {
	if ld.keyword || ld.family != "" || len(ld.parts) < 2 || !allOnes(ld.parts[1:]) || len(p.stack) == 0 {
		return false
	}
	top := p.nodes[p.stack[len(p.stack)-1]]
	if k := top.sec.Kind; k != schema.KindArticle && k != schema.KindSection || len(top.parts) != 1 {
		return false
	}
	return top.parts[0] == ld.parts[0] && !p.seen[ld.family+":"+ld.number]
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
	if p.paged() && strings.Trim(strings.Trim(prev.s, "-–— "), "0123456789ivxlc ") == "" {
		return true // a page number, bare or between dashes ("– 7 –")
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
