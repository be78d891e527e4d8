package question

import (
	"regexp"
	"strings"
	"unicode"
)

// notProper are capitalised words that start a question or name a part of
// a document, not a party.
var notProper = map[string]bool{
	"what": true, "which": true, "who": true, "whom": true, "whose": true, "how": true, "when": true,
	"where": true, "why": true, "does": true, "do": true, "did": true, "is": true, "are": true, "was": true,
	"were": true, "can": true, "could": true, "may": true, "might": true, "must": true, "shall": true,
	"should": true, "will": true, "would": true, "has": true, "have": true, "had": true, "under": true,
	"in": true, "on": true, "of": true, "for": true, "to": true, "the": true, "a": true, "an": true,
	"and": true, "or": true, "if": true, "per": true, "by": true, "with": true, "from": true, "as": true,
	"section": true, "sections": true, "article": true, "articles": true, "annex": true, "appendix": true,
	"clause": true, "clauses": true, "schedule": true, "exhibit": true, "part": true, "chapter": true,
	"paragraph": true, "agreement": true, "contract": true, "i": true, "please": true, "tell": true,
	"list": true, "give": true, "explain": true, "describe": true, "according": true, "between": true,
}

// properNames returns the capitalised words of text that are not its
// first word, a question word, a section word or an acronym ("Cano",
// "Petroleum", "Boyd" of "the Cano Petroleum–Boyd agreement"), each folded
// to lower-case letters and digits, at least three long, each once. A
// preamble may write a party's name in other words around them ("SAGEM
// S.A., Departement MORPHO" for "Sagem Morpho"), so the words are matched
// one by one.
func properNames(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, run := range properRuns(text) {
		for _, w := range run {
			if n := fold(w); len([]rune(n)) >= 3 && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// properRuns returns the runs of capitalised words of text as written
// (trimmed of punctuation), in order: a run ends at a word that is not one
// of them, at a dash or slash, and after a word that ends a phrase.
func properRuns(text string) [][]string {
	var out [][]string
	var run []string
	flush := func() {
		if len(run) > 0 {
			out = append(out, run)
		}
		run = nil
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) })
	for i, f := range fields {
		for j, part := range strings.FieldsFunc(f, func(r rune) bool { return r == '–' || r == '—' || r == '/' }) {
			if j > 0 {
				flush()
			}
			w := strings.TrimFunc(part, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			// A possessive names its owner: "Norway's" is Norway.
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
			first, _ := firstRune(w)
			if w == "" || !unicode.IsUpper(first) || i == 0 && j == 0 || notProper[strings.ToLower(w)] || allCaps(w) {
				flush()
				continue
			}
			run = append(run, w)
			if strings.ContainsAny(part[len(part)-1:], ",.;:?!)") {
				flush()
			}
		}
	}
	flush()
	return out
}

// quotedRe matches a quoted span: a title the question quotes is not a
// party.
var quotedRe = regexp.MustCompile(`"[^"]*"|“[^”]*”`)

// partyGroups returns the proper names of text outside quotes, one group
// of folded words per name, for the rule that the names a question gives
// must come together in one document: each word split at hyphens, at
// least three characters long; a word with a dot or underscore inside
// (an identifier such as Executor.submit) is left out, as its words are
// not indexed as one.
func partyGroups(text string) [][]string {
	var out [][]string
	for _, run := range properRuns(quotedRe.ReplaceAllString(text, " , ")) {
		var g []string
		for _, w := range run {
			if strings.ContainsAny(w, "._") {
				continue
			}
			for _, p := range strings.Split(w, "-") {
				if n := fold(p); len([]rune(n)) >= 3 {
					g = append(g, n)
				}
			}
		}
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

func firstRune(s string) (rune, bool) {
	for _, r := range s {
		return r, true
	}
	return 0, false
}

// allCaps: "RFC", "TS", "SCI" are acronyms or series, not parties.
func allCaps(w string) bool {
	letters := 0
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters > 0
}

func fold(w string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(w) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
