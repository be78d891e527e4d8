package verify

import (
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/internal/rescan"
)

// The fact patterns are read with scans (package rescan), which find what
// the patterns find but try them only where a match can start. Each need
// below is what must stand where a match of its pattern starts;
// TestScanAgrees checks the scans against the patterns.
var (
	// 2026-11-04: four digits and a hyphen.
	isoDateScan = rescan.New(isoDateRe, func(t string, i int) bool {
		return len(t)-i >= 5 && isDigit(t[i+1]) && isDigit(t[i+2]) && isDigit(t[i+3]) && t[i+4] == '-'
	})
	// 4 November 2026: the day's one or two digits, perhaps st, nd, rd
	// or th, perhaps a full stop, white space and a month's name.
	dmyScan = rescan.New(dmyRe, func(t string, i int) bool {
		j := i + digitRun(t, i)
		if j-i > 2 {
			return false
		}
		if j < len(t) && t[j] >= utf8.RuneSelf {
			return true // ſt
		}
		if rescan.HasFoldPrefix(t, j, "st", "nd", "rd", "th") {
			j += 2
		}
		return monthLead(t, afterDot(t, j))
	})
	// November 4, 2026: a month's name, perhaps a full stop, white space
	// and a digit.
	mdyScan = rescan.New(mdyRe, func(t string, i int) bool {
		if !monthName(t, i) {
			return false
		}
		end, nonASCII := rescan.LetterRun(t, i)
		if t[i] >= utf8.RuneSelf || nonASCII {
			return true
		}
		j := afterDot(t, end)
		return j < len(t) && isDigit(t[j])
	})
	monthName = rescan.LeadWord("january", "february", "march", "april", "may", "june", "july",
		"august", "september", "october", "november", "december",
		"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sept", "sep", "oct", "nov", "dec")
	// 4.11.2026: one or two digits and a full stop.
	dotDateScan = rescan.New(dotDateRe, func(t string, i int) bool {
		return len(t)-i >= 2 && t[i+1] == '.' || len(t)-i >= 3 && isDigit(t[i+1]) && t[i+2] == '.'
	})
	// EUR 1.000,00: a currency's code, then white space or a digit; or a
	// symbol.
	currencyLead  = rescan.LeadWord("eur", "usd", "gbp", "chf", "jpy", "sek", "nok", "dkk", "pln", "cad", "aud")
	amountPreScan = rescan.New(amountPre, func(t string, i int) bool { return t[i] == '$' || currencyLead(t, i) })
	// 1000 EUR: a number, then a scale, or a currency's code, word or
	// symbol.
	amountPostScan = rescan.New(amountPost, func(t string, i int) bool {
		at := afterNumber(t, i)
		if at == len(t) {
			return false
		}
		if t[at] >= utf8.RuneSelf || t[at] == '$' {
			return true
		}
		return scaleWord(t, at) || rescan.HasFoldPrefix(t, at, "eur", "usd", "gbp", "chf", "jpy", "sek", "nok", "dkk", "pln",
			"cad", "aud", "euro", "dollar", "pound", "franc")
	})
	scaleWord = rescan.LeadWord("thousand", "million", "billion", "bn", "m", "k")
	// 7.5 %: a number, then % or "per".
	percentScan = rescan.New(percentRe, func(t string, i int) bool {
		at := afterNumber(t, i)
		return at < len(t) && (t[at] == '%' || t[at] == 'p' || t[at] == 'P')
	})
	codeScans = []*rescan.Scan{
		// An IBAN: two capitals and two digits.
		rescan.New(codeRes[0], func(t string, i int) bool {
			return len(t)-i >= 4 && t[i+1] >= 'A' && t[i+1] <= 'Z' && isDigit(t[i+2]) && isDigit(t[i+3])
		}),
		// pacs.008: two to eight small letters, a full stop, a digit.
		rescan.New(codeRes[1], func(t string, i int) bool {
			end := i
			for end < len(t) && t[end] >= 'a' && t[end] <= 'z' {
				end++
			}
			return end-i >= 2 && end-i <= 8 && len(t)-end >= 2 && t[end] == '.' && isDigit(t[end+1])
		}),
		// AT-44: one to six letters, a hyphen, a digit.
		rescan.New(codeRes[2], func(t string, i int) bool {
			end, _ := rescan.LetterRun(t, i)
			return end-i >= 1 && end-i <= 6 && len(t)-end >= 2 && t[end] == '-' && isDigit(t[end+1])
		}),
		// AC01: one to six capitals and a digit.
		rescan.New(codeRes[3], func(t string, i int) bool {
			end := i
			for end < len(t) && t[end] >= 'A' && t[end] <= 'Z' {
				end++
			}
			return end-i >= 1 && end-i <= 6 && end < len(t) && isDigit(t[end])
		}),
	}
	numberScan    = rescan.New(numberRe, nil)
	anyNumberScan = rescan.New(anyNumberRe, nil)
	// A number word, then a character other than a letter.
	wordNumScan = rescan.New(wordNumRe, rescan.LeadWord("zero", "one", "two", "three", "four", "five", "six", "seven",
		"eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
		"eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred"))
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitRun returns how many digits stand at byte i of t.
func digitRun(t string, i int) int {
	n := 0
	for i+n < len(t) && isDigit(t[i+n]) {
		n++
	}
	return n
}

// afterDot returns where the white space after a full stop at byte j of
// t ends (\.?\s+), or len(t)+1 where there is none.
func afterDot(t string, j int) int {
	if j < len(t) && t[j] == '.' {
		j++
	}
	if j >= len(t) || !isSpace(t[j]) {
		return len(t) + 1
	}
	for j < len(t) && isSpace(t[j]) {
		j++
	}
	return j
}

// monthLead reports whether a month's name may start at byte j of t.
func monthLead(t string, j int) bool { return j < len(t) && monthName(t, j) }

// isSpace is \s.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// afterNumber returns where the characters a number (numPat) and the
// white space (\s) after it may take end, from byte i of t: what follows a
// number in a pattern stands there.
func afterNumber(t string, i int) int {
	for i < len(t) && (isDigit(t[i]) || strings.IndexByte(".,'", t[i]) >= 0 || isSpace(t[i])) {
		i++
	}
	return i
}
