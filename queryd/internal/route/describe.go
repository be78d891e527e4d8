package route

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// DescriptionScore is how well one layer's description matches a question.
type DescriptionScore struct {
	// Score is the sum, over the question's distinct content words found
	// in the description, of their idf over the layers' descriptions:
	// ln(1 + (L - df + 0.5)/(df + 0.5)), L the number of layers and df
	// how many descriptions hold the word. A word every description holds
	// counts little; one only this description holds counts most.
	Score float64
	// Words are the question's words found, stemmed, sorted.
	Words []string
}

// DescriptionScores scores every layer's description against the question,
// in the order of the layers (0 for a layer without a description).
func DescriptionScores(query string, layers []store.Layer) []DescriptionScore {
	out := make([]DescriptionScore, len(layers))
	sets := make([]map[string]bool, len(layers))
	df := map[string]int{}
	for i, l := range layers {
		sets[i] = map[string]bool{}
		for _, w := range contentTerms(l.Description) {
			if !sets[i][w] {
				sets[i][w] = true
				df[w]++
			}
		}
	}
	n := float64(len(layers))
	q := map[string]bool{}
	for _, w := range contentTerms(query) {
		q[w] = true
	}
	for i := range layers {
		for w := range q {
			if sets[i][w] {
				d := float64(df[w])
				out[i].Score += math.Log(1 + (n-d+0.5)/(d+0.5))
				out[i].Words = append(out[i].Words, w)
			}
		}
		sort.Strings(out[i].Words)
	}
	return out
}

// stopwords are the words that say nothing about a layer's subject.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again all also am an and any are as at be because been
		before being below between both but by can could did do does doing done down during each either else
		etc every few for from further get gets got had has have having he her here hers him his how i if in
		into is it its itself just may me might more most much must my no nor not now of off on once only or
		other our ours out over own per please same shall she should so some such than that the their theirs
		them then there these they this those through to too under until up upon us very via was we were
		what when where whether which while who whom whose why will with within without would yes yet you
		your yours many say says said tell mean means meant use used using find found give given make made
		need needs know one two three new old all any document documents doc docs file files text page pages
		question answer information info thing things way ways`) {
		m[w] = true
	}
	return m
}()

// contentTerms returns the text's content words, lower-cased and crudely
// stemmed (plural and -ing/-ed endings), stopwords and words of one or two
// letters ("go", "eu": too often another word) left out, in order.
func contentTerms(s string) []string {
	var out []string
	for _, w := range words(strings.ToLower(s)) {
		if len([]rune(w)) < 3 || stopwords[w] {
			continue
		}
		w = stem(w)
		if !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// words splits text into runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// stem strips the commonest English endings (learn.Stem, shared with the
// learning loop), so "payments" meets "payment"; it is no real stemmer,
// only enough for short descriptions.
func stem(w string) string { return learn.Stem(w) }
