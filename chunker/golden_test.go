package chunker

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/golden"
	"github.com/stratakb/stratakb/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return string(b)
}

// pdfDoc is a three-page "PDF" as the PDF parser would hand it over: the
// pages' text joined with a form feed, a span per page, and the clause
// headings a structure pass would find. Clause 2 runs from page 1 onto page
// 2, and clause 3.1 from page 2 onto page 3, so chunks must split there.
func pdfDoc() (*schema.ParsedDoc, []schema.Section) {
	pages := []string{
		"MASTER SERVICES AGREEMENT\n\n" +
			"1 Parties\n\n" +
			"This agreement is made between Harbour Analytics GmbH (the Supplier) and\n" +
			"Lindqvist Retail AB (the Customer) on 4 November 2026.\n\n" +
			"2 Services\n\n" +
			"The Supplier will operate the Customer's demand-forecasting platform as\n" +
			"described in Annex A. The service runs every day of the year; planned\n" +
			"maintenance is announced at least five (5) working days in advance and\n" +
			"takes place between 01:00 and 04:00 CET.\n",
		"The Supplier keeps the platform available for 99.5 % of each calendar\n" +
			"month, measured as set out in Annex B. Availability below that level\n" +
			"gives the Customer the service credits in clause 5.\n\n" +
			"3 Fees\n\n" +
			"3.1 Monthly fee\n\n" +
			"The Customer pays a monthly fee of EUR 12.400,00, invoiced on the first\n" +
			"working day of each month and payable within 30 days of the invoice date.\n" +
			"Fees are adjusted each January by the change in the euro area HICP over\n" +
			"the previous twelve months, capped at 4 %.\n",
		"Late payments carry interest at the statutory rate. The Supplier may\n" +
			"suspend the service only after a written reminder and a further 14 days.\n\n" +
			"3.2 Expenses\n\n" +
			"Travel expenses are reimbursed at cost when the Customer asked for the\n" +
			"visit in writing.\n\n" +
			"- page 3 of 3 -\n",
	}
	text := strings.Join(pages, "\f")
	doc := &schema.ParsedDoc{Text: text, Format: schema.FormatPDF, Title: "Master Services Agreement"}
	off := 0
	for i, p := range pages {
		doc.Pages = append(doc.Pages, schema.Page{Number: i + 1, Start: off, End: off + len(p), TextOrigin: schema.OriginText})
		off += len(p) + 1
	}
	sec := func(number, title string, parent int) schema.Section {
		head := number + " " + title
		start := strings.Index(text, "\n"+head+"\n") + 1
		s := schema.Section{Number: number, Title: title, Kind: schema.KindClause, Level: 1, Start: start, HeadingEnd: start + len(head), End: len(text), Parent: parent}
		s.Path = s.Label()
		return s
	}
	secs := []schema.Section{sec("1", "Parties", -1), sec("2", "Services", -1), sec("3", "Fees", -1), sec("3.1", "Monthly fee", 2), sec("3.2", "Expenses", 2)}
	secs[0].End, secs[1].End = secs[1].Start, secs[2].Start
	secs[3].End = secs[4].Start
	for _, i := range []int{3, 4} {
		secs[i].Level = 2
		secs[i].Path = secs[2].Path + " > " + secs[i].Label()
	}
	return doc, secs
}

// goldenCases are the fixture documents whose chunks are kept as golden
// files: a Markdown policy with front matter and numbered sections, a long
// plain-text handbook without sections, and a three-page PDF.
func goldenCases(t testing.TB) []struct {
	name string
	doc  *schema.ParsedDoc
	secs []schema.Section
	size int
} {
	policy := readFixture(t, "policy.md")
	handbook := readFixture(t, "handbook.txt")
	pdf, pdfSecs := pdfDoc()
	return []struct {
		name string
		doc  *schema.ParsedDoc
		secs []schema.Section
		size int
	}{
		{"policy", &schema.ParsedDoc{Text: policy, BodyStart: bodyStart(policy), Format: schema.FormatMarkdown}, testSections(policy, bodyStart(policy)), 0},
		{"handbook", &schema.ParsedDoc{Text: handbook, Format: schema.FormatText}, nil, 0},
		{"handbook-400", &schema.ParsedDoc{Text: handbook, Format: schema.FormatText}, nil, 400},
		{"pdf", pdf, pdfSecs, 300},
	}
}

// render writes chunks in a form meant to be read in a diff.
func render(chunks []schema.Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "=== chunk %d [%d,%d) %d bytes, lines %d-%d, page %d, path %q\n", c.Ordinal, c.Start, c.End, len(c.Text), c.LineStart, c.LineEnd, c.Page, c.ClausePath)
		b.WriteString(strings.ReplaceAll(c.Text, "\f", "<FF>"))
		b.WriteString("\n")
	}
	return b.String()
}

// TestGolden compares the chunks of the fixture documents with the files
// under testdata/golden; go test ./chunker -update rewrites them.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Chunk(tc.doc, tc.secs, Options{Size: tc.size})
			checkInvariants(t, tc.name, tc.doc, tc.secs, tc.size, chunks)
			got := render(chunks)
			path := filepath.Join("testdata", "golden", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatalf("write golden: %v", err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run go test ./chunker -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("chunks of %s differ from %s (go test ./chunker -update rewrites it after a deliberate change; bump Version too):\n%s", tc.name, path, golden.Diff(string(want), got))
			}
		})
	}
}
