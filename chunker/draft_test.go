package chunker

import (
	"reflect"
	"strings"
	"testing"
)

func TestDraftSentences(t *testing.T) {
	tests := []struct {
		name  string
		draft string
		want  []string
	}{
		{"marks", "Notice is 90 days. It must be written! Is email enough? No.",
			[]string{"Notice is 90 days.", "It must be written!", "Is email enough?", "No."}},
		{"line breaks end sentences", "First line without a mark\nsecond line\n\nthird",
			[]string{"First line without a mark", "second line", "third"}},
		{"lower-case word keeps the sentence", "Use e.g. email or post. Then wait.",
			[]string{"Use e.g. email or post.", "Then wait."}},
		{"digits keep the sentence", "Clause 7.2 sets EUR 1.000,00 as the fee. Version 2. 3 parts follow.",
			[]string{"Clause 7.2 sets EUR 1.000,00 as the fee.", "Version 2. 3 parts follow."}},
		{"a digit after a citation ends it", "The term ends [S1]. 2027 starts a new one.",
			[]string{"The term ends [S1].", "2027 starts a new one."}},
		{"citations after the end belong before", "Either party may end it. [S1] Notice is written. [S2], [S3]; [S4] Done.",
			[]string{"Either party may end it. [S1]", "Notice is written. [S2], [S3]; [S4]", "Done."}},
		{"citations before a lower-case word open the next sentence", "It ends in May. [S2] and it renews yearly.",
			[]string{"It ends in May.", "[S2] and it renews yearly."}},
		{"closing quote stays", "He wrote \"Stop.\" [S1] Then left.",
			[]string{"He wrote \"Stop.\" [S1]", "Then left."}},
		{"only a citation", "[S1]", []string{"[S1]"}},
		{"not a citation", "See [S]. Or [X1]. Done.", []string{"See [S].", "Or [X1].", "Done."}},
		{"empty", "  \n ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range DraftSentences(tc.draft) {
				got = append(got, tc.draft[s.Start:s.End])
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DraftSentences(%q)\n got %q\nwant %q", tc.draft, got, tc.want)
			}
			if err := draftSpansErr(tc.draft, DraftSentences(tc.draft)); err != nil {
				t.Error(err)
			}
		})
	}
}

// draftSpansErr checks DraftSentences' spans: in bounds, in order, trimmed,
// on one line each, and covering every non-space byte.
func draftSpansErr(draft string, spans []Span) error {
	prev := 0
	covered := make([]bool, len(draft))
	for i, s := range spans {
		if s.Start < prev || s.End <= s.Start || s.End > len(draft) {
			return fmtErr("span %d [%d,%d) out of order or bounds", i, s.Start, s.End)
		}
		if isSpaceByte(draft[s.Start]) || isSpaceByte(draft[s.End-1]) || strings.Contains(draft[s.Start:s.End], "\n") {
			return fmtErr("span %d %q not trimmed or spans lines", i, draft[s.Start:s.End])
		}
		for k := s.Start; k < s.End; k++ {
			covered[k] = true
		}
		prev = s.End
	}
	for k := range draft {
		if !covered[k] && !isSpaceByte(draft[k]) {
			return fmtErr("byte %d of the draft is in no sentence", k)
		}
	}
	return nil
}
