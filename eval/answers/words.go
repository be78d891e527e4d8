package answers

import (
	"strings"
	"unicode"
)

// The checks compare words after a deliberately coarse stemmer: lower case,
// a common English suffix stripped (once, longest first), then the first
// six letters kept. It conflates more than PostgreSQL's english snowball
// stemmer that the lexical channel uses ("terminate", "termination" and
// "terminating" all become "termin"; "contract" and "contractor" both
// "contra"), so the checks are stricter than the search: a paraphrase that
// passes shares no stem the search could match, and an unanswerable
// question's words are looked for more widely than the search would.
// The project has no Go stemmer of its own (stemming happens in
// PostgreSQL), and the check must run without a database.

const stemPrefix = 6

var suffixes = []string{
	"ational", "ations", "ation", "ements", "ement", "ments", "ment", "nesses", "ness", "ities", "ity",
	"ingly", "ings", "ing", "ively", "ive", "ables", "able", "ibles", "ible", "izers", "izer", "izes", "ized",
	"ize", "ises", "ised", "ise", "edly", "ers", "er", "ied", "ies", "ed", "es", "ly", "al", "s",
}

// Stem is the coarse stem of one word.
func Stem(w string) string {
	w = strings.ToLower(w)
	for _, s := range suffixes {
		if len(w) > len(s)+2 && strings.HasSuffix(w, s) {
			w = strings.TrimSuffix(w, s)
			if s == "ied" || s == "ies" {
				w += "y"
			}
			break
		}
	}
	if r := []rune(w); len(r) > stemPrefix {
		w = string(r[:stemPrefix])
	}
	return w
}

// stopwords are English function words and question words, which carry no
// content.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
	because been before being below between both but by can could did do does doing down during each either
	few for from further had has have having he her here hers him his how i if in into is it its itself just
	may me might more most must my no nor not of off on once only or other our ours out over own same shall
	she should so some such than that the their them then there these they this those through to too under
	until up upon very was we were what when where which while who whom why will with would you your yours
	whether within without via per one two three four five six seven eight nine ten first second any else
	say says said tell does get got give gives given make makes made use used uses using way ways need needs
	thing things kind much many well like way new much whose let lets go`) {
		stopwords[w] = true
	}
}

// Tokens splits text into words (letters and digits; an apostrophe's tail
// such as "'s" dropped).
func Tokens(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' }) {
		if i := strings.IndexAny(f, "'’"); i >= 0 {
			f = f[:i]
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ContentStems are the stems of text's content words: stopwords, one-letter
// words and the generic words dropped, each stem once, in order.
func ContentStems(text string, generic map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range Tokens(text) {
		lw := strings.ToLower(w)
		if stopwords[lw] || len([]rune(lw)) < 2 {
			continue
		}
		s := Stem(lw)
		if generic[s] || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// StemSet is the set of text's content stems.
func StemSet(text string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ContentStems(text, nil) {
		m[s] = true
	}
	return m
}

// normalise folds whitespace runs to one space, for comparing a result's
// text with a quote.
func normalise(s string) string { return strings.Join(strings.Fields(s), " ") }
