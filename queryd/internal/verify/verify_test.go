package verify

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func sentenceTexts(ss []Sentence) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.Text)
	}
	return out
}

func TestSentences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		draft string
		want  []string
		cites [][]int
	}{
		// Citations right after the end belong to the sentence before.
		{"Either party may end it with notice. [S1] The fee is due.", []string{"Either party may end it with notice. [S1]", "The fee is due."}, [][]int{{1}, nil}},
		// ... unless a lower-case word follows them.
		{"It ends. [S1] and then it starts again.", []string{"It ends.", "[S1] and then it starts again."}, [][]int{nil, {1}}},
		// A lower-case letter or a digit after the mark does not end it.
		{"See clause 7.2 of the agreement, e.g. the notice part [S1].", []string{"See clause 7.2 of the agreement, e.g. the notice part [S1]."}, [][]int{{1}}},
		// A line break ends a sentence.
		{"First line [S1]\nSecond line [S2]", []string{"First line [S1]", "Second line [S2]"}, [][]int{{1}, {2}}},
		// Several citations, separated by commas or semicolons.
		{"Both say so [S1], [S2]; [S3]. Next.", []string{"Both say so [S1], [S2]; [S3].", "Next."}, [][]int{{1, 2, 3}, nil}},
		{"Both say so [S1, S2]! Really?", []string{"Both say so [S1, S2]!", "Really?"}, [][]int{{1, 2}, nil}},
		// A citation inside a quote does not count.
		{`He wrote "see [S2] above" here [S1].`, []string{`He wrote "see [S2] above" here [S1].`}, [][]int{{1}}},
	}
	for _, c := range cases {
		got := Sentences(c.draft)
		if !reflect.DeepEqual(sentenceTexts(got), c.want) {
			t.Errorf("Sentences(%q) = %q, want %q", c.draft, sentenceTexts(got), c.want)
			continue
		}
		for i, s := range got {
			if !reflect.DeepEqual(s.Cites, c.cites[i]) {
				t.Errorf("%q sentence %d cites %v, want %v", c.draft, i, s.Cites, c.cites[i])
			}
		}
	}
}

func TestFactsNormalise(t *testing.T) {
	t.Parallel()
	// The spec's examples: each draft fact matches the passage's wording.
	cases := []struct{ draft, passage string }{
		{"The notice is 30 days [S1].", "with thirty (30) days' written notice"},
		{"It costs EUR 1.000,00 [S1].", "a fee of 1000 EUR per year"},
		{"It was signed on 2026-11-04 [S1].", "signed on 4 November 2026 by both"},
		{"The rate is 5 % [S1].", "a rate of 5% applies"},
		{"Code AC01 means a wrong account [S1].", "AC01 IncorrectAccountNumber"},
		{"Send a pacs.008 [S1].", "the pacs.008 message"},
		{"Clause 7.2 allows it [S1].", "7.2 Either party may end"},
		{"The cap is EUR 7.2 million [S1].", "capped at EUR 7,200,000"},
		{"Thirty days apply [S1].", "30 days apply"},
		{"It was in 2026 [S1].", "dated 4 November 2026"},
	}
	for _, c := range cases {
		r := Check(c.draft, []string{c.passage})
		if r.Status != Verified {
			t.Errorf("%q against %q: %s %+v", c.draft, c.passage, r.Status, r.Flags)
		}
	}
	// Changed facts are flagged.
	for _, c := range []struct{ draft, passage, flagged string }{
		{"The notice is 13 days [S1].", "with thirty (30) days' written notice", "13 days"},
		{"The notice is 13 business days [S1].", "with thirty (30) days' written notice", "13 business days"},
		{"Die Frist beträgt 13 Tage [S1].", "mit einer Frist von 30 Tagen", "13 Tage"},
		{"It lasts 13 weeks [S1].", "it lasts 30 weeks", "13 weeks"},
		{"It ends in 2025 [S1].", "it ends in 2026", "2025"},
		{"It holds 13 of them [S1].", "it holds 30 of them", "13"},
		{"It costs EUR 1.500,00 [S1].", "a fee of 1000 EUR per year", "EUR 1.500,00"},
		{"It was signed on 2026-11-05 [S1].", "signed on 4 November 2026", "2026-11-05"},
		{"Code AC04 means closed [S1].", "AC01 IncorrectAccountNumber", "AC04"},
		{"Clause 7.3 allows it [S1].", "7.2 Either party may end", "Clause 7.3"},
		{"The rate is 6 % [S1].", "a rate of 5% applies", "6 %"},
	} {
		r := Check(c.draft, []string{c.passage})
		if r.Status != Flagged || len(r.Flags) == 0 || r.Flags[0].Text != c.flagged {
			t.Errorf("%q against %q: %s %+v, want %q flagged", c.draft, c.passage, r.Status, r.Flags, c.flagged)
		}
	}
}

