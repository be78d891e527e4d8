package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of a check.
const (
	MaxDraft      = 50000 // characters
	MaxPassages   = 50
	MaxFlags      = 50
	MaxUnchecked  = 50
	MaxShownChars = 200 // an unchecked sentence is cut to this many characters
)

// Verdicts.
const (
	Verified       = "verified"
	Flagged        = "flagged"
	NothingChecked = "nothing_checked"
)

// Flag is one thing the draft says that the passages do not back.
type Flag struct {
	// Kind is quote, a fact kind (number, date, amount, percent, code,
	// clause), no_citation or unknown_passage.
	Kind string `json:"kind"`
	// Text is the quote or fact as the draft writes it.
	Text string `json:"text"`
	// Sentence is the sentence's number in the draft (1-based); 0 for a
	// flag about the whole draft.
	Sentence int `json:"sentence"`
	// Searched are the passages it was looked for in ("S1", "S2").
	Searched []string `json:"searched,omitempty"`
	Message  string   `json:"message"`
}

// Match is one quote or fact of the draft that a passage backs, and
// where: what a receipt records of each thing it checked.
type Match struct {
	// Kind is quote or the fact's kind (number, date, amount, percent,
	// code, clause).
	Kind string `json:"kind"`
	// Text is the quote (inside its marks) or the fact as the draft writes
	// it.
	Text string `json:"text"`
	// Sentence is the sentence's number in the draft (1-based).
	Sentence int `json:"sentence"`
	// Passage is the passage it was found in ("S2").
	Passage string `json:"passage"`
	// Start and End are the bytes [Start, End) of that passage's text that
	// matched: for a quote, from its first word to its last (an omission's
	// words included); for a fact, the passage's fact or number.
	Start int `json:"start"`
	End   int `json:"end"`
	// DraftStart and DraftEnd are Text's bytes in the draft.
	DraftStart int `json:"-"`
	DraftEnd   int `json:"-"`
}

// Result is a check's outcome.
type Result struct {
	Status string `json:"status"`
	Flags  []Flag `json:"flags,omitempty"`
	// Checked counts the quotes and facts compared.
	Checked int `json:"checked"`
	// Unchecked are the sentences with no quote or fact (at most
	// MaxUnchecked, each cut to MaxShownChars); none when the draft has no
	// quote or fact at all.
	Unchecked []string `json:"unchecked_sentences,omitempty"`
	// Note explains a nothing_checked result.
	Note string `json:"note,omitempty"`
	// Matches are the quotes and facts found, in the draft's order; a
	// verified result has one for each thing checked.
	Matches []Match `json:"matches,omitempty"`
}

