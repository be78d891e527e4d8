package verifyeval

import (
	"strings"
	"testing"
)

// The transformations hold what their kinds say, also where the easy
// choice would not.
func TestTransformations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p, num string
		want   bool
	}{
		{"released in 2025", "5", false}, // the tail of a longer number
		{"see 7.3.1 below", "7.3", true}, // the head of a dotted one
		{"see 1.1.2 below", "2", false},
		{"every six months", "6", true},
		{"within one year", "1", true},
		{"page 30, 300 items", "30", true},
	} {
		if got := numberWritten(c.p, c.num); got != c.want {
			t.Errorf("numberWritten(%q, %q) = %v", c.p, c.num, got)
		}
	}
	p := "Pay within 30 days under clause 31, or thirty-two at most."
	ts := numberTokens(p)
	if len(ts) != 2 || ts[0].text != "30" {
		t.Fatalf("numberTokens = %+v", ts)
	}
	if _, to, ok := changeFact(p, windowAround(p, ts[0]), ts[0]); !ok || to != "32" && to != "33" {
		t.Errorf("changeFact chose %q: 31 is written in the passage", to)
	}
	q := "the end of the compressed data"
	pass := "pad the end of the compressed data to a byte"
	if a, _, ok := alterQuote(q, pass); !ok || strings.Contains(pass, a) || a == q {
		t.Errorf("alterQuote = %q", a)
	}
	if got := wholeWords("set forth in this Agreement. License fees", "set forth in this Agreement. Li"); got != "set forth in this Agreement." {
		t.Errorf("wholeWords = %q", got)
	}
	if got := clean(`He said "stop". Then LTD., T.6.) [S2] 4..7 e.g. 7.2`); got != "He said stop Then LTD, T.6) S2 4 to 7 e.g 7.2" {
		t.Errorf("clean = %q", got)
	}
	forms := otherForms("Notice of thirty (30) days. A fee of $1,000.00 is due by December 31, 2020, or 10% more.")
	var got []string
	for _, f := range forms {
		got = append(got, f.note)
	}
	want := []string{"percentage: 10% → ten percent", "number word and digits to digits: thirty (30) → 30",
		"written date to ISO: December 31, 2020 → 2020-12-31", "amount in the other decimal convention: $1,000.00 → USD 1.000,00"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("otherForms:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Generate gives every kind, with the verdict the spec asks for.
func TestGenerate(t *testing.T) {
	t.Parallel()
	items := []Item{
		{ID: "a", Passage: "7.2 Either party may end this agreement with thirty (30) days' written notice to the other party.",
			Quote: "Either party may end this agreement"},
		{ID: "b", Passage: "Status code QUED means the payment is queued and waits for the next clearing cycle.",
			Quote: "waits for the next clearing cycle"},
	}
	ds := Generate(items)
	expect := map[string]string{KindCorrect: Verified, KindOtherForm: Verified, KindFactChanged: Flagged, KindQuoteAlter: Flagged,
		KindWrongSource: Flagged, KindNoCitation: Flagged, KindNothing: NothingChecked}
	seen := map[string]bool{}
	for _, d := range ds {
		seen[d.Kind] = true
		if d.Expect != expect[d.Kind] {
			t.Errorf("%s (%s): expect %s", d.ID, d.Kind, d.Expect)
		}
		if len(d.Passages) != len(d.Sources) || d.Passages[0] != items[0].Passage && d.Passages[0] != items[1].Passage {
			t.Errorf("%s: passages %v", d.ID, d.Sources)
		}
		if (d.Kind == KindNoCitation) == strings.Contains(d.Draft, "[S") {
			t.Errorf("%s (%s): %q", d.ID, d.Kind, d.Draft)
		}
		if d.Kind == KindFactChanged && strings.Contains(d.Passages[0], d.Flag) {
			t.Errorf("%s: the changed fact %q is in the passage", d.ID, d.Flag)
		}
	}
	for _, k := range Kinds {
		if !seen[k] {
			t.Errorf("no draft of kind %s", k)
		}
	}
}