func TestQuotes(t *testing.T) {
	t.Parallel()
	p := []string{"Either party may end this agreement\nwith ninety days' written notice.", "Liability is capped at the fees paid."}
	cases := []struct {
		draft  string
		status string
	}{
		{`The contract says "Either party may end this agreement with ninety days' written notice" [S1].`, Verified},
		// Quotes must be in the passage they cite.
		{`It says "Liability is capped at the fees paid" [S1].`, Flagged},
		{`It says "Liability is capped at the fees paid" [S2].`, Verified},
		// Whole words only.
		{`It says "ither party may" [S1].`, Flagged},
		// ... marks an omission; each part needs two words.
		{`It says "Either party … written notice" [S1].`, Verified},
		{`It says "Either … notice" [S1].`, Flagged},
		{`It says "written notice ... Either party" [S1].`, Flagged},
		// A quote cited right after it is looked up there.
		{`"Liability is capped" [S2], and "Either party may" [S1].`, Verified},
	}
	for _, c := range cases {
		if r := Check(c.draft, p); r.Status != c.status {
			t.Errorf("%s: %s %+v, want %s", c.draft, r.Status, r.Flags, c.status)
		}
	}
}

func TestVerdicts(t *testing.T) {
	t.Parallel()
	p := []string{"The notice period is 90 days.", "Fees are due in 30 days.", "x", "y"}
	// No citation at all is flagged, even when the facts match.
	if r := Check("The notice period is 90 days.", p); r.Status != Flagged || r.Flags[0].Kind != "no_citation" {
		t.Errorf("no citation: %+v", r)
	}
	// [S5] with four passages.
	if r := Check("The notice period is 90 days [S5].", p); r.Status != Flagged || r.Flags[0].Kind != "unknown_passage" ||
		!strings.Contains(r.Flags[0].Message, "only 4 passages were given") {
		t.Errorf("S5 of 4: %+v", r)
	}
	if r := Check("The notice period is 90 days [S2].", p[:1]); r.Status != Flagged ||
		!strings.Contains(r.Flags[0].Message, "only 1 passage was given") {
		t.Errorf("S2 of 1: %+v", r)
	}
	// Citations but no quote and no fact: nothing_checked, no unchecked list.
	r := Check("The notice period is long [S1]. Fees come later [S2].", p)
	if r.Status != NothingChecked || r.Note == "" || r.Unchecked != nil {
		t.Errorf("nothing to check: %+v", r)
	}
	// Any flag wins over nothing_checked; unchecked sentences are listed.
	r = Check("The notice period is 90 days [S1]. It is a fair rule [S1].", p)
	if r.Status != Verified || !reflect.DeepEqual(r.Unchecked, []string{"It is a fair rule [S1]."}) {
		t.Errorf("unchecked: %+v", r)
	}
	// A sentence that cites none, in a draft that cites elsewhere, is
	// checked against all passages.
	if r := Check("The notice period is 90 days [S1]. Fees are due in 30 days.", p); r.Status != Verified {
		t.Errorf("uncited sentence checked against all: %+v", r)
	}
	// The flag names the passages searched.
	r = Check("Fees are due in 13 days [S1], [S2], [S3], [S4].", p)
	if r.Status != Flagged || !strings.Contains(r.Flags[0].Message, `"13 days" not found in S1–S4`) {
		t.Errorf("flag message: %+v", r.Flags)
	}
	// A sentence that is only a citation is not listed as unchecked.
	r = Check("The notice period is 90 days. [S1]\n[S2]", p)
	if r.Status != Verified || len(r.Unchecked) != 0 {
		t.Errorf("citation-only sentence: %+v", r)
	}
}

