// Package scrub removes bank identifiers from text that is logged or stored:
// IBANs, BICs and account numbers. It is what "stored queries are scrubbed"
// means, unless LEARNING_STORE_RAW_QUERIES=true.
package scrub

import (
	"regexp"
	"sort"
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
	n := ibanPrefix(m)
	if n == 0 {
		return m
	}
	return IBAN + m[n:]
}

// ibanPrefix returns how many bytes of a candidate its longest prefix of
// whole groups that is a valid IBAN takes, or 0.
func ibanPrefix(m string) int {
	parts := strings.Split(m, " ")
	for n := len(parts); n >= 1; n-- {
		if validIBAN(strings.Join(parts[:n], "")) {
			return len(strings.Join(parts[:n], " "))
		}
	}
	return 0
}

// A Cut is a stretch of a text that Text replaces: its bytes [Start, End)
// and the placeholder put there.
type Cut struct {
	Start, End int
	With       string
}

// Cuts are what Text replaces in one text, in order.
type Cuts []Cut

// Find returns what Text replaces in s, as byte spans of s: Text(s) is
// s with each cut replaced by its placeholder. With them a part of a text
// is scrubbed as it is within the whole (Apply), which scrubbing the part
// alone does not do: a group of an account number is no account number,
// and a BIC made of letters is one only in a text that speaks of BICs.
func Find(s string) Cuts {
	var cuts Cuts
	for _, m := range ibanRe.FindAllStringIndex(s, -1) {
		if n := ibanPrefix(s[m[0]:m[1]]); n > 0 {
			cuts = append(cuts, Cut{m[0], m[0] + n, IBAN})
		}
	}
	// The later patterns read the text with the earlier cuts made, as Text
	// does. No placeholder can be part of their matches (a BIC needs six
	// capitals in a row, an account number digits), so a match maps back
	// to s by the lengths of the placeholders before it.
	s1 := cuts.Apply(s, 0)
	bicContext := bicWordRe.MatchString(s1)
	var bics Cuts
	for _, m := range bicRe.FindAllStringIndex(s1, -1) {
		if looksLikeBIC(s1[m[0]:m[1]], bicContext) {
			bics = append(bics, Cut{cuts.back(m[0]), cuts.back(m[1]), BIC})
		}
	}
	cuts = merge(cuts, bics)
	s2 := cuts.Apply(s, 0)
	var accounts Cuts
	for _, m := range accountRe.FindAllStringIndex(s2, -1) {
		if !dateRe.MatchString(s2[m[0]:m[1]]) {
			accounts = append(accounts, Cut{cuts.back(m[0]), cuts.back(m[1]), Account})
		}
	}
	return merge(cuts, accounts)
}

// back maps byte p of the text with cs made (not inside a placeholder) to
// the byte of the text they were found in.
func (cs Cuts) back(p int) int {
	delta := 0
	for _, c := range cs {
		if c.Start+delta >= p {
			break
		}
		delta += len(c.With) - (c.End - c.Start)
	}
	return p - delta
}

func merge(a, b Cuts) Cuts {
	out := append(append(Cuts{}, a...), b...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Apply returns t, the bytes of the text the cuts were found in from byte
// at on (or a copy as long), with each cut that overlaps it replaced by
// its placeholder: a quote or a fact of a draft, scrubbed as the draft is.
// A cut t holds only part of is replaced all the same, so that no part of
// an account number is left.
func (cs Cuts) Apply(t string, at int) string {
	end := at + len(t)
	var b strings.Builder
	prev := at
	for _, c := range cs {
		if c.End <= at || c.Start >= end {
			continue
		}
		a := max(c.Start, prev)
		b.WriteString(t[prev-at : a-at])
		b.WriteString(c.With)
		prev = min(c.End, end)
	}
	if prev == at {
		return t
	}
	b.WriteString(t[prev-at:])
	return b.String()
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
