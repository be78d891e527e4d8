package parsers

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Thresholds of the usable-text test. A page's text layer is used as is only
// when it passes; otherwise the next extractor is tried.
const (
	maxBadRatio      = 0.05 // replacement, control and private-use characters
	minAlnumRatio    = 0.40 // letters and digits among non-space characters
	maxMeanWordLen   = 25   // non-space characters per whitespace-separated word
	minRunTogether   = 200  // the word-length test needs this much text
	maxMeanLineLen   = 600  // characters per line: longer means lines were joined
	minJoinedLines   = 1200 // the line-length test needs this much text
	thinTextMaxRunes = 16   // a text layer this thin may hide a scanned page
	minLeaderRun     = 4    // dots in a row that make a table-of-contents leader
)

// gluedClause finds a multi-level clause number written straight into a
// capitalised word ("2.2.3.2Vertical mode"): the reader dropped the space
// and the line break, so the clause would not be found as a heading.
var gluedClause = regexp.MustCompile(`(?:^|[^0-9A-Za-z.])[0-9]{1,3}(?:\.[0-9]{1,3})+[A-Z][a-z]`)

// textQuality is the verdict of the usable-text test on one page.
type textQuality struct {
	OK     bool
	Thin   bool   // usable, but so little text that the page may be a scan
	Reason string // why the text is not usable
}

// judgeText decides whether extracted text is real text. Text is unusable
// when it is empty; when more than 5 % of its characters are U+FFFD, control
// characters or private-use code points (undecoded CID glyphs); when fewer
// than 40 % of its non-space characters, not counting dots, dashes and
// underscores (table-of-contents leaders), are letters or digits (glyph
// indices rendered as punctuation); when its words average over 25 characters
// not counting runs of four or more leader characters (text drawn glyph by
// glyph without spaces runs together; a table of contents whose entries run
// into their dotted leaders does not); or when a page of 1,200 or more
// characters has lines averaging over 600 characters (the reader joined the
// page's lines, so headings and clause numbers no longer start a line and the
// structure map cannot see them); or when a clause number runs straight into
// its title ("2.2.3.2Vertical mode").
func judgeText(s string) textQuality {
	var n, bad, alnum, leaders, words, lines int
	// leaderRuns counts the characters in runs of minLeaderRun or more
	// leader characters: a table of contents' dotted leaders, left out of the
	// mean word length.
	var run, leaderRuns int
	endRun := func() {
		if run >= minLeaderRun {
			leaderRuns += run
		}
		run = 0
	}
	inWord := false
	for _, r := range s {
		isLeader := r == '.' || r == '…' || r == '·' || r == '_' || r == '-'
		if !isLeader {
			endRun()
		}
		if r == '\n' {
			lines++
		}
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\f' || unicode.IsSpace(r) {
			inWord = false
			continue
		}
		if !inWord {
			words++
			inWord = true
		}
		n++
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Co, r), r >= 0xFFF0 && r <= 0xFFFF:
			bad++
		case unicode.IsLetter(r), unicode.IsDigit(r):
			alnum++
		case isLeader:
			leaders++
			run++
		}
	}
	endRun()
	switch {
	case n == 0:
		return textQuality{Reason: "no text"}
	case float64(bad) > maxBadRatio*float64(n):
		return textQuality{Reason: "garbled: undecodable characters"}
	case float64(alnum) < minAlnumRatio*float64(n-leaders):
		return textQuality{Reason: "garbled: too few letters or digits"}
	case n >= minRunTogether && (n-leaderRuns)/words > maxMeanWordLen:
		return textQuality{Reason: "words run together"}
	case n >= minJoinedLines && n/(lines+1) > maxMeanLineLen:
		return textQuality{Reason: "lines run together"}
	case gluedClause.MatchString(s):
		return textQuality{Reason: "a clause number runs into its title"}
	}
	return textQuality{OK: true, Thin: n <= thinTextMaxRunes}
}

// cleanText normalises extracted page text for storage: valid UTF-8, "\n"
// line ends, no control characters but tab and newline (a form feed would be
// confused with the page separator), no trailing spaces on lines, and no
// leading or trailing blank lines.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\r' || r == '\f' || r == '\v':
			b.WriteByte('\n')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// textChars counts the characters of s that are not white space, a Latin
// ligature (U+FB00–U+FB06) as the two or three letters it stands for:
// pdftotext writes "fi" where the Go reader keeps "ﬁ", and the two are
// compared by this count.
func textChars(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
		case r == '\uFB03' || r == '\uFB04': // ffi, ffl
			n += 3
		case r >= '\uFB00' && r <= '\uFB06':
			n += 2
		default:
			n++
		}
	}
	return n
}
