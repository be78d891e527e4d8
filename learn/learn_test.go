package learn

import (
	"slices"
	"testing"
	"time"
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

func TestTermsAndLike(t *testing.T) {
	if got := Terms("Which reject codes does an SCT get? SCT"); !slices.Equal(got, []string{"code", "reject", "sct"}) {
		t.Errorf("terms %q", got)
	}
	cases := []struct {
		a, b string
		like bool
	}{
		{"SCT reject codes", "reject codes of the SCT", true},                // same terms
		{"SCT reject codes", "SCT reject codes list", true},                  // one added to three: 3/4
		{"SCT reject codes", "SCT reason codes", false},                      // one swapped: 2/4
		{"notice period for leaving staff", "notice period for staff", true}, // one left out of four
		{"holiday carry over rules", "unused leave days carried", false},     // a rewording
		{"", "SCT", false},
	}
	for _, c := range cases {
		if got := Like(Terms(c.a), Terms(c.b)); got != c.like {
			t.Errorf("Like(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestAffinityScores(t *testing.T) {
	ev := []Evidence{{"sct", "sepa", 3}, {"code", "sepa", 1}, {"code", "codes", 3}, {"leave", "handbook", 2}}
	got := AffinityScores([]string{"sct", "code"}, ev)
	if got["sepa"] != 1.25 || got["codes"] != 0.75 || got["handbook"] != 0 {
		t.Errorf("scores %v", got)
	}
}

func TestOutcomes(t *testing.T) {
	if !Weak("not_found", "medium") || !Weak("found", "low") || Weak("partly_found", "medium") {
		t.Error("Weak")
	}
	if !Answered("strata_ask", "found", "low") || !Answered("strata_ask", "partly_found", "medium") ||
		Answered("strata_ask", "not_found", "medium") ||
		!Answered("strata_search", "ready", "medium") || Answered("strata_search", "ready", "low") {
		t.Error("Answered")
	}
}

// TestShares: a rewording shares a term with the question; a follow-up on
// another subject shares none (issue 27, item 2).
func TestShares(t *testing.T) {
	cases := []struct {
		a, b   string
		shares bool
	}{
		{"How long may holidays carry over?", "unused holidays carried into the next year", true},
		{"What does PEP 8 say about indentation?", "When are travel expenses refunded?", false},
		{"SCT reject codes", "credit transfer reject reason codes", true},
		{"", "SCT", false},
	}
	for _, c := range cases {
		if got := Shares(Terms(c.a), Terms(c.b)); got != c.shares {
			t.Errorf("Shares(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestSessions: different callers are different sessions; one caller's
// sightings are one session until one comes RephraseWindow or more after
// the last counted (issue 27, item 2: a stdio or single-token install
// learns from two sessions of its one caller).
func TestSessions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name string
		ss   []Sighting
		want int
	}{
		{"none", nil, 0},
		{"two callers", []Sighting{{"token:a", at(0)}, {"token:b", at(time.Minute)}}, 2},
		{"one caller, one burst", []Sighting{{"stdio:uid:1", at(0)}, {"stdio:uid:1", at(2 * time.Minute)}}, 1},
		{"one caller, a window apart", []Sighting{{"stdio:uid:1", at(RephraseWindow)}, {"stdio:uid:1", at(0)}}, 2},
		{"one caller, steps under a window", []Sighting{{"loopback", at(0)}, {"loopback", at(6 * time.Minute)},
			{"loopback", at(12 * time.Minute)}}, 2},
	}
	for _, c := range cases {
		if got := Sessions(c.ss); got != c.want {
			t.Errorf("%s: %d sessions, want %d", c.name, got, c.want)
		}
	}
}
