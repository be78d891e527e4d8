package chunker

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/structure"
)

// Span is a sentence or a heading: a byte span of the text it was found in,
// trimmed of surrounding whitespace, End exclusive.
type Span struct {
	Start, End int
	// Heading marks a heading (a Markdown "#" line, an underlined or
	// over-and-underlined title, a short numbered clause heading such as
	// "7 Termination", a one-line title paragraph). Headings are returned
	// so callers can see the structure, but they are not sentences: an
	// extractive answer leaves them out.
	Heading bool
}

// unitKind is what an internal unit of text is.
type unitKind uint8

const (
	unitSentence unitKind = iota
	unitHeading
	// unitRule is a line that is neither a sentence nor a heading: a
	// thematic break (---, ***), a bare underline, a code fence. Sentences
	// drops it; the chunker keeps it so that no text falls between chunks.
	unitRule
)

type unit struct {
	start, end int
	kind       unitKind
}

// Sentences splits text[start:end] into sentences and headings, in order,
// non-overlapping, each trimmed of surrounding whitespace. Headings are
// returned with Heading set; separator lines (---, ***, code fences) are
// left out.
//
// The rules, in the order they apply:
//   - a blank line ends a sentence;
//   - a heading is its own unit: a Markdown "#" line, a line underlined (or
//     over- and underlined) with =, -, ~, ^, *, + or #, or a short numbered
//     clause heading line ("7 Termination", "7.2 Notice", "Article 12",
//     "Annex II") with no end mark, not followed by a lower-case
//     continuation line, and not in the middle of a sentence; and a
//     paragraph of one short line with no end mark that starts with a
//     capital letter ("Before the visit", "MASTER SERVICES AGREEMENT"), the
//     way plain text and PDFs set headings;
//   - a list item (-, *, +, •, "1.", "1)", "a)", "(b)", "(iv)") starts a new
//     sentence;
//   - a line break alone never ends a sentence, so a wrapped line stays in
//     its sentence, and lines without end marks (a price list, a schedule,
//     a log, YAML) run together until a blank line, a heading or a list item;
//   - ".", "!", "?", "…" (and the full-width 。！？) end a sentence when
//     whitespace or the end of the text follows, after any closing quotes or
//     brackets, which stay in the sentence; the mark does not end it when the
//     next word starts with a lower-case letter;
//   - a "." does not end a sentence after an abbreviation (e.g., i.e., etc.,
//     Mr., Dr., vs., cf., St., and No., Nr., Art., Sec., Fig. when a number
//     follows), after a single letter (an initial), or after a clause or
//     list number at the start of a sentence ("7. Payment"); "etc." ends a
//     sentence when a capitalised word follows. A "." inside a number or
//     name (7.2, 1.000,00, v1.2, example.com) is never an end mark, because
//     no whitespace follows it.
//
// The rules read a line in its paragraph (is a sentence open, was the line
// before blank), so start should be the start of a paragraph, or of the
// text, for the spans to be those of the whole text; Touching and
// SentenceAt widen their ranges to paragraphs for that reason.
func Sentences(text string, start, end int) []Span {
	start, end = clampRange(text, start, end)
	units := splitUnits(text, start, end)
	out := make([]Span, 0, len(units))
	for _, u := range units {
		if u.kind == unitRule {
			continue
		}
		out = append(out, Span{Start: u.start, End: u.end, Heading: u.kind == unitHeading || inlineHeading(text[u.start:u.end])})
	}
	return out
}

// SentenceAt returns the sentence or heading holding byte offset off. An
// offset in the whitespace between two units gives the next one; an offset
// with no unit at or after it in its paragraph gives an empty span at off.
// The result is the same span Sentences returns for the whole text, because
// sentences never cross a blank line.
func SentenceAt(text string, off int) Span {
	if off < 0 {
		off = 0
	}
	if off > len(text) {
		off = len(text)
	}
	ps, pe := paragraphStart(text, off), paragraphEnd(text, off)
	for _, s := range Sentences(text, ps, pe) {
		if off < s.End {
			return s
		}
	}
	return Span{Start: off, End: off}
}