// FuzzCheck: any draft and passage is checked without a panic, and the
// verdict is one of the three.
func FuzzCheck(f *testing.F) {
	f.Add(`It says "Either party … notice" [S1]. EUR 1.000,00 on 2026-11-04 [S2].`, "Either party may end with notice. 1000 EUR, 4 November 2026.")
	f.Add("[S1]\n\"unclosed [S9]. 7.2.1 § 4 AT-44 pacs.008.001.08", "")
	f.Fuzz(func(t *testing.T, draft, passage string) {
		r := Check(draft, []string{passage, passage})
		switch r.Status {
		case Verified, Flagged, NothingChecked:
		default:
			t.Fatalf("status %q", r.Status)
		}
		if len(r.Flags) > MaxFlags || len(r.Unchecked) > MaxUnchecked {
			t.Fatalf("%d flags, %d unchecked", len(r.Flags), len(r.Unchecked))
		}
		// Each match lies in its passage and in the draft; a quote's span
		// starts with its first part's words and ends with its last's.
		if r.Status == Verified && len(r.Matches) != r.Checked {
			t.Fatalf("verified with %d matches for %d checked", len(r.Matches), r.Checked)
		}
		for _, m := range r.Matches {
			if m.Passage != "S1" && m.Passage != "S2" || m.Start < 0 || m.Start >= m.End || m.End > len(passage) ||
				m.DraftStart < 0 || m.DraftEnd > len(draft) || m.DraftEnd-m.DraftStart != len(m.Text) {
				t.Fatalf("match %+v out of bounds", m)
			}
			if m.Kind != "quote" {
				continue
			}
			got := words(passage[m.Start:m.End])
			parts := strings.FieldsFunc(strings.ReplaceAll(m.Text, "...", "…"), func(r rune) bool { return r == '…' })
			first, last := words(parts[0]), words(parts[len(parts)-1])
			if len(got) < len(first) || !slices.Equal(got[:len(first)], first) || !slices.Equal(got[len(got)-len(last):], last) {
				t.Fatalf("quote %q matched %q", m.Text, passage[m.Start:m.End])
			}
		}
	})
}

func TestMarkQuotes(t *testing.T) {
	t.Parallel()
	p := "7.2 Either party may end this agreement\nwith ninety days' written notice. Notice is written."
	got := MarkQuotes(`It says "may end this agreement with ninety days" and "Notice is written" [S1].`, p)
	want := "7.2 Either party >>>may end this agreement\nwith ninety days<<<' written notice. >>>Notice is written<<<."
	if got != want {
		t.Errorf("MarkQuotes:\n%s\nwant\n%s", got, want)
	}
	if got := MarkQuotes("No quote here [S1].", p); got != p {
		t.Errorf("no quote: %q", got)
	}
}

