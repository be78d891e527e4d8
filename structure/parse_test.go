package structure

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

// brief renders a section as "L2 clause 7.2 Notice" for table tests.
func brief(s schema.Section) string {
	out := fmt.Sprintf("L%d %s", s.Level, s.Kind)
	if s.Number != "" {
		out += " " + s.Number
	}
	if s.Title != "" {
		out += " " + s.Title
	}
	return out
}

func briefs(secs []schema.Section) []string {
	out := make([]string, len(secs))
	for i, s := range secs {
		out[i] = brief(s)
	}
	return out
}

func TestParseHeadingForms(t *testing.T) {
	tests := []struct {
		name, format, text string
		want               []string
	}{
		{
			name:   "markdown ATX headings nest by depth",
			format: schema.FormatMarkdown,
			text:   "# Guide\n\nIntro.\n\n## Install\n\nSteps.\n\n### On Linux ###\n\nMore.\n\n## Use\n",
			want:   []string{"L1 heading Guide", "L2 heading Install", "L3 heading On Linux", "L2 heading Use"},
		},
		{
			name:   "markdown heading carrying a clause number",
			format: schema.FormatMarkdown,
			text:   "## 7 Termination\n\nText.\n\n## 7.2 Notice\n\nNinety days.\n\n## 8 Payment {#pay}\n",
			want:   []string{"L1 clause 7 Termination", "L2 clause 7.2 Notice", "L1 clause 8 Payment"},
		},
		{
			name:   "markdown setext headings",
			format: schema.FormatMarkdown,
			text:   "Title\n=====\n\nIntro.\n\nPart one\n--------\n\nBody.\n",
			want:   []string{"L1 heading Title", "L2 heading Part one"},
		},
		{
			name:   "clauses under a markdown heading",
			format: schema.FormatMarkdown,
			text:   "# Agreement\n\n7 Termination\n\nEither party may end it.\n\n7.2 Notice\n\nIn writing.\n\n## Signatures\n",
			want:   []string{"L1 heading Agreement", "L2 clause 7 Termination", "L3 clause 7.2 Notice", "L2 heading Signatures"},
		},
		{
			name:   "underlined headings rank by first use",
			format: schema.FormatText,
			text:   "========\nOverview\n========\n\nAbstract\n========\n\nText.\n\nDetails\n-------\n\nMore.\n\nHistory\n========\n",
			want:   []string{"L1 heading Overview", "L2 heading Abstract", "L3 heading Details", "L2 heading History"},
		},
		{
			name:   "numbered clauses nest by numbering depth",
			format: schema.FormatText,
			text:   "1 General\n\n1.1 Scope\n\nThis text.\n\n1.1.1 Details\n\nMore.\n\n1.2 Terms\n\n2 Rules\n",
			want:   []string{"L1 clause 1 General", "L2 clause 1.1 Scope", "L3 clause 1.1.1 Details", "L2 clause 1.2 Terms", "L1 clause 2 Rules"},
		},
		{
			name:   "clause that opens with its text",
			format: schema.FormatText,
			text:   "5. Payment\n\n5.1 The Customer pays each invoice within 30 days.\n5.2 Late payments bear interest.\n",
			want:   []string{"L1 clause 5 Payment", "L2 clause 5.1", "L2 clause 5.2"},
		},
		{
			name:   "definition clause takes its term as title",
			format: schema.FormatPDF,
			text:   "3 Definitions\n\n3.1 Terms\n\n3.1.1 block: An array of samples.\n\n3.1.2 byte: A group of 8 bits.\n",
			want:   []string{"L1 clause 3 Definitions", "L2 clause 3.1 Terms", "L3 clause 3.1.1 block", "L3 clause 3.1.2 byte"},
		},
		{
			name:   "parenthesised subclauses",
			format: schema.FormatText,
			text:   "7 Termination\n\n7(1) Either party may terminate.\n\n7(2) Notice\n\n7(2)(a) In writing.\n\n7(2)(b) Ninety days ahead.\n",
			want:   []string{"L1 clause 7 Termination", "L2 clause 7(1)", "L2 clause 7(2) Notice", "L3 clause 7(2)(a)", "L3 clause 7(2)(b)"},
		},
		{
			name:   "articles, sections and paragraphs",
			format: schema.FormatText,
			text:   "Article 11\nScope\n\nText.\n\nArt. 12 Definitions\n\n§ 1 Terms\n\nText.\n\n§ 2 Dates\n\nSection 4 Penalties\n",
			want:   []string{"L1 article 11 Scope", "L1 article 12 Definitions", "L2 paragraph 1 Terms", "L2 paragraph 2 Dates", "L1 section 4 Penalties"},
		},
		{
			name:   "annex, appendix and schedule",
			format: schema.FormatText,
			text:   "1 Scope\n\nText.\n\nAnnex II – Forms\n\nText.\n\nAppendix A\nContacts\n\nSchedule 1: Fees\n",
			want:   []string{"L1 clause 1 Scope", "L1 annex II Forms", "L1 appendix A Contacts", "L1 schedule 1 Fees"},
		},
		{
			name:   "annex clauses with letters",
			format: schema.FormatPDF,
			text:   "Annex A\nDefinitions\n\nA.1 General\n\nText.\n\nA.1.1 Terms\n\nA.2 Order\n\nAnnex B\nFormats\n\nB.1 General\n",
			want:   []string{"L1 annex A Definitions", "L2 clause A.1 General", "L3 clause A.1.1 Terms", "L2 clause A.2 Order", "L1 annex B Formats", "L2 clause B.1 General"},
		},
		{
			name:   "RFC-style numbered headings",
			format: schema.FormatText,
			text:   "1.  Introduction\n\n   Text.\n\n2.  Header Fields\n\n2.1.  Age\n\n   Text.\n\n2.2.  Cache-Control\n\n   Directives.\n",
			want:   []string{"L1 clause 1 Introduction", "L1 clause 2 Header Fields", "L2 clause 2.1 Age", "L2 clause 2.2 Cache-Control"},
		},
		{
			name:   "PDF text with the number and the title on separate lines",
			format: schema.FormatPDF,
			text:   "1\n\nGeneral\n\n1.1\n\nScope\n\n1.1.1\nThis Recommendation defines the coding.\n",
			want:   []string{"L1 clause 1 General", "L2 clause 1.1 Scope", "L3 clause 1.1.1"},
		},
		{
			name:   "a long title followed by a list",
			format: schema.FormatText,
			text:   "4 Coding\n\n4.1 Processing the first and last picture elements in a line\na) the first element\n",
			want:   []string{"L1 clause 4 Coding", "L2 clause 4.1 Processing the first and last picture elements in a line"},
		},
		{
			name:   "PDF text that stacks numbers before their titles",
			format: schema.FormatPDF,
			text:   "1\n\nCoding\n\n1.1\n\nScheme\n\nText.\n1.1.1\n1.1.1.1\n\nData\nParameter K\n\nIn order to limit errors.\n",
			want:   []string{"L1 clause 1 Coding", "L2 clause 1.1 Scheme", "L3 clause 1.1.1 Data", "L4 clause 1.1.1.1 Parameter K"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs := Parse(tt.text, 0, tt.format)
			if err := checkInvariants(tt.text, 0, secs); err != nil {
				t.Error(err)
			}
			got := briefs(secs)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("sections:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseFalsePositives(t *testing.T) {
	tests := []struct {
		name, format, text string
		want               []string // the real sections among the noise
	}{
		{
			name:   "version at the start of a wrapped line",
			format: schema.FormatText,
			text:   "We upgraded the database to\n7.2 last week and nothing broke.\n\n1.2 is the version we run today.\n",
		},
		{
			name:   "amounts and dates",
			format: schema.FormatText,
			text:   "1,000.00 EUR is due on signing.\n\n2026-11-30 is the cut-off date.\n\n30.11.2026 Kick-off\n\n12.5% Discount\n",
		},
		{
			name:   "list items in prose",
			format: schema.FormatText,
			text:   "1 Shopping\n\nOn the way home:\n1. Buy milk\n2. Buy eggs\n3. Buy bread\nThat is all.\n",
			want:   []string{"L1 clause 1 Shopping"},
		},
		{
			name:   "markdown ordered list",
			format: schema.FormatMarkdown,
			text:   "# Errands\n\n1. Buy milk\n\n2. Buy eggs\n",
			want:   []string{"L1 heading Errands"},
		},
		{
			name:   "list item whose text wraps under it",
			format: schema.FormatText,
			text:   "Reasons to wait:\n\n1. Backwards compatibility, both at the Python level and\n   at the C level.\n\n2. Nobody asked.\n",
		},
		{
			name:   "table rows",
			format: schema.FormatPDF,
			text:   "1 Prices\n\nItem   Qty   Price\n2      Milk     2.00\n3      Eggs     3.50\n",
			want:   []string{"L1 clause 1 Prices"},
		},
		{
			name:   "reStructuredText table",
			format: schema.FormatText,
			text:   "Team\n====\n\n=================== ==================\nPosition            Name\n=================== ==================\n3.1 Release Manager Ana Lee\n=================== ==================\n",
			want:   []string{"L1 heading Team"},
		},
		{
			name:   "sentence wrapped onto a line starting with a number",
			format: schema.FormatText,
			text:   "1 Fees\n\nThe fee rises every year by\n2 Percent points, as agreed.\n\nThe cap is set in\nArticle 4 of the Directive.\n",
			want:   []string{"L1 clause 1 Fees"},
		},
		{
			name:   "PDF page headers, footers and page numbers",
			format: schema.FormatPDF,
			text: "1 General\n\nText.\n\nITU-T T.81 (1992 E) 23\n\n2          Fascicle VII.3 - Rec. T.6\n\n" +
				"1.1 Scope\n\nText.\n\nITU-T T.81 (1992 E) 24\n\n3          Fascicle VII.3 - Rec. T.6\n\n" +
				"Text.\n\nITU-T T.81 (1992 E) 25\n\n4          Fascicle VII.3 - Rec. T.6\n\n2\n\nTABLE 1/T.6\n",
			want: []string{"L1 clause 1 General", "L2 clause 1.1 Scope"},
		},
		{
			name:   "table of contents with dot leaders",
			format: schema.FormatPDF,
			text: "Contents\n1 Scope .............................. 1\n2 Normative references ............... 1\n" +
				"Annex A – Definitions ................ 4\n\n1 Scope\n\nText.\n\n2 Normative references\n\nText.\n",
			want: []string{"L1 clause 1 Scope", "L1 clause 2 Normative references"},
		},
		{
			name:   "table of contents without leaders",
			format: schema.FormatText,
			text:   "Contents\n\n1 Scope\n2 Terms\n3 Rules\n\nBody text follows.\n",
		},
		{
			name:   "headings inside fenced and indented code",
			format: schema.FormatMarkdown,
			text:   "# Setup\n\n```sh\n# install\nmake\n## not a heading\n```\n\n    # indented code\n\n~~~\n# tilde fence\n~~~\n",
			want:   []string{"L1 heading Setup"},
		},
		{
			name:   "numbers out of sequence",
			format: schema.FormatText,
			text:   "1 Scope\n\nText.\n\n2 Terms\n\nText.\n\n9 Planets\n\n2.7 Kilograms\n",
			want:   []string{"L1 clause 1 Scope", "L1 clause 2 Terms"},
		},
		{
			name:   "a version heading in a change log keeps no number",
			format: schema.FormatText,
			text:   "Changes\n=======\n\n1.1\n---\n\n* Fixed a bug.\n",
			want:   []string{"L1 heading Changes", "L2 heading 1.1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs := Parse(tt.text, 0, tt.format)
			if err := checkInvariants(tt.text, 0, secs); err != nil {
				t.Error(err)
			}
			got := briefs(secs)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("sections:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseSpansAndPaths(t *testing.T) {
	text := "---\ntitle: x\n---\n# 7 Termination\n\nEither party.\n\n## 7.2 Notice\n\nNinety days.\n\n# 8 Payment\n\nMonthly.\n"
	body := strings.Index(text, "# 7")
	secs := Parse(text, body, schema.FormatMarkdown)
	if len(secs) != 3 {
		t.Fatalf("got %d sections %v, want 3", len(secs), briefs(secs))
	}
	notice := secs[1]
	if notice.Path != "7 Termination > 7.2 Notice" || notice.Parent != 0 {
		t.Errorf("7.2: path %q parent %d, want \"7 Termination > 7.2 Notice\" under 0", notice.Path, notice.Parent)
	}
	if got := text[notice.Start:notice.HeadingEnd]; got != "## 7.2 Notice" {
		t.Errorf("7.2 heading span holds %q", got)
	}
	if got := text[notice.Start:notice.End]; got != "## 7.2 Notice\n\nNinety days.\n\n" {
		t.Errorf("7.2 span holds %q", got)
	}
	if secs[0].End != secs[2].Start || secs[2].End != len(text) {
		t.Errorf("7 ends at %d, 8 starts at %d and ends at %d (text %d)", secs[0].End, secs[2].Start, secs[2].End, len(text))
	}
}

func TestParseSkipsFrontMatter(t *testing.T) {
	text := "# Not a heading: front matter\n1 Scope\n\nBody starts here.\n\n# Real\n"
	body := strings.Index(text, "Body")
	secs := Parse(text, body, schema.FormatMarkdown)
	if got := briefs(secs); len(got) != 1 || got[0] != "L1 heading Real" {
		t.Errorf("sections %v, want only the heading after bodyStart", got)
	}
	// Out-of-range body starts are clamped, not a panic.
	if secs := Parse(text, len(text)+10, schema.FormatMarkdown); len(secs) != 0 {
		t.Errorf("bodyStart past the end gave %v", briefs(secs))
	}
	if secs := Parse(text, -5, schema.FormatMarkdown); len(secs) != 3 {
		t.Errorf("negative bodyStart gave %v, want the whole text parsed", briefs(secs))
	}
}

func TestParseCRLF(t *testing.T) {
	text := "1 Scope\r\n\r\nText.\r\n\r\n1.1 Terms\r\n"
	secs := Parse(text, 0, schema.FormatText)
	if got := briefs(secs); strings.Join(got, ";") != "L1 clause 1 Scope;L2 clause 1.1 Terms" {
		t.Fatalf("sections %v", got)
	}
	if h := text[secs[1].Start:secs[1].HeadingEnd]; h != "1.1 Terms" {
		t.Errorf("heading span %q keeps the carriage return", h)
	}
}

// TestParseBoundsDepthAndTitles guards against input that nests without end
// (a fuzz run hung on it: clause paths repeat every ancestor's label).
func TestParseBoundsDepthAndTitles(t *testing.T) {
	var b strings.Builder
	num := "1"
	for range 3000 {
		b.WriteString(num + " Title\n\n")
		num += ".1"
	}
	b.WriteString("# " + strings.Repeat("word ", 100000) + "\n")
	text := b.String()
	for _, format := range []string{schema.FormatText, schema.FormatMarkdown} {
		secs := Parse(text, 0, format)
		if err := checkInvariants(text, 0, secs); err != nil {
			t.Fatal(err)
		}
		for _, s := range secs {
			if s.Level > maxDepth {
				t.Fatalf("%s: section at level %d, deeper than %d", format, s.Level, maxDepth)
			}
			if len(s.Title) > maxTitle+len("…") {
				t.Fatalf("%s: title of %d bytes kept", format, len(s.Title))
			}
		}
	}
	md := Parse("# "+strings.Repeat("word ", 100)+"\n", 0, schema.FormatMarkdown)
	if len(md) != 1 || !strings.HasSuffix(md[0].Title, "word…") {
		t.Errorf("long heading title %q not cut at a word", md[0].Title)
	}
}

// TestPageNumberBetweenDashes: in PDF text a page number set between dashes
// ("– 7 –", or "–7–" where the reader found no gap) ends the page before
// it, so the numbered line after it starts a paragraph.
func TestPageNumberBetweenDashes(t *testing.T) {
	for _, footer := range []string{"– 7 –", "–7–", "- iv -", "7"} {
		text := "This page is left blank.\n\n" + footer + "\n1 Introduction\n1.1 Background\nThis part introduces the format.\n"
		var nums []string
		for _, s := range Parse(text, 0, schema.FormatPDF) {
			nums = append(nums, s.Number)
		}
		if strings.Join(nums, ",") != "1,1.1" {
			t.Errorf("footer %q: sections %q, want 1 and 1.1", footer, nums)
		}
	}
	// A line that ends without a full stop and is no page number does not
	// end a paragraph: "2 The Format" continues it.
	text := "1 Introduction\nThis part introduces the format in\n2 The Format\nIt has one element.\n"
	if n := len(Parse(text, 0, schema.FormatPDF)); n != 1 {
		t.Errorf("running text: %d sections, want 1", n)
	}
}
