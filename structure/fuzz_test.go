package structure

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

var fuzzFormats = []string{schema.FormatMarkdown, schema.FormatText, schema.FormatPDF, schema.FormatImage}

// FuzzParse checks that Parse never panics and always returns a well-formed
// structure map: spans in the body and in order, Start ≤ HeadingEnd ≤ End,
// parents before and around their children.
func FuzzParse(f *testing.F) {
	for _, d := range goldenDocs {
		b, err := os.ReadFile(filepath.Join("testdata", d.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), 0, uint8(0))
	}
	f.Add("1\n\nGeneral\n\n1.1\nScope\n\fFooter 2\n\fFooter 3\n\fFooter 4\n", 0, uint8(2))
	f.Add("# A\n\n## 7 B\n\n7.1 C\n\n```\n# x\n```\nAnnex II\nX\n\nA.1 Y\n", 2, uint8(0))
	f.Add("====\nTitle\n====\n\nSub\n---\n\n7(2)(b) text\n§ 4 P\nArt. 12 Q\n", 0, uint8(1))
	f.Fuzz(func(t *testing.T, text string, bodyStart int, format uint8) {
		secs := Parse(text, bodyStart, fuzzFormats[int(format)%len(fuzzFormats)])
		if err := checkInvariants(text, bodyStart, secs); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseReferences checks that ParseReferences never panics, that each
// reference's span holds its Raw text, in order, and that keys are made.
func FuzzParseReferences(f *testing.F) {
	for _, q := range []string{
		"clause 7.2", "Art. 12 and §§ 4, 5", "Annex II or Appendix A", "4.3.2 and 7(2)(b)",
		"version 1.2.3", "1,000.00 on 30.11.2026", "clauses 7.2, 7.3 to 7.9", "§§", "Annex A.1.",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		prev := -1
		for _, r := range ParseReferences(q) {
			if r.Start < 0 || r.End > len(q) || r.Start >= r.End || q[r.Start:r.End] != r.Raw {
				t.Fatalf("reference %+v: span does not hold Raw in %q", r, q)
			}
			if r.Start < prev {
				t.Fatalf("references out of order in %q", q)
			}
			prev = r.Start
			if r.Number == "" || len(r.Keys()) == 0 {
				t.Fatalf("reference %+v has no number or no keys", r)
			}
		}
	})
}
