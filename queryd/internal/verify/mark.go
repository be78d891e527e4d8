package verify

import (
	"sort"
	"strings"
)

// MarkQuotes returns passage with every part of the draft's quotes that it
// holds marked as >>>…<<<, as a reader checks a receipt: the quote in its
// context. Parts are matched as quotes are checked (whole words, case and
// punctuation aside); overlapping marks are merged.
func MarkQuotes(draft, passage string) string {
	ws := wordsAt(passage)
	hay := ws.w
	var spans [][2]int
	for _, q := range quotesIn(draft, 0, len(draft)) {
		for _, part := range q.Parts {
			needle := words(part)
			if len(needle) == 0 {
				continue
			}
			for from := 0; from < len(hay); {
				at := indexWords(hay[from:], needle)
				if at < 0 {
					break
				}
				i := from + at
				spans = append(spans, [2]int{ws.at[i][0], ws.at[i+len(needle)-1][1]})
				from = i + len(needle)
			}
		}
	}
	if len(spans) == 0 {
		return passage
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	merged := [][2]int{spans[0]}
	for _, s := range spans[1:] {
		last := &merged[len(merged)-1]
		if s[0] <= last[1] {
			last[1] = max(last[1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	var b strings.Builder
	prev := 0
	for _, s := range merged {
		b.WriteString(passage[prev:s[0]])
		b.WriteString(">>>")
		b.WriteString(passage[s[0]:s[1]])
		b.WriteString("<<<")
		prev = s[1]
	}
	b.WriteString(passage[prev:])
	return b.String()
}
