package question

import (
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
	var run []string
	flush := func() {
		for _, n := range run {
			if len([]rune(n)) >= 3 && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
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
			first, _ := firstRune(w)
			if w == "" || !unicode.IsUpper(first) || i == 0 && j == 0 || notProper[strings.ToLower(w)] || allCaps(w) {
				flush()
				continue
			}
			run = append(run, fold(w))
			if strings.ContainsAny(part[len(part)-1:], ",.;:?!)") {
				flush()
			}
		}
	}
	flush()
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
