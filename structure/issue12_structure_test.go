package structure

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

func keysOf(secs []schema.Section) []string {
	var out []string
	for _, s := range secs {
		out = append(out, SectionKey(s))
	}
	return out
}

// TestContentsDoNotBlockHeadings is issue 12 class 9: the entries of a table
// of contents are not clauses, so the real numbered headings after it keep
// their numbers.
func TestContentsDoNotBlockHeadings(t *testing.T) {
	body := "1 Introduction\n\nThis specification describes the messages.\n\n1.1 Purpose\n\nThe purpose is exchange.\n\n" +
		"1.2 Audience\n\nEngineers.\n\n2 Messages\n\n2.1 Status\n\nA status message reports the state.\n"
	want := []string{"clause:1", "clause:1.1", "clause:1.2", "clause:2", "clause:2.1"}
	for name, toc := range map[string]string{
		"page numbers": "1 Introduction 3\n1.1 Purpose 3\n1.2 Audience 4\n2 Messages 5\n2.1 Status 6\n",
		"dot leaders":  "1 Introduction ........ 3\n1.1 Purpose ........ 3\n1.2 Audience ....... 4\n2 Messages ........ 5\n2.1 Status ....... 6\n",
		"spaced":       "1 Introduction 3\n\n1.1 Purpose 3\n\n1.2 Audience 4\n\n2 Messages 5\n\n2.1 Status 6\n",
	} {
		text := "Interface Specification\n\nContents\n\n" + toc + "\n" + body
		secs := Parse(text, 0, schema.FormatText)
		if got := keysOf(secs); !slices.Equal(got, want) {
			t.Errorf("%s: keys %v, want %v", name, got, want)
			continue
		}
		if secs[0].Start != strings.Index(text, body) || secs[0].Title != "Introduction" {
			t.Errorf("%s: clause 1 is %q at %d, want the heading after the contents", name, secs[0].Title, secs[0].Start)
		}
	}
	// Contents in a Markdown spec of 69 numbered headings: every heading
	// keeps its key.
	var toc, doc strings.Builder
	n := 0
	for c := 1; c <= 23; c++ {
		fmt.Fprintf(&toc, "%d Chapter %d ........ %d\n", c, c, c*3)
		fmt.Fprintf(&doc, "## %d Chapter %d\n\nText of chapter %d.\n\n", c, c, c)
		n++
		for sub := 1; sub <= 2; sub++ {
			fmt.Fprintf(&toc, "%d.%d Part %d ........ %d\n", c, sub, sub, c*3+sub)
			fmt.Fprintf(&doc, "### %d.%d Part %d\n\nText of part %d.%d.\n\n", c, sub, sub, c, sub)
			n++
		}
	}
	text := "# Spec\n\n## Contents\n\n" + toc.String() + "\n" + doc.String()
	keyed := 0
	for _, s := range Parse(text, 0, schema.FormatMarkdown) {
		if SectionKey(s) != "" {
			keyed++
		}
	}
	if n != 69 || keyed != 69 {
		t.Errorf("Markdown spec with contents: %d of %d headings keyed", keyed, n)
	}
}

