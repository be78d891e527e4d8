package structure

import (
	"slices"
	"strings"
	"testing"
)

// TestNumbersThatAreNotClauses is issue 12 class 5: a bare number that reads
// as a version, an amount, a quantity or a date is not a reference at all,
// so it cannot pull in a section of that number even where one exists.
func TestNumbersThatAreNotClauses(t *testing.T) {
	for _, q := range []string{
		"What changed in version 7.2?",
		"Which features did release 7.2 drop?",
		"Is v. 7.2 still supported?",
		"Does the budget of EUR 7.2 million cover hosting?",
		"What did the 7.2 billion deal include?",
		"Why did revenue grow by 7.2 %?",
		"Why did revenue grow by 7.2 percent?",
		"The parcel weighs 7.2 kg, which tariff applies?",
		"Is a delay of 7.2 days acceptable?",
		"Was it paid in (USD 7.2)?",
		"Which rules applied in 2024.03?",
		"What changed between 2023.11 and 2024.3?",
		"Does € 7.2 include VAT?",
		"How often is a bugfix release put out in the 2.3.x cycle?",
		"Was 7.2.X ever supported?",
		"Do 4.3.* builds still get patches?",
	} {
		if refs := ParseReferences(q); len(refs) > 0 {
			t.Errorf("%q: references %v, want none", q, refBriefs(refs))
		}
	}
	// The same number standing as a reference is still one.
	for q, want := range map[string]string{
		"Is 7.2 the notice period?":          `clause 7.2 "7.2" weak`,
		"What does 4.3.2 say about a kg?":    `clause 4.3.2 "4.3.2"`,
		"What does clause 7.2 say?":          `clause 7.2 "clause 7.2"`,
		"Under 7.2, who pays EUR 5 million?": `clause 7.2 "7.2" weak`,
		"Does 4.3.xyz apply?":                `clause 4.3 "4.3" weak`,
	} {
		if got := refBriefs(ParseReferences(q)); !slices.Equal(got, []string{want}) {
			t.Errorf("%q: references %v, want %s", q, got, want)
		}
	}
}

// TestReferenceForms is issue 12 class 6: a keyword before the reference
// does not hide it, and "§ 4" names only sections marked with §.
func TestReferenceForms(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"What does the termination clause Article 12 say?", []string{`article 12 "Article 12"`}},
		{"termination clause Article 12", []string{`article 12 "Article 12"`}},
		{"the section Annex II lists", []string{`annex II "Annex II"`}},
		{"Which paragraph § 4 applies?", []string{`paragraph 4 "§ 4"`}},
		{"Does the article clause 7.2 apply?", []string{`clause 7.2 "clause 7.2"`}},
		{"What do sections apply?", nil},
		{"Is the artist paid under Article 3?", []string{`article 3 "Article 3"`}},
	}
	for _, tt := range tests {
		if got := refBriefs(ParseReferences(tt.q)); !slices.Equal(got, tt.want) {
			t.Errorf("%q: references %v, want %v", tt.q, got, tt.want)
		}
	}
	for _, q := range []string{"§ 4", "§4", "§§ 4"} {
		refs := ParseReferences("What does " + q + " say?")
		if len(refs) != 1 {
			t.Fatalf("%q: %d references", q, len(refs))
		}
		if got := refs[0].Keys(); !slices.Equal(got, []string{"paragraph:4"}) {
			t.Errorf("%q keys %v, want only paragraph:4 (a section marked with §)", q, got)
		}
	}
	// The structure map records the marker: a § heading is a paragraph,
	// a numbered heading a clause, so "§ 4" finds only the first.
	text := "§ 4 Storage\n\nRecords are stored.\n"
	secs := Parse(text, 0, "text")
	if len(secs) != 1 || SectionKey(secs[0]) != "paragraph:4" {
		t.Fatalf("§ heading parsed as %+v", secs)
	}
	text = "1 Scope\n\nText.\n\n2 Terms\n\nText.\n\n3 Use\n\nText.\n\n4 Notice\n\nText.\n"
	for _, s := range Parse(text, 0, "text") {
		if k := SectionKey(s); strings.HasPrefix(k, "paragraph:") {
			t.Errorf("numbered heading %q got key %s", s.Path, k)
		}
	}
}

func refBriefs(refs []Reference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, refBrief(r))
	}
	return out
}
