package structure

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

// refBrief renders a reference as `clause 7.2 "clause 7.2"` (weak ones end
// in " weak").
func refBrief(r Reference) string {
	s := fmt.Sprintf("%s %s %q", r.Kind, r.Number, r.Raw)
	if r.Weak {
		s += " weak"
	}
	return s
}

func TestParseReferences(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"What does clause 7.2 say about notice?", []string{`clause 7.2 "clause 7.2"`}},
		{"Summarise Clause 7.2.1.", []string{`clause 7.2.1 "Clause 7.2.1"`}},
		{"What is in section 4?", []string{`section 4 "section 4"`}},
		{"Does Article 12 apply?", []string{`article 12 "Article 12"`}},
		{"Does Art. 12 apply?", []string{`article 12 "Art. 12"`}},
		{"what about art 5(2)?", []string{`article 5(2) "art 5(2)"`}},
		{"Explain § 4 and §§ 5 and 6.", []string{`paragraph 4 "§ 4"`, `paragraph 5 "§§ 5"`, `paragraph 6 "6"`}},
		{"Explain §4a.", []string{`paragraph 4a "§4a"`}},
		{"What does Annex II list?", []string{`annex II "Annex II"`}},
		{"Is annex iv still valid?", []string{`annex iv "annex iv"`}},
		{"See Appendix A and Schedule 1.", []string{`appendix A "Appendix A"`, `schedule 1 "Schedule 1"`}},
		{"Quote paragraph 3.", []string{`paragraph 3 "paragraph 3"`}},
		{"What does 4.3.2 require?", []string{`clause 4.3.2 "4.3.2"`}},
		{"And 7(2)(b)?", []string{`clause 7(2)(b) "7(2)(b)"`}},
		{"Compare 7.2(a) with clause 9.", []string{`clause 7.2(a) "7.2(a)"`, `clause 9 "clause 9"`}},
		{"Is 7.2 the notice period?", []string{`clause 7.2 "7.2" weak`}},
		{"Clauses 7.2, 7.3 and 8 differ how?", []string{`clause 7.2 "Clauses 7.2"`, `clause 7.3 "7.3"`, `clause 8 "8"`}},
		{"What does Annex A.1 define?", []string{`clause A.1 "Annex A.1"`}},
		{"What does B.1.1.1 of T.81 say about parameters?", []string{`clause B.1.1.1 "B.1.1.1"`}},
		{"Compare G.1.2.2 and G.1.2.3.", []string{`clause G.1.2.2 "G.1.2.2"`, `clause G.1.2.3 "G.1.2.3"`}},
		{"Is T.81 like H.264 or ISO.9.1?", nil},
		{"Did version B.1.2 ship?", nil},
		{"Explain section A.2.3 of the standard.", []string{`section A.2.3 "section A.2.3"`}},
		// Numbers that are not references.
		{"Upgrade to Python 3.12.1 or version 1.2.3 first.", nil},
		{"Is v1.2.3 or go1.22.4 installed?", nil},
		{"We owe 1,000.00 EUR, 12.5% of 1.000.000 since 30.11.2026.", nil},
		{"The server at 192.168.10.1 is down.", []string{`clause 192.168.10.1 "192.168.10.1" weak`}},
		{"This section explains the annex and the schedule.", nil},
		{"What about the civil annex civil?", nil},
		{"Send it to appendix a person.", nil},
		{"Version 2.0 and 3.0.1 shipped.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			refs := ParseReferences(tt.q)
			var got []string
			for _, r := range refs {
				got = append(got, refBrief(r))
				if r.Start < 0 || r.End > len(tt.q) || r.Start >= r.End || tt.q[r.Start:r.End] != r.Raw {
					t.Errorf("%s: span %d-%d does not hold Raw", refBrief(r), r.Start, r.End)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("references:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseReferencesOrder(t *testing.T) {
	q := "Compare 4.3.2 with Annex II, clause 7.2 and § 4."
	var got []string
	for _, r := range ParseReferences(q) {
		got = append(got, r.Raw)
	}
	want := []string{"4.3.2", "Annex II", "clause 7.2", "§ 4"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestParseReferencesOnceEach(t *testing.T) {
	q := "Does clause 7.2 override Clause 7.2, or 4.3.2 and 4.3.2?"
	var got []string
	for _, r := range ParseReferences(q) {
		got = append(got, fmt.Sprintf("%s@%d", r.Raw, r.Start))
	}
	want := []string{fmt.Sprintf("clause 7.2@%d", strings.Index(q, "clause")), fmt.Sprintf("4.3.2@%d", strings.Index(q, "4.3.2"))}
	if !slices.Equal(got, want) {
		t.Errorf("references %q, want %q", got, want)
	}
}

func TestSectionKey(t *testing.T) {
	tests := []struct {
		s    schema.Section
		want string
	}{
		{schema.Section{Kind: schema.KindClause, Number: "7.2"}, "clause:7.2"},
		{schema.Section{Kind: schema.KindClause, Number: "7(2)(b)"}, "clause:7(2)(b)"},
		{schema.Section{Kind: schema.KindClause, Number: "A.1"}, "clause:a.1"},
		{schema.Section{Kind: schema.KindArticle, Number: "12"}, "article:12"},
		{schema.Section{Kind: schema.KindSection, Number: "4"}, "section:4"},
		{schema.Section{Kind: schema.KindPara, Number: "4a"}, "paragraph:4a"},
		{schema.Section{Kind: schema.KindAnnex, Number: "II"}, "annex:ii"},
		{schema.Section{Kind: schema.KindAppendix, Number: "A"}, "appendix:a"},
		{schema.Section{Kind: schema.KindSchedule, Number: "1"}, "schedule:1"},
		{schema.Section{Kind: schema.KindHeading, Title: "Introduction"}, ""},
	}
	for _, tt := range tests {
		if got := SectionKey(tt.s); got != tt.want {
			t.Errorf("SectionKey(%s %q) = %q, want %q", tt.s.Kind, tt.s.Number, got, tt.want)
		}
	}
}

func TestReferenceKeys(t *testing.T) {
	keys := func(q string) []string {
		refs := ParseReferences(q)
		if len(refs) != 1 {
			t.Fatalf("%q: %d references", q, len(refs))
		}
		return refs[0].Keys()
	}
	if a, b := keys("Art. 12"), keys("Article 12"); !slices.Equal(a, b) || !slices.Equal(a, []string{"article:12"}) {
		t.Errorf("Art. 12 keys %v, Article 12 keys %v", a, b)
	}
	if got := keys("clause 4"); !slices.Contains(got, "clause:4") || !slices.Contains(got, "section:4") {
		t.Errorf("clause 4 keys %v: want clause:4 and section:4", got)
	}
	if got := keys("§ 4"); !slices.Contains(got, "paragraph:4") {
		t.Errorf("§ 4 keys %v: want paragraph:4", got)
	}
	if got := keys("Annex II"); !slices.Equal(got, []string{"annex:ii"}) {
		t.Errorf("Annex II keys %v", got)
	}
	if got := keys("Annex 2"); slices.Contains(got, "annex:ii") {
		t.Errorf("Annex 2 keys %v must not match Annex II: numerals are kept as written", got)
	}
	if got := keys("Article 13(2)"); !slices.Equal(got, []string{"article:13(2)", "article:13"}) {
		t.Errorf("Article 13(2) keys %v", got)
	}
	if got := keys("clause 7 (2)(b)."); !slices.Contains(got, "clause:7(2)(b)") {
		t.Errorf("clause 7 (2)(b) keys %v: spaces are not part of the key", got)
	}
}

// TestLookupInFixtures is what the query side does: the keys of a
// question's references find the sections of the fixture documents.
func TestLookupInFixtures(t *testing.T) {
	index := map[string][]string{} // key → "file: path"
	for _, d := range goldenDocs {
		raw, err := os.ReadFile(filepath.Join("testdata", d.file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, s := range Parse(text, bodyStartOf(text), d.format) {
			if k := SectionKey(s); k != "" {
				index[k] = append(index[k], d.file+": "+s.Path)
			}
		}
	}
	lookup := func(q string) []string {
		var out []string
		for _, r := range ParseReferences(q) {
			for _, k := range r.Keys() {
				if hits := index[k]; len(hits) > 0 {
					out = append(out, hits...)
					break
				}
			}
		}
		return out
	}
	tests := []struct {
		q    string
		want []string
	}{
		{"How much notice does clause 7.2 require?", []string{"contract.txt: 7 Termination > 7.2 Notice"}},
		{"What is cacheable under 3.2.1?", []string{"rfc.txt: 3 Header Fields > 3.2 Cache-Control > 3.2.1 What is Cacheable"}},
		{"What does Art. 3 say?", []string{"regulation.txt: Article 3 Retention"}},
		{"Where are records stored under Article 4 § 1?", []string{"regulation.txt: Article 4 Storage", "regulation.txt: Article 4 Storage > § 1 Location"}},
		{"List Annex II.", []string{"regulation.txt: Annex II Transitional table"}},
		{"What is in Schedule 1?", []string{"contract.txt: Schedule 1 Services", "regulation.txt: Schedule 1 Fees"}},
		{"Which version, 9.9, do we run?", nil},
	}
	for _, tt := range tests {
		if got := lookup(tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("%q found %q, want %q", tt.q, got, tt.want)
		}
	}
}