// TestFactsFoundInTheEval covers what the drafts evaluation (TestEvalDrafts)
// found: a clause number's tail is no number of its own, a number word's
// scale counts, 5,000 is not five, a currency code inside an identifier
// makes no amount, and numbers next to each other (12/23/2013, 1,1999,
// 10-20) are read whole and each on its own.
func TestFactsFoundInTheEval(t *testing.T) {
	t.Parallel()
	flagged := []struct{ draft, passage, flag string }{
		{"Rec. T.6 page 2 says so [S1].", "1.1.2 Recommendation T.6 defines the coding schemes.", "2"},
		{"Hosting for five thousand websites [S1].", "within five (5) years", "five thousand"},
		{"Hosting for 5,000 websites [S1].", "within five (5) years", "5,000"},
		{"A fee of 1.000 applies [S1].", "one fee applies", "1.000"},
		{"Filed on 12/24/2013 [S1].", "10-Q, 12/23/2013", "24"},
		{"It begins on June 1,1990 [S1].", "shall begin on June 1,1999 and end", "1,1990"},
		{"Between 10 and 25 days [S1].", "between 10-20 days", "25 days"},
	}
	for _, c := range flagged {
		r := Check(c.draft, []string{c.passage})
		if r.Status != Flagged || len(r.Flags) != 1 || r.Flags[0].Text != c.flag {
			t.Errorf("%q against %q: %s %+v, want %q flagged", c.draft, c.passage, r.Status, r.Flags, c.flag)
		}
	}
	verified := []struct{ draft, passage string }{
		{"Hosting for five thousand (5,000) websites [S1].", "services for five thousand (5,000) websites"},
		{"Hosting for 5000 websites [S1].", "services for five thousand websites"},
		{"The base fee is 9.80 [S1].", "| base_fee_eur | 9.80 |"},
		{"The column base_fee_eur 9.80 is the fee [S1].", "base_fee_eur: 9.80"},
		{"It was dated 2026 [S1].", "dated 4.11.2026"},
		{"The cap is 1.250 [S1].", "a cap of 1,25"},
		{"Filed on 12/23/2013 [S1].", "10-Q, 12/23/2013"},
		{"Between 10-20 days [S1].", "between 10 and 20 days"},
		{"It begins on June 1,1999 [S1].", "shall begin on June 1,1999 and end"},
	}
	for _, c := range verified {
		if r := Check(c.draft, []string{c.passage}); r.Status != Verified {
			t.Errorf("%q against %q: %s %+v", c.draft, c.passage, r.Status, r.Flags)
		}
	}
}

// FuzzSentences: the draft splitter never panics; sentences are in order,
// within the draft, and each cites a number from 0 to 999 once (S0 as
// written: Check flags it as no passage given).
func FuzzSentences(f *testing.F) {
	f.Add("It ends [S1]. Clause 7.2 says so [S1, S2].\n\"Quoted [S3].\" [S4]")
	f.Add("[S1][S2]; [S3] next. é… [S 1] [S1000]")
	f.Fuzz(func(t *testing.T, draft string) {
		prev := 0
		for _, s := range Sentences(draft) {
			if s.Start < prev || s.End < s.Start || s.End > len(draft) {
				t.Fatalf("sentence %d..%d after %d in a draft of %d bytes", s.Start, s.End, prev, len(draft))
			}
			prev = s.End
			seen := map[int]bool{}
			for _, c := range s.Cites {
				if c < 0 || c > 999 || seen[c] {
					t.Fatalf("cites %v", s.Cites)
				}
				seen[c] = true
			}
		}
	})
}

// FuzzFacts: the fact reader never panics; facts are within the text, do
// not overlap, quote the text they cover, and have keys.
func FuzzFacts(f *testing.F) {
	f.Add("EUR 1.000,00 on 2026-11-04, thirty (30) days, 12/23/2013, 7.2 %, AT-44, § 4a, June 1,1999")
	f.Add("€5k ¥ 3 million ſeptember 4, 2026 five thousand 10-20")
	f.Fuzz(func(t *testing.T, text string) {
		facts := Facts(text)
		covered := make([]bool, len(text)+1)
		for _, fc := range facts {
			if fc.Start < 0 || fc.End > len(text) || fc.Start >= fc.End {
				t.Fatalf("fact %q at %d..%d in %d bytes", fc.Text, fc.Start, fc.End, len(text))
			}
			if text[fc.Start:fc.End] != fc.Text || len(fc.Keys) == 0 {
				t.Fatalf("fact %+v", fc)
			}
			for i := fc.Start; i < fc.End; i++ {
				if covered[i] {
					t.Fatalf("facts overlap at %d: %+v", i, facts)
				}
				covered[i] = true
			}
		}
	})
}

