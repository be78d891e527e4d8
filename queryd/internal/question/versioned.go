package question

import (
	"regexp"
	"strings"
)

// Versioned is a term a question writes with a number that picks one of
// its kinds or versions: "HTTP/3", "WASI preview 2", "Group 4", "V.29",
// "Windows 11". Passages that give the term only with other numbers
// ("HTTP/2", "preview 1") are about another version, not the one asked
// about.
type Versioned struct {
	Raw    string // as the question writes it
	Word   string // the term, folded to lower case
	Number string // the number, without a leading "v"
}

// versionedRE finds a word of two or more letters followed, at most one
// space, slash, hyphen or dot apart, by a number of one to three digits
// with any dotted parts.
var versionedRE = regexp.MustCompile(`(?i)\b([a-z][a-z]+)(?:\s|/|-|\.)?v?(\d{1,3}(?:\.\d+)*)\b`)

// notVersioned are words a number follows without naming a version:
// function words and quantities ("over 100", "at least 18"), sections
// and document series (the section and document rules judge those), and
// currencies ("EUR 500").
var notVersioned = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of to in on for and or is are was were be been do does did what which who
		when where why how can could should would may might must shall will with without by from at as into about than
		that this these those it its all each every some more most less least other only over under above below after
		before between during through per up down within past until since around approximately nearly almost top first
		last next number no nr
		rfc pep iso bcp std fips article articles section sections clause clauses annex annexes appendix part chapter
		step steps exhibit schedule table figure page pages item items rule rules paragraph line lines note footnote
		level code codes title
		eur usd gbp chf jpy cad aud cny inr sek nok dkk`) {
		notVersioned[w] = true
	}
}

// VersionedTerms are the versioned terms text writes, in order. The
// term must be written as a name, so that "take 3 days" is none: the
// number joined to the word ("HTTP/3", "ARM64"), a dotted number ("Go
// 1.26"), or a capital in the word or in the word before it ("Group 4",
// "WASI preview 2"; the first word of the text does not count).
func VersionedTerms(text string) []Versioned {
	var out []Versioned
	for _, m := range versionedRE.FindAllStringSubmatchIndex(text, -1) {
		raw, word, num := text[m[0]:m[1]], text[m[2]:m[3]], text[m[4]:m[5]]
		w := strings.ToLower(word)
		if notVersioned[w] || !writtenAsName(text, m[2], m[3], m[4], num) {
			continue
		}
		out = append(out, Versioned{Raw: raw, Word: w, Number: num})
	}
	return out
}

// writtenAsName reports whether the word text[ws:we] and the number that
// starts at ns are written as a name (see VersionedTerms).
func writtenAsName(text string, ws, we, ns int, num string) bool {
	if ns == we || strings.Contains(num, ".") || text[we] == '/' || text[we] == '-' || text[we] == '.' {
		return true
	}
	if ws > 0 && strings.ToLower(text[ws:we]) != text[ws:we] {
		return true
	}
	before := strings.Fields(text[:ws])
	if len(before) < 2 {
		return false
	}
	prev := before[len(before)-1]
	return strings.ToLower(prev) != prev
}

// OtherVersions returns the numbers text gives the term with, when it
// gives it with some number but never with v's own; nil when text gives
// v's number, or the term with no number. A more or less specific number
// counts as v's own ("Python 3" and "Python 3.8").
func (v Versioned) OtherVersions(text string) []string {
	re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(v.Word) + `(?:\s|/|-|\.)?v?(\d{1,3}(?:\.\d+)*)\b`)
	var others []string
	seen := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		n := m[1]
		if sameVersion(n, v.Number) {
			return nil
		}
		if !seen[n] {
			seen[n] = true
			others = append(others, n)
		}
	}
	return others
}

// sameVersion reports whether a and b are one version, or one a more
// specific form of the other ("3" and "3.8").
func sameVersion(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}
