package chunker

import (
	"reflect"
	"strings"
	"testing"
)

// units renders Sentences' output as strings, headings prefixed with "H: ".
func units(text string) []string {
	var out []string
	for _, s := range Sentences(text, 0, len(text)) {
		u := text[s.Start:s.End]
		if s.Heading {
			u = "H: " + u
		}
		out = append(out, u)
	}
	return out
}

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"plain", "One sentence. Another one! A third? Done.",
			[]string{"One sentence.", "Another one!", "A third?", "Done."}},
		{"trimmed", "  \n  Leading and trailing space.  \n\n",
			[]string{"Leading and trailing space."}},
		{"abbreviations", "Use a tool, e.g. a wrench, i.e. the small one. Ask Mr. Smith and Dr. Jones. St. Albans is near vs. far. See cf. above.",
			[]string{"Use a tool, e.g. a wrench, i.e. the small one.", "Ask Mr. Smith and Dr. Jones.", "St. Albans is near vs. far.", "See cf. above."}},
		{"abbreviations before numbers", "See Art. 12 and Sec. 4. Fig. 3 shows it. Invoice No. 5 and Nr. 7 are due. I said no. Then I left.",
			[]string{"See Art. 12 and Sec. 4.", "Fig. 3 shows it.", "Invoice No. 5 and Nr. 7 are due.", "I said no.", "Then I left."}},
		{"etc", "Bring pens, paper, etc. and a bag. Also apples, pears, etc. The rest is free.",
			[]string{"Bring pens, paper, etc. and a bag.", "Also apples, pears, etc.", "The rest is free."}},
		{"numbers and versions", "Clause 7.2 applies to v1.2 of the tool. The fee is EUR 1.000,00. It rose 3.5 % in 2026.",
			[]string{"Clause 7.2 applies to v1.2 of the tool.", "The fee is EUR 1.000,00.", "It rose 3.5 % in 2026."}},
		{"clause number opening a sentence", "7.2. Either party may end it. 12. The next one.",
			[]string{"7.2. Either party may end it.", "12. The next one."}},
		{"an agreement's inline clause title", "10.1 Term and Termination. This Agreement runs for a year. 10.2 Effect of Termination. Fees stay due.",
			[]string{"H: 10.1 Term and Termination.", "This Agreement runs for a year.", "H: 10.2 Effect of Termination.", "Fees stay due."}},
		{"a numbered sentence is no title", "3. Fees are due monthly. 4. Payment Is Late. It costs more.",
			[]string{"3. Fees are due monthly.", "4. Payment Is Late.", "It costs more."}},
		{"initials", "J. R. R. Tolkien wrote it. A. Smith agreed.",
			[]string{"J. R. R. Tolkien wrote it.", "A. Smith agreed."}},
		{"lower-case word after the mark", "The value is approx. ten. Call us at 9 a.m. tomorrow. Yahoo! is a name.",
			[]string{"The value is approx. ten.", "Call us at 9 a.m. tomorrow.", "Yahoo! is a name."}},
		{"wrapped line", "7.2 Either party may end this agreement\nwith ninety days' written notice. Notice is given\nin writing.",
			[]string{"7.2 Either party may end this agreement\nwith ninety days' written notice.", "Notice is given\nin writing."}},
		{"closing quote and bracket", "He said \"Stop!\" Then he left. (See the annex.) It ends here.' Really?' Yes.",
			[]string{"He said \"Stop!\"", "Then he left.", "(See the annex.)", "It ends here.'", "Really?'", "Yes."}},
		{"curly quotes", "She wrote “Done.” Then nothing.",
			[]string{"She wrote “Done.”", "Then nothing."}},
		{"ellipsis", "Wait... then go. Wait... Then stop.",
			[]string{"Wait... then go.", "Wait...", "Then stop."}},
		{"blank line ends a sentence", "No end mark here\n\nNext paragraph.",
			[]string{"H: No end mark here", "Next paragraph."}},
		{"blank line ends a long unterminated sentence", "no end mark in this\nwrapped text\n\nnext paragraph",
			[]string{"no end mark in this\nwrapped text", "next paragraph"}},
		{"markdown headings", "# Title\n\nText here.\n## Sub heading\nMore text.",
			[]string{"H: # Title", "Text here.", "H: ## Sub heading", "More text."}},
		{"hash without space is no heading", "#hashtag and more.",
			[]string{"#hashtag and more."}},
		{"underlined heading", "Introduction\n============\n\nBody text.\n\nSub part\n--------\nMore.",
			[]string{"H: Introduction\n============", "Body text.", "H: Sub part\n--------", "More."}},
		{"over and underlined heading", "=======\nAbstract\n=======\n\nText.",
			[]string{"H: =======\nAbstract\n=======", "Text."}},
		{"numbered clause heading", "7 Termination\n7.1 Either party may terminate on notice.\n\n7.2 Notice\n\nNotice must be written.",
			[]string{"H: 7 Termination", "7.1 Either party may terminate on notice.", "H: 7.2 Notice", "Notice must be written."}},
		{"article and annex headings", "Article 12\nThe seller shall deliver.\n\nAnnex II\n\nList of goods.",
			[]string{"H: Article 12", "The seller shall deliver.", "H: Annex II", "List of goods."}},
		{"numbered line that continues is no heading", "7.2 Either party may end this\nagreement at will.",
			[]string{"7.2 Either party may end this\nagreement at will."}},
		{"title line", "Before the visit\n\nRead the ticket.",
			[]string{"H: Before the visit", "Read the ticket."}},
		{"price list runs together", "Widget 12,00 EUR\nGadget 15,50 EUR\nGizmo 3,10 EUR\n\nPrices exclude VAT.",
			[]string{"Widget 12,00 EUR\nGadget 15,50 EUR\nGizmo 3,10 EUR", "Prices exclude VAT."}},
		{"log runs together until a heading", "2026-01-14 06:12 alarm on\n2026-01-14 06:15 alarm off\n# Next\nText.",
			[]string{"2026-01-14 06:12 alarm on\n2026-01-14 06:15 alarm off", "H: # Next", "Text."}},
		{"yaml runs together", "server:\n  port: 8080\n  host: example.com\nlimits:\n  rps: 10",
			[]string{"server:\n  port: 8080\n  host: example.com\nlimits:\n  rps: 10"}},
		{"list items start sentences", "You need:\n- a ladder\n- a rope that is\n  long enough\n1. first step\n2) second step\n(a) option a\nb) option b",
			[]string{"You need:", "- a ladder", "- a rope that is\n  long enough", "1. first step", "2) second step", "(a) option a", "b) option b"}},
		{"list of numbered lines is no heading", "1. Milk\n2. Eggs",
			[]string{"1. Milk", "2. Eggs"}},
		{"list item with sentences", "- First point. Second point.\n- Third",
			[]string{"- First point.", "Second point.", "- Third"}},
		{"separator lines are left out", "Text one.\n\n---\n\nText two.\n```go\ncode()\n```",
			[]string{"Text one.", "Text two.", "code()"}},
		{"full-width marks", "これはペンです。それは本です。",
			[]string{"これはペンです。", "それは本です。"}},
		{"empty", "", nil},
		{"whitespace only", " \n\t\n  ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := units(tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Sentences(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
			if err := spansErr(tc.text, 0, len(tc.text), Sentences(tc.text, 0, len(tc.text))); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSentencesRange checks that a range gives spans inside it and that a
// range from a paragraph start gives the same spans as the whole text.
func TestSentencesRange(t *testing.T) {
	text := "Intro line one.\n\nFirst sentence here. Second one\nwraps. Third.\n\nLast one."
	start := strings.Index(text, "First")
	end := strings.Index(text, "\n\nLast")
	got := Sentences(text, start, end)
	var whole []Span
	for _, s := range Sentences(text, 0, len(text)) {
		if s.Start >= start && s.End <= end {
			whole = append(whole, s)
		}
	}
	if !reflect.DeepEqual(got, whole) || len(got) != 3 {
		t.Errorf("range gives %v, whole text gives %v", got, whole)
	}
	if s := Sentences(text, -5, len(text)+5); len(s) != 5 {
		t.Errorf("out-of-range bounds should be clamped, got %d spans", len(s))
	}
	if s := Sentences(text, 10, 3); len(s) != 0 {
		t.Errorf("end before start should give nothing, got %v", s)
	}
}

func TestSentenceAt(t *testing.T) {
	text := "# Notice\n\n7.2 Either party may end this agreement\nwith ninety days' written notice. Notice is given in writing.\n\nLast."
	tests := []struct {
		at      string // the offset is the index of this substring
		want    string
		heading bool
	}{
		{"ninety", "7.2 Either party may end this agreement\nwith ninety days' written notice.", false},
		{"7.2", "7.2 Either party may end this agreement\nwith ninety days' written notice.", false},
		{" Notice is", "Notice is given in writing.", false}, // whitespace between: the next one
		{"Notice\n", "# Notice", true},
		{"Last", "Last.", false},
	}
	for _, tc := range tests {
		off := strings.Index(text, tc.at)
		s := SentenceAt(text, off)
		if got := text[s.Start:s.End]; got != tc.want || s.Heading != tc.heading {
			t.Errorf("SentenceAt(%d) = %q heading %v, want %q heading %v", off, got, s.Heading, tc.want, tc.heading)
		}
	}
	if s := SentenceAt(text, len(text)); s.Start != len(text) || s.End != len(text) {
		t.Errorf("SentenceAt(end) = %v, want an empty span at the end", s)
	}
}

func TestTouching(t *testing.T) {
	text := "Intro.\n\nFirst sentence here. Second sentence\nwraps onto a line. Third one.\n\nOther paragraph."
	// A passage starting inside "First" and stopping inside "Second".
	start := strings.Index(text, "sentence here")
	end := strings.Index(text, "wraps")
	var got []string
	for _, s := range Touching(text, start, end) {
		got = append(got, text[s.Start:s.End])
	}
	want := []string{"First sentence here.", "Second sentence\nwraps onto a line."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Touching = %q, want %q", got, want)
	}
}