// TestQuotesKeepNumbersAsWritten (issue 27, item 5): a quote may differ from
// its passage in spacing, line breaks and the typographic forms of quotation
// marks, apostrophes and dashes, but not in a digit, a sign (%, €, $, £) or
// a decimal or thousands separator.
func TestQuotesKeepNumbersAsWritten(t *testing.T) {
	t.Parallel()
	p := []string{"Late payments bear interest at 4% per year.\nThe fee is EUR 1.000,00 — the Buyer's “full” fee.", "x"}
	for _, tc := range []struct {
		draft string
		want  string
	}{
		{`Payments "bear interest at 4% per year" [S1].`, Verified},
		{`Payments "bear interest at 4 per year" [S1].`, Flagged},
		{`The fee is "EUR 1.000,00" [S1].`, Verified},
		{`The fee is "EUR 1.000.00" [S1].`, Flagged},
		{`The fee is "EUR 1000,00" [S1].`, Flagged},
		{`The fee is "$ 1.000,00" [S1].`, Flagged},
		{`It is "EUR 1.000,00 - the Buyer's "full" fee" [S1].`, Verified},
		{"It says \"interest at 4%\nper year\" [S1].", Verified},
	} {
		if r := Check(tc.draft, p); r.Status != tc.want {
			t.Errorf("%q: %s (%+v), want %s", tc.draft, r.Status, r.Flags, tc.want)
		}
	}
	wl := wordsAt("EUR 1.000,00 at 4% or $5, then 7.")
	want := []string{"eur", "1", ".", "000", ",", "00", "at", "4", "%", "or", "$", "5", "then", "7"}
	if !reflect.DeepEqual(wl.w, want) {
		t.Errorf("wordsAt = %q, want %q", wl.w, want)
	}
	checkWordsAt(t, "EUR 1.000,00 at 4% or $5, then 7.")
}

// TestFactsInsideQuotes (issue 27, item 5): the numbers inside a quote are
// checked as facts too: a wrong one is named beside the quote's flag, and
// a quote that holds is listed with its facts.
func TestFactsInsideQuotes(t *testing.T) {
	t.Parallel()
	const passage = "Either party may terminate with a notice of 30 days in writing."
	r := Check(`It says "a notice of 13 days in writing" [S1].`, []string{passage})
	kinds := map[string]string{}
	for _, f := range r.Flags {
		kinds[f.Kind] = f.Text
	}
	if r.Status != Flagged || kinds["quote"] == "" || kinds["number"] != "13 days" {
		t.Errorf("a wrong number inside a quote: %s %+v", r.Status, r.Flags)
	}
	ok := Check(`It says "a notice of 30 days in writing" [S1].`, []string{passage})
	var facts []string
	for _, m := range ok.Matches {
		if m.Kind != "quote" {
			facts = append(facts, m.Text)
			if !strings.Contains(passage[m.Start:m.End], "30") {
				t.Errorf("the fact's span %d-%d is %q", m.Start, m.End, passage[m.Start:m.End])
			}
		}
	}
	if ok.Status != Verified || ok.Checked != 2 || !slices.Equal(facts, []string{"30 days"}) && !slices.Equal(facts, []string{"30"}) {
		t.Errorf("a quote that holds: %s, checked %d, facts %q", ok.Status, ok.Checked, facts)
	}
}

// TestAmountWrittenInWords: "48 euros" is the fact as the draft writes it,
// and the passage's span is all of "48 euros", not the "48 eur" that the
// code EUR would take of it.
func TestAmountWrittenInWords(t *testing.T) {
	t.Parallel()
	passage := "3.1 The daily allowance for meals abroad is 48 euros."
	r := Check("Abroad it is 48 euros a day [S1].", []string{passage})
	if r.Status != Verified || len(r.Matches) != 1 {
		t.Fatalf("%s %+v %+v", r.Status, r.Flags, r.Matches)
	}
	m := r.Matches[0]
	if m.Text != "48 euros" || passage[m.Start:m.End] != "48 euros" {
		t.Errorf("fact %q, passage span %q; want 48 euros both", m.Text, passage[m.Start:m.End])
	}
	if r := Check("It costs 48 EUR [S1].", []string{passage}); r.Status != Verified {
		t.Errorf("48 EUR against 48 euros: %s %+v", r.Status, r.Flags)
	}
}
