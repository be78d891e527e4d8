package verify

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Case-insensitive patterns that begin with one of a few words (a currency,
// a month) are slow in Go's regexp, which tries them at every byte of the
// text. leadScan finds the same matches as FindAllStringSubmatchIndex by
// trying the pattern, anchored, only where one of its first words starts
// (or at a byte outside ASCII, where Unicode case folding might make one).
type leadScan struct {
	re       *regexp.Regexp // the pattern, unanchored
	anchored *regexp.Regexp // the same, anchored at the start of the text
	// inText is the pattern anchored after one character, so that a \b
	// in it sees the character before the candidate.
	inText   *regexp.Regexp
	leads    []string // lower-case ASCII words a match starts with
	symbols  []string // non-letter starts (€, $, …), matched as written
	boundary bool     // the pattern starts with \b
}

func newLeadScan(re *regexp.Regexp, boundary bool, leads, symbols []string) *leadScan {
	src := re.String()
	flags := ""
	if strings.HasPrefix(src, "(?i)") {
		flags, src = "(?i)", src[len("(?i)"):]
	}
	return &leadScan{re: re, anchored: regexp.MustCompile(flags + `^(?:` + src + `)`),
		inText: regexp.MustCompile(flags + `^(?s:.)(?:` + src + `)`), leads: leads, symbols: symbols, boundary: boundary}
}

// asciiWord is \w, the class \b is defined by.
func asciiWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// candidate reports whether a match may start at byte i of text.
func (l *leadScan) candidate(text string, i int) bool {
	if l.boundary && (i > 0 && asciiWord(text[i-1])) == asciiWord(text[i]) {
		return false // no \b here
	}
	c := text[i]
	if c&0xC0 == 0x80 {
		return false // inside a character
	}
	if c >= 0x80 {
		return true
	}
	for _, s := range l.symbols {
		if strings.HasPrefix(text[i:], s) {
			return true
		}
	}
	for _, w := range l.leads {
		if len(text)-i >= len(w) && strings.EqualFold(text[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// FindAllStringSubmatchIndex returns what l.re.FindAllStringSubmatchIndex
// (text, -1) returns (the patterns scanned never match the empty string).
func (l *leadScan) FindAllStringSubmatchIndex(text string) [][]int {
	var out [][]int
	for i := 0; i < len(text); i++ {
		if !l.candidate(text, i) {
			continue
		}
		var m []int
		if i == 0 {
			m = l.anchored.FindStringSubmatchIndex(text)
		} else {
			_, size := utf8.DecodeLastRuneInString(text[:i])
			j := i - size
			if m = l.inText.FindStringSubmatchIndex(text[j:]); m != nil {
				for k := range m {
					if m[k] >= 0 {
						m[k] += j
					}
				}
				m[0] = i
			}
		}
		if m == nil {
			continue
		}
		out = append(out, m)
		i = m[1] - 1
	}
	return out
}

var (
	amountPreScan = newLeadScan(amountPre, false,
		[]string{"eur", "usd", "gbp", "chf", "jpy", "sek", "nok", "dkk", "pln", "cad", "aud"}, []string{"$"})
	digits      = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	dmyScan     = newLeadScan(dmyRe, true, digits, nil)
	percentScan = newLeadScan(percentRe, true, digits, nil)
	// The number words start with these letters.
	wordNumScan = newLeadScan(wordNumRe, true, []string{"z", "o", "t", "f", "s", "e", "n", "h"}, nil)
	mdyScan     = newLeadScan(mdyRe, true,
		[]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}, nil)
)
