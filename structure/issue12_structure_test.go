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
