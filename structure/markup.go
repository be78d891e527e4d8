package structure

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/schema"
)

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
	title = stripAnchors(title)
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
	title := stripAnchors(l.s)
	if title == "" {
		return false
	}
	p.addMarkup(i, i+1, l.first, title, rank)
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
	n := node{markup: true, rank: rank, md: p.format == schema.FormatMarkdown}
	title = clip(title)
	n.sec = schema.Section{Kind: schema.KindHeading, Title: title, Start: start, HeadingEnd: p.lines[to].end}
	// "**7.2 Notice**" and "7.2 Notice" carry the same number.
	plain := trimEmphasis(title)
	// A heading that is only a number ("1.1" over "---") names a version
	// in a change log more often than a clause, and one that goes on in
	// lower case ("2 years of support") is a phrase.
	if ld, ok := parseLead(plain); ok && (ld.rest != "" || ld.keyword) && !startsLower(ld.rest) {
		// A Markdown heading is a section whatever the numbering
		// sequence: its marker, not the order of its number, makes it
		// one. Other headings need the number to follow the last one.
		if n.md && !p.seen[ld.family+":"+ld.number] || p.inSequence(ld, 3) {
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

// anchorRe matches an HTML anchor in a heading: `<a name="intro"></a>`,
// `<a id='x'/>`, and a stray closing `</a>`.
var anchorRe = regexp.MustCompile(`(?i)<a\s[^<>]*\b(?:name|id)\s*=[^<>]*>|</a\s*>`)

// stripAnchors removes HTML anchors from a heading's title, so they do not
// end up in clause paths.
func stripAnchors(title string) string {
	if !strings.Contains(title, "<") {
		return title
	}
	return strings.Join(strings.Fields(anchorRe.ReplaceAllString(title, " ")), " ")
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
