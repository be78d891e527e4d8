package learn

import (
	"slices"
	"testing"
)

func TestContentWords(t *testing.T) {
	if got := ContentWords("What is the notice period for the SCT? the SCT"); !slices.Equal(got, []string{"notice", "period", "sct"}) {
		t.Errorf("content words %q", got)
	}
}

func TestSynonymPair(t *testing.T) {
	cases := []struct {
		first, second, term, synonym string
		ok                           bool
	}{
		// One word replaced by one or by a phrase.
		{"How long is the holiday carry-over?", "How long is the leave carry-over?", "holiday", "leave", true},
		{"reject codes for SCT", "reject codes for SEPA credit transfer", "sct", "sepa credit transfer", true},
		// Only stopwords changed: nothing is missing.
		{"What is the notice period?", "Tell me the notice period", "", "", false},
		// Two content words missing.
		{"holiday carry over rules", "leave transfer rules", "", "", false},
		// No shared content word: teaches nothing.
		{"holiday", "leave", "", "", false},
		// A word dropped and none added.
		{"holiday carry over rules", "carry over rules", "", "", false},
		// Too many words added.
		{"notice period sct", "notice period for a sepa credit transfer instant payment", "", "", false},
	}
	for _, c := range cases {
		term, syn, ok := SynonymPair(c.first, c.second)
		if term != c.term || syn != c.synonym || ok != c.ok {
			t.Errorf("SynonymPair(%q, %q) = %q, %q, %v; want %q, %q, %v", c.first, c.second, term, syn, ok, c.term, c.synonym, c.ok)
		}
	}
}
