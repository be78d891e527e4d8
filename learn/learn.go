// Package learn holds the rules of the learning loop that both daemons
// apply: which words of a question are content words, and when a rewording
// teaches a synonym. The promoter (package jobs, in ingestd) learns pairs
// with them; queryd looks the learned pairs up by the same content words.
// It is pure: no database, no daemon.
package learn

import (
	"slices"
	"strings"
	"time"
	"unicode"
)

// SynonymRule is the version of the synonym rule stored with each learned
// pair. Pairs stored under an older version stop being applied and are
// deleted on the promoter's next run. Version 2 is the rule of
// SynonymPair; version 1 (any reworded word) was looser.
const SynonymRule = 2

// Tuning of the rule, named so the docs and tests can cite them.
const (
	// RephraseWindow is how soon after a question its rewording must come
	// from the same caller to count as a rephrasing.
	RephraseWindow = 10 * time.Minute
	// Lookback is how far back the promoter reads interactions.
	Lookback = 30 * 24 * time.Hour
	// MinSightings is how often a pair must be seen in the lookback window
	// before it is learned, MinSessions in how many separate sessions
	// (Sessions): two callers, or one caller twice at least RephraseWindow
	// apart, so that a stdio or single-token install learns too, while one
	// burst of rewordings still teaches nothing.
	MinSightings = 2
	MinSessions  = 2
	// MaxSynonymWords bounds the words that replace the missing one.
	MaxSynonymWords = 3
)

// stopwords are the words a question's subject does not depend on.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about after all also am an and any are as at be been before being between
		both but by can could did do does doing done during each either for from get gets got had has have having
		he her here his how i if in into is it its just may me might more most much must my no nor not now of off
		on once only or other our out over own per please same shall she should so some such than that the their
		them then there these they this those through to too under until up upon us very via was we were what when
		where whether which while who whom whose why will with within without would you your yours tell explain
		show say says mean means find give list describe`) {
		m[w] = true
	}
	return m
}()

// ContentWords returns the content words of s, lowercased, in order and
// without repeats: runs of letters and digits that are not stopwords.
func ContentWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// SynonymPair applies the synonym rule to a question and its rewording:
// when exactly one content word of the first is missing from the second,
// the two share at least one content word, and the second adds from one
// to MaxSynonymWords content words, term is the missing word and synonym
// the added words in the order the rewording has them. ok is false for
// any other pair.
func SynonymPair(first, second string) (term, synonym string, ok bool) {
	a, b := ContentWords(first), ContentWords(second)
	inA, inB := set(a), set(b)
	var missing, added []string
	shared := 0
	for _, w := range a {
		if inB[w] {
			shared++
		} else {
			missing = append(missing, w)
		}
	}
	for _, w := range b {
		if !inA[w] {
			added = append(added, w)
		}
	}
	if len(missing) != 1 || shared == 0 || len(added) == 0 || len(added) > MaxSynonymWords {
		return "", "", false
	}
	return missing[0], strings.Join(added, " "), true
}

func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Sighting is one time a pair (or any other evidence) was seen: who, when.
type Sighting struct {
	Caller string
	At     time.Time
}

// Sessions counts the separate sessions among sightings. The interactions
// table has no session id: a caller is a token's digest, the process owner
// over stdio, every loopback client at once, and only an MCP session of a
// server without tokens ("session:<id>") is one session. So a session is
// told by time: a caller's sightings at least RephraseWindow after the last
// one counted start a new session, and different callers are different
// sessions.
func Sessions(ss []Sighting) int {
	by := map[string][]time.Time{}
	for _, s := range ss {
		by[s.Caller] = append(by[s.Caller], s.At)
	}
	n := 0
	for _, ts := range by {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		var last time.Time
		for i, t := range ts {
			if i == 0 || t.Sub(last) >= RephraseWindow {
				n++
				last = t
			}
		}
	}
	return n
}