// TestMarkdownHeadingsAreSections is issue 12 class 9: a numbered Markdown
// heading is a section with its number whatever the sequence, and its
// marker sets its level.
func TestMarkdownHeadingsAreSections(t *testing.T) {
	text := "# Spec\n\n## 3 Messages\n\n### 3.4 Status message\n\nText.\n\n## 7 Errors\n\nText.\n\n## 5 Codes\n\nText.\n\n" +
		"#### 9 Deep\n\nText.\n\n## 9.2 Shallow\n\nText.\n"
	secs := Parse(text, 0, schema.FormatMarkdown)
	var got []string
	for _, s := range secs {
		got = append(got, fmt.Sprintf("L%d %s %s", s.Level, SectionKey(s), s.Path))
	}
	want := []string{
		"L1  Spec",
		"L2 clause:3 Spec > 3 Messages",
		"L3 clause:3.4 Spec > 3 Messages > 3.4 Status message",
		"L2 clause:7 Spec > 7 Errors",
		"L2 clause:5 Spec > 5 Codes",
		"L3 clause:9 Spec > 5 Codes > 9 Deep",
		"L2 clause:9.2 Spec > 9.2 Shallow",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnchorsNotInPaths is issue 12 class 9: HTML anchors in headings do
// not end up in titles or clause paths.
func TestAnchorsNotInPaths(t *testing.T) {
	text := "# <a name=\"top\"></a>Spec\n\n## <a name=\"intro\"></a>1 Introduction\n\nText.\n\n" +
		"## <a id='scope'/> 2 Scope\n\nText.\n\n### 2.1 Purpose <A NAME=purpose></A>\n\nText.\n\nOverview <a id=\"ov\"></a>\n--------\n\nText.\n"
	var got []string
	for _, s := range Parse(text, 0, schema.FormatMarkdown) {
		got = append(got, SectionKey(s)+" "+s.Path)
	}
	want := []string{" Spec", "clause:1 Spec > 1 Introduction", "clause:2 Spec > 2 Scope",
		"clause:2.1 Spec > 2 Scope > 2.1 Purpose", " Spec > Overview"}
	if !slices.Equal(got, want) {
		t.Errorf("sections:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAgreementInlineTitles is issue 12 class 9 for agreements: a clause
// written as a numbered paragraph whose title ends with a period and runs
// on into the clause's text ("1. Term. This Agreement…") is a section with
// that title, also when the paragraphs follow one another like list items,
// and the title is the heading (the clause's text is not). Most of the
// CUAD contracts are written so and had no structure map at all.
func TestAgreementInlineTitles(t *testing.T) {
	text := "HOSTING SERVICES AGREEMENT\n\n" +
		"This Agreement is made between Northwind Hosting Ltd. (\"Provider\") and Contoso Retail Inc. (\"Customer\").\n\n" +
		"1. Services. Provider will host the Customer's shop and keep it available.\n\n" +
		"2. Provision of Services. eGrid, the Provider's platform, runs the shop.\n\n" +
		"2.1 Support. Provider answers support requests within one business day.\n\n" +
		"3. Limited Warranties; Disclaimer of Warranties.\n\n" +
		"3.1 Provider warrants that the services will be performed with care.\n\n" +
		"4. LIMITATION OF LIABILITY. NEITHER PARTY SHALL BE LIABLE FOR INDIRECT DAMAGES.\n\n" +
		"5. Term and Termination. This Agreement runs for one year and renews automatically.\n"
	secs := Parse(text, 0, schema.FormatText)
	want := []string{"1 Services", "2 Provision of Services", "2 Provision of Services > 2.1 Support",
		"3 Limited Warranties; Disclaimer of Warranties", "3 Limited Warranties; Disclaimer of Warranties > 3.1",
		"4 LIMITATION OF LIABILITY", "5 Term and Termination"}
	var got []string
	for _, s := range secs {
		got = append(got, s.Path)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The heading ends at the title's period: the clause's text is body.
	if s := secs[0]; text[s.Start:s.HeadingEnd] != "1. Services." {
		t.Errorf("clause 1's heading is %q, want %q", text[s.Start:s.HeadingEnd], "1. Services.")
	}
	if s := secs[len(secs)-1]; !strings.HasSuffix(text[s.Start:s.End], "renews automatically.\n") {
		t.Errorf("clause 5 does not run to the end: %q", text[s.Start:s.End])
	}

	// Text extraction that runs the clauses onto one line: each starts a
	// clause where a sentence ended and three spaces or more follow.
	runOn := "9. Miscellaneous.   9.1. Assignment. Developer may not assign this Agreement.   " +
		"9.2. Remedies Cumulative; Waiver. The rights are cumulative.   9.3. Severability. A void term is cut out.\n"
	got = textPaths(runOn)
	wantRunOn := []string{"9 Miscellaneous", "9 Miscellaneous > 9.1 Assignment", "9 Miscellaneous > 9.2 Remedies Cumulative; Waiver",
		"9 Miscellaneous > 9.3 Severability"}
	if !slices.Equal(got, wantRunOn) {
		t.Errorf("run-on clauses: paths %q, want %q", got, wantRunOn)
	}
	// A filing that indents every paragraph: its margin is where the
	// clauses start.
	indented := "         ENDORSEMENT AGREEMENT\n\n         1. Term. The term is two years.\n\n" +
		"         2. Fees. The fee is due monthly.\n         It is paid in advance.\n\n         3. Notices. Notices are written.\n"
	got = textPaths(indented)
	if want := []string{"1 Term", "2 Fees", "3 Notices"}; !slices.Equal(got, want) {
		t.Errorf("indented filing: paths %q, want %q", got, want)
	}
	// The margin is read from the paragraphs: page numbers standing alone
	// and list items, indented their own way, do not count, and a third of
	// the paragraphs sharing an indentation is enough.
	paged := "         AGENCY AGREEMENT\n\n         Section 1. The Offering. The Company offers shares.\n\n" +
		"          (a)  A management fee of $25,000.\n\n          (b)  A success fee.\n\n                    3\n\n" +
		"               who assist in the offering.\n\n               The Agent is reimbursed.\n\n" +
		"                    4\n\n         Section 2. Retention of Agent. The Company retains the Agent.\n\n" +
		"          (c)  Expenses are borne by the Company.\n\n                    5\n\n" +
		"         Section 3. Prospectus. The Shares are offered.\n"
	// List items' continuations, indented further, as many as the body's
	// paragraphs: the margin is the smaller indentation.
	hanging := "         Section 1. The Offering. The Company offers shares.\n\n" +
		"               who assist in the offering.\n\n               the Agent is reimbursed.\n\n" +
		"         Section 2. Retention of Agent. The Company retains the Agent.\n\n" +
		"               expenses are borne by the Company.\n\n               and by the Bank.\n\n" +
		"         Section 3. Prospectus. The Shares are offered.\n"
	for name, text := range map[string]string{"page numbers and list items": paged, "hanging continuations": hanging} {
		if got, want := textPaths(text), []string{"Section 1 The Offering", "Section 2 Retention of Agent", "Section 3 Prospectus"}; !slices.Equal(got, want) {
			t.Errorf("indented filing with %s: paths %q, want %q", name, got, want)
		}
	}
	// A table's figures after wide gaps are not clauses.
	table := "Fees due.   1.5 Million Units. Shipped in March.   2.5 Million Units. Shipped in May.\n"
	if secs := Parse("1. Prices. The prices are below.\n\n"+table, 0, schema.FormatText); len(secs) != 1 {
		t.Errorf("a table run-on line gave %d sections, want only clause 1", len(secs))
	}

	// Numbered paragraphs that are not titled clauses stay running text.
	for name, body := range map[string]string{
		"list items":    "1. Buy milk. Then go home.\n2. Call the bank. It closes at five.\n3. Pay the rent. Do it today.\n",
		"sentences":     "1. The fee is due monthly. It is paid in advance.\n\n2. The term is one year. It renews.\n",
		"abbreviations": "1. Mr. Smith signs for the Provider.\n\n2. Dr. Jones signs for the Customer.\n",
		"verbs":         "1. Payment Is Due. The Customer pays.\n\n2. Notice Must Be Written. Email counts.\n",
		"contents":      "1. Services. 1\n2. Fees. 2\n3. Term. 3\n",
	} {
		if secs := Parse(body, 0, schema.FormatText); len(secs) != 0 {
			var got []string
			for _, s := range secs {
				got = append(got, s.Path)
			}
			t.Errorf("%s: want no sections, got %q", name, got)
		}
	}
}

func TestInlineTitle(t *testing.T) {
	for rest, want := range map[string]string{
		"Hosting Agreement. This Agreement is entered into": "Hosting Agreement",
		"Indemnification. Subject to the limits":            "Indemnification",
		"Limited Warranties; Disclaimer of Warranties.":     "Limited Warranties; Disclaimer of Warranties",
		"Provision of Services. eGain will provide access":  "Provision of Services",
		"Term. (a) The term is one year":                    "Term",
		"GOVERNING LAW. THIS AGREEMENT IS GOVERNED":         "GOVERNING LAW",
		"The fee is due. It is paid":                        "",
		"Buy milk. Then go home":                            "",
		"Mr. Smith signs":                                   "",
		"Notices. notices are written":                      "",
		"TERM 2.1 Grant. The licence":                       "",
		"Payment Is Due. The Customer pays":                 "",
		"Services":                                          "",
		"Terms\ne.g.":                                       "",
		"Mr.1.":                                             "",
		"Early Termination.   2.2.1. Either party may":      "Early Termination",
		"Data & Inventions.   7.1 Each party owns":          "Data & Inventions",
		"Payment Terms. 7 days later":                       "",
	} {
		if got := InlineTitle(rest); got != want {
			t.Errorf("InlineTitle(%q) = %q, want %q", rest, got, want)
		}
	}
}

// Plain-text agreements that number their articles in roman numerals and
// centre the headings, with the title on a line of its own and the
// article's clauses opening with their text.
func TestRomanArticles(t *testing.T) {
	centred := "                 PIPELINE SERVICE AGREEMENT\n\n" +
		"         The parties agree as follows:\n\n" +
		"                              ARTICLE I\n\n" +
		"                             DEFINITIONS\n\n" +
		"         1.1      \"Day\" means a period of twenty-four hours beginning at nine.\n\n" +
		"         1.2      \"Quantity\" means the gas delivered on a Day.\n\n" +
		"                              ARTICLE II\n\n" +
		"                          TERM OF AGREEMENT\n\n" +
		"         2.1      This Agreement runs for ten years from the first delivery.\n\n" +
		"         2.2      Either party may end it on one year's notice.\n"
	want := []string{"Article I DEFINITIONS", "Article I DEFINITIONS > 1.1", "Article I DEFINITIONS > 1.2",
		"Article II TERM OF AGREEMENT", "Article II TERM OF AGREEMENT > 2.1", "Article II TERM OF AGREEMENT > 2.2"}
	if got := textPaths(centred); !slices.Equal(got, want) {
		t.Errorf("centred articles:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Articles run on after the sentence before them, one space apart.
	runOn := "The parties agree as follows: ARTICLE I. SCOPE OF SERVICES. A. The Provider hosts the shop. " +
		"ARTICLE II. PERIOD OF PERFORMANCE. This Agreement runs for one year. ARTICLE III. FEES. The fee is monthly.\n"
	want = []string{"Article I SCOPE OF SERVICES", "Article II PERIOD OF PERFORMANCE", "Article III FEES"}
	if got := textPaths(runOn); !slices.Equal(got, want) {
		t.Errorf("run-on articles: paths %q, want %q", got, want)
	}

	// A title with its underline run onto the same line.
	underlined := "1.      Description of the Promotion         ------------------------\n\n" +
		"        The Provider offers free pagers to new customers.\n\n" +
		"2.      Term         ----\n\n" +
		"        The promotion runs for six months.\n"
	if got, want := textPaths(underlined), []string{"1 Description of the Promotion", "2 Term"}; !slices.Equal(got, want) {
		t.Errorf("underlined titles: paths %q, want %q", got, want)
	}

	// Not articles: a roman numeral past the usual range, one not written
	// the usual way, a letter, a keyword in running text, an article named
	// in lower case inside a sentence.
	for name, body := range map[string]string{
		"too large":   "Intro.\n\nARTICLE C\n\nFEES\n\nThe fee is monthly.\n",
		"irregular":   "Intro.\n\nARTICLE IIII\n\nFEES\n\nThe fee is monthly.\n",
		"running":     "Intro.\n\n        ARTICLE II of the Lease governs the deposit, which is paid monthly.\n",
		"lower case":  "The fee is set out in the schedule. article II. FEES. The fee is monthly.\n",
		"not capital": "The fee is set out below. ARTICLE II. Fees. The fee is monthly.\n",
	} {
		if got := textPaths(body); len(got) != 0 {
			t.Errorf("%s: want no sections, got %q", name, got)
		}
	}
}

// "Article II" and "Article 2" name the same article, whichever way the
// document numbers it; "the article I read" names none.
func TestRomanArticleReferences(t *testing.T) {
	doc := Parse("Intro.\n\nARTICLE II\n\nFEES\n\nThe fee is monthly.\n", 0, schema.FormatText)
	if len(doc) != 1 {
		t.Fatalf("want one section, got %d", len(doc))
	}
	key := SectionKey(doc[0])
	for q, want := range map[string]bool{
		"What does Article II say?":   true,
		"What does Article 2 say?":    true,
		"What does ARTICLE II say?":   true,
		"What does Article III say?":  false,
		"Is the article I read true?": false,
	} {
		found := false
		for _, r := range ParseReferences(q) {
			if slices.Contains(r.Keys(), key) {
				found = true
			}
		}
		if found != want {
			t.Errorf("%q finds %s: %v, want %v (refs %+v)", q, key, found, want, ParseReferences(q))
		}
	}
	if refs := ParseReferences("the article I read"); len(refs) != 0 {
		t.Errorf("the article I read: want no reference, got %+v", refs)
	}
	if got := SectionKey(schema.Section{Kind: schema.KindArticle, Number: "IV"}); got != "article:4" {
		t.Errorf("SectionKey(Article IV) = %q, want article:4", got)
	}
	// Annexes keep their roman numerals as written: Annex II is not Annex 2.
	if got := SectionKey(schema.Section{Kind: schema.KindAnnex, Number: "II"}); got != "annex:ii" {
		t.Errorf("SectionKey(Annex II) = %q, want annex:ii", got)
	}
}

// textPaths is the clause paths Parse gives text read as plain text.
func textPaths(text string) []string {
	var got []string
	for _, s := range Parse(text, 0, schema.FormatText) {
		got = append(got, s.Path)
	}
	return got
}

// TestHeadingThenSubclause is issue 12 class 9 for filed agreements whose
// text runs the clauses onto one long line: a heading's title followed at
// once by its first subclause ("2. Term and Termination.   2.1. Term.")
// is a heading, and so is one that a page break indented
// ("    3. Proprietary Rights.   3.1. Subject to…"), so a subclause's
// text is not cited under the clause before it.
func TestHeadingThenSubclause(t *testing.T) {
	text := "DEVELOPMENT AGREEMENT   This Agreement is made between Initech Corp and HotWidget Ltd.   " +
		"1. Fees.   1.1. Payment. Initech pays the fee monthly.   " +
		"2. Term and Termination.   2.1. Term. The term is one year.   2.2. Early Termination.   " +
		"2.2.1. Either party may terminate on thirty days' notice.     1\n\n" +
		"Source: INITECH CORP, 10-K, 12/23/2019\n\n\n\n" +
		"    3. Proprietary Rights.   3.1. Subject to the licence, HotWidget owns the improvements.\n"
	var got []string
	for _, s := range Parse(text, 0, schema.FormatText) {
		got = append(got, s.Path)
	}
	want := []string{"1 Fees", "1 Fees > 1.1 Payment", "2 Term and Termination", "2 Term and Termination > 2.1 Term",
		"2 Term and Termination > 2.2 Early Termination", "3 Proprietary Rights"}
	if !slices.Equal(got, want) {
		t.Fatalf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Running text indented as far is still not a heading.
	if secs := Parse("Intro line.\n\n    4. Then we buy milk and go home.\n", 0, schema.FormatText); len(secs) != 0 {
		t.Errorf("running text read as a heading: %+v", secs)
	}
}

// TestFilingPageFooters is issue 12 class 9 for plain-text filings that
// kept each page's number and "Source: …" footer as lines of their own:
// the footer is no clause title, so the page numbers above it make no
// sections, and the clauses numbered after them are still read.
func TestFilingPageFooters(t *testing.T) {
	footer := "\n\n%d\n\nSource: ACME HOLDINGS, INC., 8-K, 6/17/2019\n\n\n\n"
	// The cover page comes first, so each page number runs one ahead of
	// the clause above it.
	text := "ENDORSEMENT AGREEMENT\n\nBetween Acme Holdings and the Talent." + fmt.Sprintf(footer, 1) +
		"1. Services. Talent appears in two campaigns a year." + fmt.Sprintf(footer, 2) +
		"2. Fees. Acme pays the fee each quarter." + fmt.Sprintf(footer, 3) +
		"3. Term. The agreement runs for two years." + fmt.Sprintf(footer, 4) +
		"4. Arbitration. Disputes go to arbitration in Louisville." + fmt.Sprintf(footer, 5)
	var got []string
	for _, s := range Parse(text, 0, schema.FormatText) {
		got = append(got, s.Path)
	}
	want := []string{"1 Services", "2 Fees", "3 Term", "4 Arbitration"}
	if !slices.Equal(got, want) {
		t.Fatalf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A heading that recurs is not a footer: it is short, or no line of
	// its own between blank lines.
	again := "1. Scope. Part one.\n\n2. Fees. Part two.\n\nSchedule 1\n\nRates.\n\nSchedule 1\n\nMore rates.\n\nSchedule 1\n\nLast rates.\n"
	if secs := Parse(again, 0, schema.FormatText); len(secs) < 2 {
		t.Errorf("a short recurring heading taken for a footer: %+v", secs)
	}
}

// TestRunningHeaderPageNumber: a filing's first line is often its page
// number at the left and the exhibit's label far to the right; it heads
// nothing, so it cannot take the number of the first clause.
func TestRunningHeaderPageNumber(t *testing.T) {
	text := "1" + strings.Repeat(" ", 60) + "EXHIBIT 10.3\n\nSOFTWARE LICENSE AGREEMENT\n\n" +
		"1.       DEFINITIONS\n\nWords have these meanings.\n\n2.       LICENSE\n\nThe licensor grants a licence.\n"
	var got []string
	for _, s := range Parse(text, 0, schema.FormatText) {
		got = append(got, s.Path)
	}
	if want := []string{"1 DEFINITIONS", "2 LICENSE"}; !slices.Equal(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
	// A wide gap after a number with its dot is a centred title, still a
	// heading.
	if secs := Parse("Intro.\n\n1."+strings.Repeat(" ", 30)+"DEFINITIONS\n\nWords.\n", 0, schema.FormatText); len(secs) != 1 {
		t.Errorf("a numbered title with a wide gap: %+v", secs)
	}
}