// Touching returns the whole sentences and headings that overlap
// text[start:end], extended past start and end to their own boundaries: the
// units an extractive answer may quote from a passage that starts or stops
// inside a sentence.
func Touching(text string, start, end int) []Span {
	start, end = clampRange(text, start, end)
	ps, pe := paragraphStart(text, start), paragraphEnd(text, end)
	var out []Span
	for _, s := range Sentences(text, ps, pe) {
		if s.End > start && s.Start < end || s.Start == start && start == end {
			out = append(out, s)
		}
	}
	return out
}

func clampRange(text string, start, end int) (int, int) {
	if start < 0 {
		start = 0
	}
	if end > len(text) {
		end = len(text)
	}
	if end < start {
		end = start
	}
	return start, end
}

// paragraphStart returns the start of the line after the last blank line at
// or before off (0 if none).
func paragraphStart(text string, off int) int {
	ls := strings.LastIndexByte(text[:off], '\n') + 1
	for ls > 0 {
		prev := strings.LastIndexByte(text[:ls-1], '\n') + 1
		if isBlank(text[prev : ls-1]) {
			return ls
		}
		ls = prev
	}
	return 0
}

// paragraphEnd returns the end of the last non-blank line of the paragraph
// holding off (the offset of the blank line that follows it, or len(text)).
func paragraphEnd(text string, off int) int {
	pos := off
	for pos < len(text) {
		le := strings.IndexByte(text[pos:], '\n')
		if le < 0 {
			return len(text)
		}
		le += pos
		if pos > off && isBlank(text[pos:le]) {
			return pos
		}
		pos = le + 1
	}
	return len(text)
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpaceByte(s[i]) {
			return false
		}
	}
	return true
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// trimLine returns the bounds of s[ls:le] without surrounding ASCII space.
func trimLine(s string, ls, le int) (int, int) {
	for ls < le && isSpaceByte(s[ls]) {
		ls++
	}
	for le > ls && isSpaceByte(s[le-1]) {
		le--
	}
	return ls, le
}

// line is one line of text: [start, end) without its newline, next is where
// the following line starts, and ts/te are the trimmed bounds.
type line struct {
	start, end, next int
	ts, te           int
}

func (l line) blank() bool { return l.ts == l.te }

func lineAt(text string, pos, limit int) line {
	le := strings.IndexByte(text[pos:limit], '\n')
	var l line
	if le < 0 {
		l = line{start: pos, end: limit, next: limit}
	} else {
		l = line{start: pos, end: pos + le, next: pos + le + 1}
	}
	l.ts, l.te = trimLine(text, l.start, l.end)
	return l
}

// splitUnits is Sentences with separator lines kept as unitRule.
func splitUnits(text string, start, end int) []unit {
	var out []unit
	cur, curEnd := -1, -1
	flush := func() {
		if cur >= 0 && curEnd > cur {
			out = append(out, unit{start: cur, end: curEnd, kind: unitSentence})
		}
		cur, curEnd = -1, -1
	}
	pos := start
	prevBlank := true
	for pos < end {
		l := lineAt(text, pos, end)
		if l.blank() {
			flush()
			pos = l.next
			prevBlank = true
			continue
		}
		first := prevBlank
		prevBlank = false
		var n1, n2 line
		if l.next < end {
			n1 = lineAt(text, l.next, end)
			if n1.next < end && !n1.blank() {
				n2 = lineAt(text, n1.next, end)
			}
		}
		has1 := l.next < end && !n1.blank()
		has2 := has1 && n1.next < end && !n2.blank()
		switch {
		case isRuleLine(text, l):
			flush()
			if has1 && has2 && !isRuleLine(text, n1) && isRuleLine(text, n2) && n1.te-n1.ts <= 120 {
				// An over- and underlined title (reStructuredText).
				out = append(out, unit{start: l.ts, end: n2.te, kind: unitHeading})
				pos = n2.next
				continue
			}
			out = append(out, unit{start: l.ts, end: l.te, kind: unitRule})
			pos = l.next
			continue
		case isFenceLine(text, l):
			flush()
			out = append(out, unit{start: l.ts, end: l.te, kind: unitRule})
			pos = l.next
			continue
		case isATXHeading(text, l):
			flush()
			out = append(out, unit{start: l.ts, end: l.te, kind: unitHeading})
			pos = l.next
			continue
		case has1 && isRuleLine(text, n1) && l.te-l.ts <= 120 && listMarkerEnd(text, l) < 0:
			// An underlined title (Markdown setext, reStructuredText).
			flush()
			out = append(out, unit{start: l.ts, end: n1.te, kind: unitHeading})
			pos = n1.next
			continue
		case first && !has1 && isTitleLine(text, l):
			out = append(out, unit{start: l.ts, end: l.te, kind: unitHeading})
			pos = l.next
			continue
		case cur < 0 && isClauseHeading(text, l, n1, has1):
			out = append(out, unit{start: l.ts, end: l.te, kind: unitHeading})
			pos = l.next
			continue
		}
		from := l.ts
		if m := listMarkerEnd(text, l); m >= 0 {
			flush()
			cur = l.ts
			from = m
		}
		for i := from; i < l.te; {
			c := text[i]
			if cur < 0 && !isSpaceByte(c) {
				cur = i
			}
			r, n := rune(c), 1
			if c >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(text[i:l.te])
			}
			if !isEndMark(r) {
				i += n
				continue
			}
			j := i + n
			for j < l.te {
				r2, n2 := utf8.DecodeRuneInString(text[j:l.te])
				if !isEndMark(r2) && !isCloser(r2) {
					break
				}
				j += n2
			}
			if j < l.te && !isSpaceByte(text[j]) && !isFullWidthEnd(r) {
				i = j
				continue
			}
			if endsSentence(text, cur, i, j, r, end) {
				curEnd = j
				flush()
			}
			i = j
		}
		if cur >= 0 {
			curEnd = l.te
		}
		pos = l.next
	}
	flush()
	return out
}