// Check checks draft against passages, passages[0] being S1.
func Check(draft string, passages []string) Result {
	sents := Sentences(draft)
	idx := make([]index, len(passages))
	for i, p := range passages {
		idx[i] = indexOf(p)
	}
	// Each passage's words, read when a quote is first looked for in it.
	pws := make([]*wordList, len(passages))
	passageWords := func(c int) *wordList {
		if pws[c-1] == nil {
			wl := wordsAt(passages[c-1])
			pws[c-1] = &wl
		}
		return pws[c-1]
	}
	spans := quoteSpans(draft)
	quotes := make([][]Quote, len(sents))
	for n, s := range sents {
		quotes[n] = quotesAt(draft, spans, s.Start, s.End)
	}
	var res Result
	flag := func(f Flag) {
		if len(res.Flags) < MaxFlags {
			res.Flags = append(res.Flags, f)
		}
	}
	anyCite := false
	for n, s := range sents {
		if len(s.Cites) > 0 {
			anyCite = true
		}
		for _, q := range quotes[n] {
			if len(q.Cites) > 0 {
				anyCite = true
			}
		}
	}
	if !anyCite {
		flag(Flag{Kind: "no_citation", Message: "The draft cites no passage: cite each claim by its passage id, as [S1]."})
	}
	all := make([]int, len(passages))
	for i := range passages {
		all[i] = i + 1
	}
	names := ids(all)
	var unchecked []string
	for n, s := range sents {
		for _, c := range s.Cites {
			if c < 1 || c > len(passages) {
				flag(Flag{Kind: "unknown_passage", Text: fmt.Sprintf("S%d", c), Sentence: n + 1,
					Message: fmt.Sprintf("S%d is cited, but only %d %s given.", c, len(passages), plural(len(passages), "passage was", "passages were"))})
			}
		}
		cites := valid(s.Cites, len(passages))
		if len(cites) == 0 {
			cites = all // a sentence that cites none is checked against all
		}
		items := 0
		for _, q := range quotes[n] {
			items++
			res.Checked++
			in := valid(q.Cites, len(passages))
			if len(in) == 0 {
				in = cites
			}
			found := false
			_, mark := utf8.DecodeRuneInString(draft[q.Start:])
			inner := q.Start + mark
			for _, c := range in {
				pw := passageWords(c)
				if from, to, ok := quoteIn(q, pw.w); ok {
					found = true
					res.Matches = append(res.Matches, Match{Kind: "quote", Text: q.Text, Sentence: n + 1, Passage: names[c-1],
						Start: pw.at[from][0], End: pw.at[to-1][1], DraftStart: inner, DraftEnd: inner + len(q.Text)})
					break
				}
			}
			if !found {
				flag(Flag{Kind: "quote", Text: q.Text, Sentence: n + 1, Searched: ids(in),
					Message: fmt.Sprintf("The quote %q is not in %s, word for word.", clipText(q.Text), span(in))})
			}
			// The numbers, dates, amounts and codes inside a quote are facts
			// too (issue 27, item 5): a quote that is not in the passage says
			// which of its facts is not there either, and a receipt lists
			// them.
			for _, f := range Facts(q.Text) {
				res.Checked++
				if m, ok := factIn(f, in, idx, names); ok {
					m.Sentence, m.DraftStart, m.DraftEnd = n+1, inner+f.Start, inner+f.End
					res.Matches = append(res.Matches, m)
					continue
				}
				shown := q.Text[f.Start:withUnit(q.Text, f)]
				flag(Flag{Kind: f.Kind, Text: shown, Sentence: n + 1, Searched: ids(in),
					Message: fmt.Sprintf("%q, inside a quote, not found in %s.", shown, span(in))})
			}
		}
		// Facts outside the quotes and the citations.
		text := blank(draft, s.Start, s.End, quotes[n])
		for _, f := range Facts(text) {
			items++
			res.Checked++
			found := false
			for _, c := range cites {
				if at, ok := idx[c-1].holds(f); ok {
					found = true
					res.Matches = append(res.Matches, Match{Kind: f.Kind, Text: f.Text, Sentence: n + 1, Passage: names[c-1],
						Start: at[0], End: at[1], DraftStart: s.Start + f.Start, DraftEnd: s.Start + f.End})
					break
				}
			}
			if !found {
				// The flag quotes the fact as the draft writes it: a
				// number with its unit ("13 days", not "13").
				shown := text[f.Start:withUnit(text, f)]
				flag(Flag{Kind: f.Kind, Text: shown, Sentence: n + 1, Searched: ids(cites),
					Message: fmt.Sprintf("%q not found in %s.", shown, span(cites))})
			}
		}
		if items == 0 && !onlyCitations(s.Text) {
			unchecked = append(unchecked, clipText(s.Text))
		}
	}
	switch {
	case len(res.Flags) > 0:
		res.Status = Flagged
	case res.Checked == 0:
		res.Status = NothingChecked
		res.Note = "The draft holds no quote and no number, date, amount, code or clause reference, so nothing could be checked: quote the passage that supports it and verify again, or tell the reader the answer is unverified."
	default:
		res.Status = Verified
	}
	// In the draft's order: a sentence's quotes were looked for before its facts.
	slices.SortStableFunc(res.Matches, func(a, b Match) int { return cmp.Compare(a.DraftStart, b.DraftStart) })
	if res.Checked > 0 {
		if len(unchecked) > MaxUnchecked {
			unchecked = unchecked[:MaxUnchecked]
		}
		res.Unchecked = unchecked
	}
	return res
}

// blank returns draft[start:end] with its quotes and citations replaced by
// spaces, so that their numbers are not taken for facts and offsets stay.
func blank(draft string, start, end int, quotes []Quote) string {
	b := []byte(draft[start:end])
	for _, q := range quotes {
		for i := q.Start - start; i < q.End-start; i++ {
			b[i] = ' '
		}
	}
	for _, m := range citeRe.FindAllIndex(b, -1) {
		for i := m[0]; i < m[1]; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

func onlyCitations(s string) bool {
	return strings.TrimSpace(citeRe.ReplaceAllString(s, "")) == "" ||
		strings.Trim(citeRe.ReplaceAllString(s, ""), " .,;:!?") == ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func valid(cites []int, n int) []int {
	var out []int
	for _, c := range cites {
		if c >= 1 && c <= n {
			out = append(out, c)
		}
	}
	return out
}

func ids(cs []int) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("S%d", c)
	}
	return out
}

// span names the passages searched: "S2", "S1 and S3", "S1–S4".
func span(cs []int) string {
	switch {
	case len(cs) == 0:
		return "any passage"
	case len(cs) == 1:
		return fmt.Sprintf("S%d", cs[0])
	}
	contiguous := true
	for i := 1; i < len(cs); i++ {
		if cs[i] != cs[i-1]+1 {
			contiguous = false
		}
	}
	if contiguous && len(cs) > 2 {
		return fmt.Sprintf("S%d–S%d", cs[0], cs[len(cs)-1])
	}
	parts := ids(cs)
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func clipText(s string) string {
	if utf8.RuneCountInString(s) <= MaxShownChars {
		return s
	}
	r := []rune(s)
	return string(r[:MaxShownChars-1]) + "…"
}

// factIn looks fact f up in the passages in (1-based), and returns where
// the first that holds it does.
func factIn(f Fact, in []int, idx []index, names []string) (Match, bool) {
	for _, c := range in {
		if at, ok := idx[c-1].holds(f); ok {
			return Match{Kind: f.Kind, Text: f.Text, Passage: names[c-1], Start: at[0], End: at[1]}, true
		}
	}
	return Match{}, false
}
