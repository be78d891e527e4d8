package retrieve

import (
	"strings"
	"unicode"
)

// Thesaurus gives a word's synonyms (internal/wordnet's DB is one): the
// single-word lemmas of its senses, each part of speech's first sense only
// unless all.
type Thesaurus interface {
	Synonyms(word string, firstSense bool) []string
}

// synonymStop are the question words not worth expanding: function words,
// question words and the words every question uses.
var synonymStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto
		about as is are was were be been being am do does did done have has had having can could may might
		must shall should will would not no nor so than too very just also only own same such both each few
		more most other some any all this that these those there here what which who whom whose when where why
		how i me my we our you your he him his she her it its they them their one get got use used using make
		made way ways thing things need needs want wants say says said tell give given take like`) {
		synonymStop[w] = true
	}
}

// SynonymWords returns the thesaurus's synonyms of the question's words
// (letters only, at least three, stop words skipped), space-separated, each
// once; "" when there are none.
func SynonymWords(question string, th Thesaurus, all bool) string {
	words := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool { return !unicode.IsLetter(r) })
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	var out []string
	done := map[string]bool{}
	for _, w := range words {
		if len(w) < 3 || synonymStop[w] || done[w] {
			continue
		}
		done[w] = true
		for _, s := range th.Synonyms(w, !all) {
			if !seen[s] && !synonymStop[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return strings.Join(out, " ")
}