func isEndMark(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？':
		return true
	}
	return false
}

func isFullWidthEnd(r rune) bool { return r == '。' || r == '！' || r == '？' }

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '›', '*', '_', '」', '』', '）':
		return true
	}
	return false
}

// Abbreviations after which "." never ends a sentence ("etc" is special:
// a capitalised next word ends the sentence after it).
var abbrevAlways = map[string]bool{
	"etc": true, "mr": true, "mrs": true, "ms": true, "dr": true, "prof": true,
	"st": true, "sr": true, "jr": true, "vs": true, "cf": true, "approx": true,
	"ca": true, "incl": true, "esp": true, "resp": true, "viz": true, "al": true,
	"ibid": true, "dept": true, "op": true, "jan": true, "feb": true,
	"apr": true, "jun": true, "jul": true, "aug": true, "sep": true, "sept": true,
	"oct": true, "nov": true, "dec": true, "bzw": true, "ggf": true, "vgl": true,
	"abs": true, "ziff": true, "lit": true,
}

// Abbreviations that introduce a number: "." after them ends no sentence
// when a number (or a Roman numeral) follows, so "No. 5" stays whole but
// "I said no. Then" ends.
var abbrevNumber = map[string]bool{
	"no": true, "nos": true, "nr": true, "art": true, "arts": true, "sec": true,
	"secs": true, "fig": true, "figs": true, "ch": true, "chap": true, "cl": true,
	"para": true, "paras": true, "vol": true, "pp": true, "eq": true, "eqs": true,
	"ref": true, "refs": true, "pt": true, "tab": true, "nrs": true,
}

// endsSentence decides whether the end mark r at text[i] (with closers up to
// j) ends the sentence that began at cur.
func endsSentence(text string, cur, i, j int, r rune, limit int) bool {
	// The next non-space character, possibly on a following line.
	k := j
	for k < limit && isSpaceByte(text[k]) {
		k++
	}
	var next rune = -1
	if k < limit {
		next, _ = utf8.DecodeRuneInString(text[k:limit])
	}
	if next >= 0 && unicode.IsLower(next) {
		return false
	}
	if r != '.' || (j > i+1 && text[i+1] == '.') {
		return true
	}
	// The word before the dot: letters, digits and inner dots.
	ws := i
	for ws > cur && ws > 0 {
		c := text[ws-1]
		if c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			ws--
			continue
		}
		break
	}
	for ws < i && text[ws] == '.' {
		ws++
	}
	word := text[ws:i]
	if word == "" {
		return true
	}
	lw := strings.ToLower(word)
	switch {
	case lw == "etc":
		return next >= 0 && unicode.IsUpper(next)
	case abbrevAlways[lw]:
		return false
	case abbrevNumber[lw]:
		return !(next >= '0' && next <= '9' || next == '(' || startsRoman(text, k, limit))
	case len(word) == 1 && isASCIILetter(word[0]):
		return false // an initial: J. Smith
	case isDottedLetters(word):
		return false // e.g, i.e, U.S
	case ws == cur && isNumberLike(word):
		return false // a clause or list number opening the sentence: "7. Payment"
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isDottedLetters reports whether w is single letters joined by dots: e.g, U.S.
func isDottedLetters(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if i%2 == 0 && !isASCIILetter(w[i]) || i%2 == 1 && w[i] != '.' {
			return false
		}
	}
	return len(w)%2 == 1
}

