package verify

import (
	"reflect"
	"strings"
	"testing"
)

// TestCheckMatches: a verified draft reports each quote and fact it
// checked, with the passage that backs it and the bytes of that passage
// that matched, also in text of two- and three-byte characters and where
// lower-casing changes a character's length.
func TestCheckMatches(t *testing.T) {
	t.Parallel()
	s1 := "Either party may end this agreement with thirty (30) days' written notice under clause 7.2."
	s2 := "Die Gebühr von 1.000,00 EUR ist am 4. November 2026 fällig; Überweisung an DE89 3704 0044 0532 0130 00."
	// The Kelvin sign (three bytes) lower-cases to k (one byte): the clause
	// number is found in the lower-cased text and mapped back.
	s3 := "\u212A\u212A-Werte: siehe 7.2 unten."
	draft := "The notice is 30 days [S1]. It says “may end this agreement” [S1]. " +
		"Die Gebühr ist EUR 1.000,00, fällig am 2026-11-04 [S2]. " +
		`Pay into DE89 3704 0044 0532 0130 00 [S2]. See clause 7.2 [S3]. And "Either party … written notice" [S1].`
	r := Check(draft, []string{s1, s2, s3})
	if r.Status != Verified {
		t.Fatalf("%s %+v", r.Status, r.Flags)
	}
	type want struct {
		kind, text string
		sentence   int
		passage    string
		matched    string
	}
	var got []want
	passages := map[string]string{"S1": s1, "S2": s2, "S3": s3}
	for _, m := range r.Matches {
		p := passages[m.Passage]
		if m.Start < 0 || m.Start >= m.End || m.End > len(p) {
			t.Fatalf("match %+v out of %s's %d bytes", m, m.Passage, len(p))
		}
		if draft[m.DraftStart:m.DraftEnd] != m.Text {
			t.Errorf("match %+v: the draft holds %q there", m, draft[m.DraftStart:m.DraftEnd])
		}
		got = append(got, want{m.Kind, m.Text, m.Sentence, m.Passage, p[m.Start:m.End]})
	}
	expect := []want{
		{KindNumber, "30", 1, "S1", "thirty"}, // the first place the passage says 30
		{"quote", "may end this agreement", 2, "S1", "may end this agreement"},
		{KindAmount, "EUR 1.000,00", 3, "S2", "1.000,00 EUR"},
		{KindDate, "2026-11-04", 3, "S2", "4. November 2026"},
		{KindCode, "DE89 3704 0044 0532 0130 00", 4, "S2", "DE89 3704 0044 0532 0130 00"},
		{KindClause, "clause 7.2", 5, "S3", "7.2"},
		// An omission's words are part of the span.
		{"quote", "Either party … written notice", 6, "S1", "Either party may end this agreement with thirty (30) days' written notice"},
	}
	if !reflect.DeepEqual(got, expect) {
		t.Errorf("matches\n got %+v\nwant %+v", got, expect)
	}
	if len(r.Matches) != r.Checked {
		t.Errorf("%d matches for %d checked", len(r.Matches), r.Checked)
	}

	// A flagged draft reports what matched and flags the rest.
	r = Check(`The notice is 30 days and the fee EUR 2.000,00 [S1]. It says "may end this agreement" [S2].`, []string{s1, s2})
	if r.Status != Flagged || len(r.Matches) != 1 || r.Matches[0].Text != "30" || len(r.Flags) != 2 {
		t.Errorf("flagged: %s %+v %+v", r.Status, r.Matches, r.Flags)
	}
	// A quote is found in the first passage of those cited that holds it.
	r = Check(`It says "written notice" [S2, S1].`, []string{s2, s1})
	if len(r.Matches) != 1 || r.Matches[0].Passage != "S2" || s1[r.Matches[0].Start:r.Matches[0].End] != "written notice" {
		t.Errorf("second cited passage: %+v", r.Matches)
	}
}

// TestWordsAt: the words a quote is looked for in, and where they stand,
// for texts whose lower case changes length or is not valid UTF-8.
func TestWordsAt(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "Über-Größe İstanbul \u212Aelvin ǅungla", "a\xffb c\u0130d", "  7.2 notice, x"} {
		checkWordsAt(t, s)
	}
	wl := wordsAt("\u212Aelvin ÜBER x")
	if !reflect.DeepEqual(wl.w, []string{"kelvin", "über", "x"}) || !reflect.DeepEqual(wl.at, [][2]int{{0, 8}, {9, 14}, {15, 16}}) {
		t.Errorf("wordsAt: %q %v", wl.w, wl.at)
	}
}

func checkWordsAt(t *testing.T, s string) {
	t.Helper()
	wl := wordsAt(s)
	if w := words(s); !reflect.DeepEqual(wl.w, w) && (len(w) > 0 || len(wl.w) > 0) {
		t.Fatalf("wordsAt(%q) = %q, words = %q", s, wl.w, w)
	}
	if len(wl.at) != len(wl.w) {
		t.Fatalf("wordsAt(%q): %d words, %d spans", s, len(wl.w), len(wl.at))
	}
	prev := 0
	for i, at := range wl.at {
		if at[0] < prev || at[1] <= at[0] || at[1] > len(s) {
			t.Fatalf("wordsAt(%q): span %v after %d", s, at, prev)
		}
		if got := strings.ToLower(s[at[0]:at[1]]); got != wl.w[i] {
			t.Fatalf("wordsAt(%q): word %q stands at %v, which reads %q", s, wl.w[i], at, got)
		}
		prev = at[1]
	}
}

// FuzzWordsAt: wordsAt splits as words does, and each word's span reads
// that word.
func FuzzWordsAt(f *testing.F) {
	f.Add("Über-Größe İstanbul \u212Aelvin a\xffb")
	f.Fuzz(func(t *testing.T, s string) { checkWordsAt(t, s) })
}
