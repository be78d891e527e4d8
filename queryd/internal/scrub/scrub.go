// Package scrub removes bank identifiers from text that is logged or stored:
// IBANs, BICs and account numbers. It is what "stored queries are scrubbed"
// means, unless LEARNING_STORE_RAW_QUERIES=true.
package scrub

import (
	"regexp"
	"strings"
)

// The placeholders that replace what was removed.
const (
	IBAN    = "[IBAN]"
	BIC     = "[BIC]"
	Account = "[ACCOUNT]"
)

var (
	// An IBAN: two letters, two check digits, then 11 to 30 letters or
	// digits, often written in groups of four separated by spaces.
	ibanRe = regexp.MustCompile(`\b[A-Za-z]{2}[0-9]{2}(?:[ ]?[A-Za-z0-9]{1,4}){3,8}\b`)
	// A BIC: four letters (bank), two letters (country), two letters or
	// digits (location), optionally three more (branch). Written in capitals.
	bicRe = regexp.MustCompile(`\b[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?\b`)
	// An account number: eight or more digits, possibly grouped by spaces
	// or dashes.
	accountRe = regexp.MustCompile(`\b[0-9](?:[ -]?[0-9]){7,}\b`)
	// Dates and ISO timestamps are not account numbers.
	dateRe      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	ibanShapeRe = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]+$`)
	// A text that names BIC or SWIFT codes.
	bicWordRe = regexp.MustCompile(`(?i)\b(?:bic|swift)\b`)
)

// Text returns s with IBANs, BICs and account numbers replaced by
// placeholders. An IBAN is replaced only when its check digits are right, so
// codes that merely look like one (AC04 …) stay. A BIC-shaped word is replaced
// when it has a digit or an X in its location or branch code (INGBNL2A,
// DEUTDEFFXXX), or, for all-letter ones (DEUTDEFF), when the text mentions a
// BIC or SWIFT code: names written in capitals, such as HEALTHCHECK, stay
// readable otherwise. Dates (2026-11-04) are not account numbers.
func Text(s string) string {
	s = ibanRe.ReplaceAllStringFunc(s, scrubIBAN)
	bicContext := bicWordRe.MatchString(s)
	s = bicRe.ReplaceAllStringFunc(s, func(m string) string {
		if looksLikeBIC(m, bicContext) {
			return BIC
		}
		return m
	})
	s = accountRe.ReplaceAllStringFunc(s, func(m string) string {
		if dateRe.MatchString(m) {
			return m
		}
		return Account
	})
	return s
}

// scrubIBAN replaces the longest prefix of a candidate (its space-separated
// groups) that is a valid IBAN; the regular expression may have taken a
// following short word as a last group.
func scrubIBAN(m string) string {
	parts := strings.Split(m, " ")
	for n := len(parts); n >= 1; n-- {
		if validIBAN(strings.Join(parts[:n], "")) {
			rest := strings.Join(parts[n:], " ")
			if rest != "" {
				return IBAN + " " + rest
			}
			return IBAN
		}
	}
	return m
}

// validIBAN checks length and the ISO 7064 mod-97 check digits.
func validIBAN(s string) bool {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if len(s) < 15 || len(s) > 34 || !ibanShapeRe.MatchString(s) {
		return false
	}
	r := s[4:] + s[:4]
	mod := 0
	for _, c := range r {
		switch {
		case c >= '0' && c <= '9':
			mod = (mod*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			mod = (mod*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return mod == 1
}

// looksLikeBIC checks a BIC-shaped word: its country part must be a
// country code, and an all-letter word counts only in a text that speaks of
// BIC or SWIFT codes.
func looksLikeBIC(s string, bicContext bool) bool {
	if !countries[s[4:6]] {
		return false
	}
	if strings.ContainsAny(s[6:8], "0123456789X") {
		return true
	}
	if len(s) == 11 && (s[8:] == "XXX" || strings.ContainsAny(s[8:], "0123456789")) {
		return true
	}
	return bicContext
}

var countries = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`AD AE AT AU BE BG BR CA CH CN CY CZ DE DK EE ES FI FR GB GI GR HK HR HU IE IL IN IS IT JP
		KR LI LT LU LV MC MT MX NL NO NZ PL PT RO RS SA SE SG SI SK SM TR UA US VA ZA`) {
		countries[c] = true
	}
}
