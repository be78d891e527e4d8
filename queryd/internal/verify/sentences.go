// Package verify checks a drafted answer against the passages it cites:
// every quote must appear in the passage it cites, and every number, date,
// amount, percentage, code and clause reference outside the quotes in a
// passage the same sentence cites. It is pure and runs without a model;
// reading the passages from the store and issuing receipts are the
// caller's.
package verify

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentence is one sentence of a draft with the passages it cites.
type Sentence struct {
	// Text is the sentence as written, its citations included.
	Text string
	// Start and End are its byte offsets in the draft.
	Start, End int
	// Cites are the passage numbers it cites (1 for S1), in order, each
	// once; citations inside a quote do not count.
	Cites []int
}

// citeRe matches one citation group: [S1], [S1, S2], [S1; S3], or a run of
// bracketed ids separated by commas or semicolons ([S1], [S2]).
var (
	citeRe    = regexp.MustCompile(`\[\s*S([0-9]{1,3})\s*((?:[,;]\s*S[0-9]{1,3}\s*)*)\]`)
	citeIDRe  = regexp.MustCompile(`S([0-9]{1,3})`)
	citeRunRe = regexp.MustCompile(`^(?:\s*[,;]?\s*\[\s*S[0-9]{1,3}\s*(?:[,;]\s*S[0-9]{1,3}\s*)*\])+`)
)

// Sentences splits a draft. A sentence ends at a line break, or at '.',
// '!' or '?' unless a lower-case letter follows, or a digit follows (7.2,
// 1.5 %) — except that a citation after the mark still ends it. Citations
// right after the end belong to the sentence before, unless a lower-case
// word follows them.
func Sentences(draft string) []Sentence {
	quoted := quoteSpans(draft)
	inQuote := func(i int) bool {
		for _, q := range quoted {
			if i >= q[0] && i < q[1] {
				return true
			}
		}
		return false
	}
	var out []Sentence
	start := 0
	emit := func(end int) {
		text := draft[start:end]
		trimmed := strings.TrimSpace(text)
		if trimmed != "" {
			lead := strings.Index(text, trimmed)
			s := Sentence{Text: trimmed, Start: start + lead, End: start + lead + len(trimmed)}
			s.Cites = citesIn(draft, s.Start, s.End, inQuote)
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(draft); {
		r, size := utf8.DecodeRuneInString(draft[i:])
		switch {
		case r == '\n':
			emit(i)
			i += size
			start = i
			continue
		case (r == '.' || r == '!' || r == '?') && !inQuote(i):
			j := i + size
			// A run of marks ("?!", "...") ends together.
			for j < len(draft) && strings.ContainsRune(".!?", rune(draft[j])) {
				j++
			}
			// Closing quotes and brackets stay with the sentence.
			for j < len(draft) && strings.ContainsRune(`"'”’)`, rune(draft[j])) {
				j++
			}
			rest := draft[j:]
			if m := citeRunRe.FindString(rest); m != "" {
				after := strings.TrimLeft(rest[len(m):], " \t")
				if !startsLower(after) {
					emit(j + len(m))
					i = j + len(m)
					continue
				}
				// "… notice. [S1] and then …": the citation starts the
				// next sentence's words; the mark still ends this one.
				emit(j)
				i = j
				continue
			}
			next, _ := utf8.DecodeRuneInString(strings.TrimLeft(rest, " \t"))
			// A digit right after the mark (7.2, 1.5) keeps the sentence
			// going, unless the mark follows a citation ("[S1].").
			digitAfter := j < len(draft) && unicode.IsDigit(rune(draft[j])) && !strings.HasSuffix(draft[:i], "]")
			if rest == "" || !unicode.IsLower(next) && !digitAfter {
				if !(r == '.' && abbreviationBefore(draft[:i])) {
					emit(j)
					i = j
					continue
				}
			}
			i = j
			continue
		}
		i += size
	}
	emit(len(draft))
	return out
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// abbreviations that do not end a sentence.
var abbreviations = map[string]bool{"e.g": true, "i.e": true, "etc": true, "no": true, "art": true,
	"sec": true, "para": true, "fig": true, "vs": true, "cf": true, "mr": true, "ms": true, "dr": true, "approx": true}

func abbreviationBefore(s string) bool {
	i := strings.LastIndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
	w := strings.ToLower(s[i+1:])
	return abbreviations[w] || len(w) == 1 && unicode.IsLetter(rune(w[0])) && unicode.IsUpper(rune(s[len(s)-1]))
}

// citesIn returns the passage numbers cited in draft[start:end], outside
// quotes, in order and once each.
func citesIn(draft string, start, end int, inQuote func(int) bool) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range citeRe.FindAllStringIndex(draft[start:end], -1) {
		if inQuote(start + m[0]) {
			continue
		}
		for _, id := range citeIDRe.FindAllStringSubmatch(draft[start+m[0]:start+m[1]], -1) {
			n := atoi(id[1])
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
