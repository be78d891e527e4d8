package ask

import (
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// CharsPerToken is the one token estimate used everywhere ANSWER_TOKEN_BUDGET
// is counted (strata_ask's packing, extractive sentences, strata_verify's
// span limits): about four characters a token. It is an estimate, not a
// tokenizer: it needs no model and gives the same count on every machine.
const CharsPerToken = 4

// MaxPassages is the most passages one answer returns.
const MaxPassages = 50

// NeverCut is the length, in characters, up to which a named clause is
// never cut, and the head every later clause keeps room for when the budget
// is shared.
const NeverCut = retrieve.NeverCut

// Tokens estimates the tokens of s: its characters (not bytes) divided by
// CharsPerToken, rounded up.
func Tokens(s string) int {
	return (utf8.RuneCountInString(s) + CharsPerToken - 1) / CharsPerToken
}

// Pack chooses, best first, the passages that fit budget tokens; costs[i]
// is passage i's cost in tokens (its id, ref and citation counted with its
// text). The first passage always comes back, even alone over the budget,
// unless first is false (named clauses came back before it); a later one
// that does not fit is skipped and smaller ones after it may still fit; at
// most max come back (MaxPassages when max <= 0). It returns the indexes
// kept, in order, and the tokens they use.
func Pack(costs []int, budget, max int, first bool) (keep []int, used int) {
	if max <= 0 || max > MaxPassages {
		max = MaxPassages
	}
	for i, c := range costs {
		if len(keep) == max {
			break
		}
		if first && len(keep) == 0 || used+c <= budget {
			keep = append(keep, i)
			used += c
		}
	}
	return keep, used
}

// Clause is a named clause to hand back verbatim.
type Clause struct {
	Text string
	// Overhead is what its id, ref and citation cost, in characters.
	Overhead int
}

// ClauseFit is what becomes of one named clause under the budget.
type ClauseFit struct {
	// Text is what is handed back: the whole clause, or its start cut at a
	// word; empty when the clause is left out.
	Text string
	Cut  bool
	// LeftOut is set for a clause that no longer fits, and for every clause
	// after it.
	LeftOut bool
}

// FitClauses shares a budget of budgetChars characters among the named
// clauses, in order. Each clause gets an equal part of what is left among
// the clauses still to fit, but never so much that a later clause could not
// keep room for its first NeverCut characters (cut at a word) and its
// citation. A clause longer than its part is cut at a word; one of NeverCut
// characters or less is never cut. A clause that cannot get even its head
// is left out whole, and so is every clause after it; the first clause
// always comes back. It returns one ClauseFit per clause and the characters
// used.
func FitClauses(clauses []Clause, budgetChars int) (fits []ClauseFit, used int) {
	fits = make([]ClauseFit, len(clauses))
	left := budgetChars
	for i, c := range clauses {
		n := utf8.RuneCountInString(c.Text)
		head := headLen(c.Text)
		reserve := 0
		for _, l := range clauses[i+1:] {
			reserve += headLen(l.Text) + l.Overhead
		}
		room := left - c.Overhead - reserve
		share := (left - c.Overhead) / (len(clauses) - i)
		if room < share {
			share = room
		}
		switch {
		case n <= share:
			fits[i] = ClauseFit{Text: c.Text}
		case n <= NeverCut:
			// Never cut a short clause: whole when what is left holds it,
			// else left out (the first always comes back).
			if i == 0 || n+c.Overhead <= left {
				fits[i] = ClauseFit{Text: c.Text}
			} else {
				fits[i] = ClauseFit{LeftOut: true}
			}
		case i == 0 || share >= head:
			fits[i] = ClauseFit{Text: cutAtWord(c.Text, max(share, head)), Cut: true}
		default:
			fits[i] = ClauseFit{LeftOut: true}
		}
		if fits[i].LeftOut {
			for j := i + 1; j < len(fits); j++ {
				fits[j] = ClauseFit{LeftOut: true}
			}
			return fits, used
		}
		cost := utf8.RuneCountInString(fits[i].Text) + c.Overhead
		used += cost
		left -= cost
	}
	return fits, used
}

// headLen is the length in characters of the head a clause keeps room for:
// the whole clause when it is NeverCut characters or less, else its first
// NeverCut characters cut at a word.
func headLen(text string) int {
	if utf8.RuneCountInString(text) <= NeverCut {
		return utf8.RuneCountInString(text)
	}
	return utf8.RuneCountInString(cutAtWord(text, NeverCut))
}

// cutAtWord returns the start of text of at most max characters, ending at
// the end of a word (before the last space that fits), trailing spaces
// dropped. A first word longer than max is cut inside it.
func cutAtWord(text string, max int) string {
	if max <= 0 {
		return ""
	}
	end, count, lastSpace := len(text), 0, -1
	for i, r := range text {
		if count == max {
			end = i
			break
		}
		if unicode.IsSpace(r) {
			lastSpace = i
		}
		count++
	}
	if end == len(text) {
		return text
	}
	r, _ := utf8.DecodeRuneInString(text[end:])
	if !unicode.IsSpace(r) && lastSpace > 0 {
		end = lastSpace
	}
	for end > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= size
	}
	return text[:end]
}
