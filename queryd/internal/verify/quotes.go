package verify

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// quoteSpans returns the byte spans of the quotes in s, quote marks
// included: "…" with straight double quotes, and “…” with curly ones. An
// unclosed quote mark opens nothing.
func quoteSpans(s string) [][2]int {
	var out [][2]int
	open := -1
	var want rune
	for i, r := range s {
		switch {
		case open < 0 && (r == '"' || r == '“'):
			open, want = i, r
			if r == '“' {
				want = '”'
			}
		case open >= 0 && r == want:
			out = append(out, [2]int{open, i + utf8.RuneLen(r)})
			open = -1
		case open >= 0 && r == '\n':
			open = -1 // a quote does not run over a line break
		}
	}
	return out
}

// Quote is one quoted span of a draft.
type Quote struct {
	// Text is what is inside the quote marks; Parts its pieces around
	// omission marks (... or …).
	Text  string
	Parts []string
	// Start and End are the span's offsets in the draft, marks included.
	Start, End int
	// Cites are the passages cited right after the quote ("…" [S2]).
	Cites []int
}

// MinQuoteWords is how many words each part of a quote around an
// omission needs, so that "a … b" cannot match anything.
const MinQuoteWords = 2

// quotesIn returns the quotes of draft[start:end].
func quotesIn(draft string, start, end int) []Quote {
	return quotesAt(draft, quoteSpans(draft), start, end)
}

// quotesAt returns the quotes of draft[start:end], spans being
// quoteSpans(draft).
func quotesAt(draft string, spans [][2]int, start, end int) []Quote {
	var out []Quote
	for _, sp := range spans {
		if sp[0] < start || sp[1] > end {
			continue
		}
		inner := draft[sp[0]:sp[1]]
		_, first := utf8.DecodeRuneInString(inner)
		_, last := utf8.DecodeLastRuneInString(inner)
		inner = inner[first : len(inner)-last]
		q := Quote{Text: inner, Start: sp[0], End: sp[1]}
		for _, p := range strings.FieldsFunc(strings.ReplaceAll(inner, "...", "…"), func(r rune) bool { return r == '…' }) {
			if p = strings.TrimSpace(p); p != "" {
				q.Parts = append(q.Parts, p)
			}
		}
		rest := strings.TrimLeft(draft[sp[1]:end], " \t")
		if m := citeRunRe.FindString(rest); m != "" {
			for _, id := range citeIDRe.FindAllStringSubmatch(m, -1) {
				q.Cites = append(q.Cites, atoi(id[1]))
			}
		}
		out = append(out, q)
	}
	return out
}

// words splits text into the tokens quotes are compared by (wordsAt):
// lower-cased words of letters and digits, and the signs that change what
// a number says.
func words(s string) []string { return wordsAt(s).w }

// wordList is a passage split into tokens as words splits it, with each
// token's byte span in the passage: what a quote is looked for in, and
// where a quote found was.
type wordList struct {
	w  []string
	at [][2]int
}

// amountSign reports whether r is a sign a quote must keep as written:
// percent and the currency signs.
func amountSign(r rune) bool { return r == '%' || r == '€' || r == '$' || r == '£' }

// wordsAt splits s into tokens and records where each stands in s. A token
// is a run of letters and digits (lower-cased), one of the signs %, €, $
// and £, or a '.' or ',' between two digits (a decimal or thousands
// separator). Everything else (spaces, line breaks, quotation marks,
// apostrophes, dashes, other punctuation) separates tokens and is not
// compared, so a quote may differ from its passage there but not in a
// digit, a letter, a sign or a separator (issue 27, item 5).
// strings.ToLower maps rune for rune (an invalid byte becomes U+FFFD), so
// walking s and its lower-cased copy side by side pairs each rune with its
// lower case.
func wordsAt(s string) wordList {
	lower := strings.ToLower(s)
	var wl wordList
	start, lstart := -1, -1
	flush := func(i, j int) {
		if start >= 0 {
			wl.w = append(wl.w, lower[lstart:j])
			wl.at = append(wl.at, [2]int{start, i})
			start = -1
		}
	}
	prevDigit := false
	for i, j := 0, 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		lr, lw := utf8.DecodeRuneInString(lower[j:])
		switch {
		case unicode.IsLetter(lr) || unicode.IsDigit(lr):
			if start < 0 {
				start, lstart = i, j
			}
		case amountSign(lr) || (lr == '.' || lr == ',') && prevDigit && nextIsDigit(s, i+w):
			flush(i, j)
			wl.w = append(wl.w, lower[j:j+lw])
			wl.at = append(wl.at, [2]int{i, i + w})
		default:
			flush(i, j)
		}
		prevDigit = unicode.IsDigit(lr)
		i, j = i+w, j+lw
	}
	flush(len(s), len(lower))
	return wl
}

func nextIsDigit(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && unicode.IsDigit(r)
}

// wordCount is how many of the tokens are words, not signs.
func wordCount(toks []string) int {
	n := 0
	for _, t := range toks {
		if r, _ := utf8.DecodeRuneInString(t); unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// quoteIn reports whether every part of q appears in the passage of words
// pw (words(passage)) as whole words, the parts in order, and where: the
// words [from, to) of pw, from the first part's first word to the last
// part's last. A part of fewer than MinQuoteWords words in a quote with an
// omission never matches.
func quoteIn(q Quote, pw []string) (from, to int, ok bool) {
	first, next := -1, 0
	for _, part := range q.Parts {
		w := words(part)
		if len(w) == 0 || len(q.Parts) > 1 && wordCount(w) < MinQuoteWords {
			return 0, 0, false
		}
		at := indexWords(pw[next:], w)
		if at < 0 {
			return 0, 0, false
		}
		if first < 0 {
			first = next + at
		}
		next += at + len(w)
	}
	return first, next, len(q.Parts) > 0
}

func indexWords(hay, needle []string) int {
outer:
	for i := 0; i+len(needle) <= len(hay); i++ {
		for j, w := range needle {
			if hay[i+j] != w {
				continue outer
			}
		}
		return i
	}
	return -1
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}