func isNumberLike(w string) bool {
	digit := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.':
		default:
			return false
		}
	}
	return digit
}

// startsRoman reports whether a Roman numeral word starts at text[k].
func startsRoman(text string, k, limit int) bool {
	n := 0
	for k+n < limit && strings.IndexByte("IVXLC", text[k+n]) >= 0 {
		n++
	}
	return n > 0 && (k+n == limit || !isASCIILetter(text[k+n]))
}

// isRuleLine reports a line made of one repeated punctuation character (at
// least three, spaces allowed): a thematic break or a heading underline.
func isRuleLine(text string, l line) bool {
	if l.te-l.ts < 3 {
		return false
	}
	c := text[l.ts]
	if strings.IndexByte("=-~^*+#_", c) < 0 {
		return false
	}
	n := 0
	for i := l.ts; i < l.te; i++ {
		switch text[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

func isFenceLine(text string, l line) bool {
	s := text[l.ts:l.te]
	return strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~")
}

// isATXHeading reports a Markdown "#" heading: up to three spaces of
// indentation, one to six #, then a space or the end of the line.
func isATXHeading(text string, l line) bool {
	if l.ts-l.start > 3 || strings.IndexByte(text[l.start:l.ts], '\t') >= 0 {
		return false
	}
	n := 0
	for l.ts+n < l.te && text[l.ts+n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return false
	}
	return l.ts+n == l.te || text[l.ts+n] == ' ' || text[l.ts+n] == '\t'
}

// listMarkerEnd returns where the text of a list item starts, after its
// marker and the spaces that follow, or -1 when the line is no list item.
func listMarkerEnd(text string, l line) int {
	i := l.ts
	s := text[i:l.te]
	m := 0
	switch {
	case len(s) > 0 && (s[0] == '-' || s[0] == '*' || s[0] == '+'):
		m = 1
	case strings.HasPrefix(s, "•"), strings.HasPrefix(s, "‣"), strings.HasPrefix(s, "◦"):
		m = 3
	case len(s) > 0 && s[0] >= '0' && s[0] <= '9':
		for m < len(s) && m < 3 && s[m] >= '0' && s[m] <= '9' {
			m++
		}
		if m >= len(s) || s[m] != '.' && s[m] != ')' {
			return -1
		}
		m++
	case len(s) > 1 && isASCIILetter(s[0]) && s[1] == ')':
		m = 2
	case len(s) > 0 && s[0] == '(':
		k := 1
		for k < len(s) && k <= 5 && (s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'z') {
			k++
		}
		if k == 1 || k >= len(s) || s[k] != ')' {
			return -1
		}
		m = k + 1
	default:
		return -1
	}
	if m >= len(s) || s[m] != ' ' && s[m] != '\t' {
		return -1
	}
	for m < len(s) && (s[m] == ' ' || s[m] == '\t') {
		m++
	}
	if m >= len(s) {
		return -1
	}
	return i + m
}

var clauseWords = []string{
	"Article ", "ARTICLE ", "Art. ", "Section ", "SECTION ", "Sec. ", "Clause ",
	"CLAUSE ", "Chapter ", "CHAPTER ", "Part ", "PART ", "Annex ", "ANNEX ",
	"Appendix ", "APPENDIX ", "Schedule ", "SCHEDULE ", "§",
}

// clauseNumberEnd returns the end of a clause number opening the line
// ("7", "7.2.", "7(2)(b)", "Article 12", "§ 4", "Annex II", "IV.", "A."),
// or -1.
func clauseNumberEnd(s string) int {
	i := 0
	word := false
	for _, w := range clauseWords {
		if strings.HasPrefix(s, w) {
			i = len(w)
			for i < len(s) && s[i] == ' ' {
				i++
			}
			word = true
			break
		}
	}
	j := i
	if word {
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || strings.IndexByte("IVXLC", s[j]) >= 0) {
			j++
		}
		if j == i {
			return -1
		}
		if j < len(s) && isASCIILetter(s[j]) && (j+1 == len(s) || !isASCIILetter(s[j+1])) {
			j++ // Article 12a, Appendix A
		}
	} else {
		switch {
		case len(s) > 0 && s[0] >= '0' && s[0] <= '9':
		case len(s) >= 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] == '.':
			return 2 // "A."
		default:
			for j < len(s) && j < 6 && strings.IndexByte("IVXLC", s[j]) >= 0 {
				j++
			}
			if j > 0 && j < len(s) && s[j] == '.' {
				return j + 1 // "IV."
			}
			return -1
		}
	}
	for {
		k := j
		for k < len(s) && k-j < 3 && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			break
		}
		j = k
		if j+1 < len(s) && s[j] == '.' && s[j+1] >= '0' && s[j+1] <= '9' {
			j++
			continue
		}
		break
	}
	for j < len(s) && s[j] == '(' {
		k := j + 1
		for k < len(s) && k-j <= 4 && (s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'z') {
			k++
		}
		if k == j+1 || k >= len(s) || s[k] != ')' {
			break
		}
		j = k + 1
	}
	if j < len(s) && (s[j] == '.' || s[j] == ':' || s[j] == ')') {
		j++
	}
	if j < len(s) && s[j] != ' ' && s[j] != '\t' {
		return -1
	}
	return j
}

