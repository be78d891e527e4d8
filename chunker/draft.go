package chunker

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// DraftSentences splits a drafted answer (the text a client passes to
// verification) into sentences, with the rules for drafts, which differ from
// Sentences' rules for documents:
//   - every line break ends a sentence;
//   - ".", "!" and "?" end a sentence, unless the next non-space character
//     is a lower-case letter, or is a digit and the mark does not follow a
//     citation ("clause 7.2", "EUR 1.000" stay whole; "… [S1]. 2026 was …"
//     ends);
//   - citations right after the end ("… notice. [S1]", "… notice. [S1],
//     [S2]; [S3]") belong to the sentence before them, unless a lower-case
//     word follows them, in which case they open the next sentence.
//
// Spans are trimmed of surrounding whitespace, in order and non-overlapping.
func DraftSentences(draft string) []Span {
	var out []Span
	emit := func(s, e int) {
		s, e = trimLine(draft, s, e)
		if e > s {
			out = append(out, Span{Start: s, End: e})
		}
	}
	pos := 0
	for pos < len(draft) {
		le := strings.IndexByte(draft[pos:], '\n')
		if le < 0 {
			le = len(draft)
		} else {
			le += pos
		}
		start := pos
		for i := pos; i < le; {
			r, n := utf8.DecodeRuneInString(draft[i:le])
			if r != '.' && r != '!' && r != '?' {
				i += n
				continue
			}
			j := i + 1
			for j < le {
				r2, n2 := utf8.DecodeRuneInString(draft[j:le])
				if r2 != '.' && r2 != '!' && r2 != '?' && !isCloser(r2) {
					break
				}
				j += n2
			}
			k := j
			for k < le && isSpaceByte(draft[k]) {
				k++
			}
			if k < le {
				next, _ := utf8.DecodeRuneInString(draft[k:le])
				if unicode.IsLower(next) || unicode.IsDigit(next) && !endsWithCitation(draft[start:i]) {
					i = j
					continue
				}
			}
			end := j
			if ce := citationGroupEnd(draft, k, le); ce > k {
				m := ce
				for m < le && isSpaceByte(draft[m]) {
					m++
				}
				next := rune(-1)
				if m < le {
					next, _ = utf8.DecodeRuneInString(draft[m:le])
				}
				if !unicode.IsLower(next) {
					end = ce
				}
			}
			emit(start, end)
			start = end
			i = end
		}
		emit(start, le)
		pos = le + 1
	}
	return out
}

// citationAt returns the end of a citation [S12] starting at s[i], or -1.
func citationAt(s string, i, limit int) int {
	if i+4 > limit || s[i] != '[' || s[i+1] != 'S' {
		return -1
	}
	j := i + 2
	for j < limit && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i+2 || j >= limit || s[j] != ']' {
		return -1
	}
	return j + 1
}

// citationGroupEnd returns the end of the citations starting at s[i]
// ("[S1]", "[S1], [S2]; [S3]", "[S1] [S2]"), or i when there are none.
func citationGroupEnd(s string, i, limit int) int {
	end := citationAt(s, i, limit)
	if end < 0 {
		return i
	}
	for {
		j := end
		for j < limit && (s[j] == ' ' || s[j] == '\t' || s[j] == ',' || s[j] == ';') {
			j++
		}
		e := citationAt(s, j, limit)
		if e < 0 {
			return end
		}
		end = e
	}
}

// endsWithCitation reports whether s, trimmed, ends with a citation [S12].
func endsWithCitation(s string) bool {
	s = strings.TrimRight(s, " \t")
	i := strings.LastIndexByte(s, '[')
	return i >= 0 && citationAt(s, i, len(s)) == len(s)
}