// inlineHeading reports a sentence that is only an agreement's clause
// heading written as a numbered title ending in a period, before the
// clause's text on the same line ("10.1 Term and Termination." in "10.1 Term
// and Termination. This Agreement…"): structure.InlineTitle's rule, so
// the heading the structure map reads is the heading left out here.
func inlineHeading(s string) bool {
	ne := clauseNumberEnd(s)
	if ne <= 0 {
		return false
	}
	rest := strings.TrimSpace(s[ne:])
	t, ok := strings.CutSuffix(rest, ".")
	return ok && t != "" && structure.InlineTitle(rest) == t
}

// isClauseHeading reports a short numbered heading line: a clause number,
// then nothing or a capitalised title of at most 12 words with no end mark,
// not followed by a lower-case continuation line, and not one of a run of
// list items numbered the same way.
func isClauseHeading(text string, l, next line, hasNext bool) bool {
	s := text[l.ts:l.te]
	if len(s) > 100 {
		return false
	}
	c := s[0]
	if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || strings.HasPrefix(s, "§")) {
		return false
	}
	ne := clauseNumberEnd(s)
	if ne < 0 {
		return false
	}
	title := strings.TrimSpace(s[ne:])
	if title != "" {
		r, _ := utf8.DecodeRuneInString(title)
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
			return false
		}
		if strings.IndexByte(".,;:!?", title[len(title)-1]) >= 0 {
			return false
		}
		if strings.Count(title, " ") >= 12 {
			return false
		}
	}
	if !hasNext {
		return true
	}
	ns := text[next.ts:next.te]
	r, _ := utf8.DecodeRuneInString(ns)
	if unicode.IsLower(r) {
		return false
	}
	// "1. Milk" followed by "2. Eggs" is a list, not two headings.
	num := strings.TrimRight(s[:ne], " \t")
	if last := num[len(num)-1]; (last == '.' || last == ')') && !strings.Contains(num[:len(num)-1], ".") {
		if nne := clauseNumberEnd(ns); nne > 0 {
			nnum := strings.TrimRight(ns[:nne], " \t")
			if nnum[len(nnum)-1] == last && !strings.Contains(nnum[:len(nnum)-1], ".") {
				return false
			}
		}
	}
	return true
}

// isTitleLine reports a one-line paragraph that reads as a title: at most
// 80 bytes and 10 words, starting with a capital letter or a digit, holding
// a letter, with no end mark or trailing colon or comma, and not a list item
// or a table row.
func isTitleLine(text string, l line) bool {
	s := text[l.ts:l.te]
	if len(s) > 80 || strings.Count(s, " ") >= 10 || listMarkerEnd(text, l) >= 0 || strings.HasPrefix(s, "|") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(s)
	for isCloser(last) && len(s) > 1 {
		s = s[:len(s)-utf8.RuneLen(last)]
		last, _ = utf8.DecodeLastRuneInString(s)
	}
	if isEndMark(last) || strings.ContainsRune(",;:", last) {
		return false
	}
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}
