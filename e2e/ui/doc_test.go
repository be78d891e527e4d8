package uie2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCitationOpensSpan: a search result's citation link (citeLink of its
// ref) opens the Document page with exactly the result's lines
// highlighted, scrolled into view and focused; #L with the citation's
// lines highlights the same lines; the page fits 320 px.
func TestCitationOpensSpan(t *testing.T) {
	e := setup(t)
	var got struct {
		seen
		Hit struct {
			Ref, File, Lines, Href string
		}
		Highlighted, ByLines []int
		Text, Status, Title  string
		URL                  string
		Sections             []string
		Visible, Focused     bool
		Narrow               int
	}
	e.browse(t, "doc_cite", "/ui/", &got, "SEARCH_QUERY=daily allowance for meals abroad")
	got.check(t)
	if got.Hit.File != "travel-policy.md" {
		t.Fatalf("the top result is %+v, want travel-policy.md", got.Hit)
	}
	var a, b int
	if _, err := fmt.Sscanf(got.Hit.Lines, "%d-%d", &a, &b); err != nil {
		t.Fatalf("lines %q: %v", got.Hit.Lines, err)
	}
	var want []int
	for n := a; n <= b; n++ {
		want = append(want, n)
	}
	if !slices.Equal(got.Highlighted, want) || !slices.Equal(got.ByLines, want) {
		t.Errorf("highlighted %v by the ref and %v by #L%s, want lines %v", got.Highlighted, got.ByLines, got.Hit.Lines, want)
	}
	if !strings.Contains(got.Text, "48 euros") {
		t.Errorf("the highlighted lines do not hold the cited rule:\n%s", got.Text)
	}
	if !got.Visible || !got.Focused {
		t.Errorf("the span is visible %v, focused %v", got.Visible, got.Focused)
	}
	docID := strings.TrimPrefix(strings.SplitN(got.Hit.Ref, ":", 2)[0], "d")
	if _, err := strconv.Atoi(docID); err != nil || !strings.HasPrefix(got.URL, "/ui/doc/"+docID+"#r") {
		t.Errorf("the link %s went to %s", got.Hit.Href, got.URL)
	}
	if got.Narrow > 320 {
		t.Errorf("at 320 px the Document page is %d px wide", got.Narrow)
	}
	if got.Title != "Travel policy" || !slices.Contains(got.Sections, "3 Per diem") {
		t.Errorf("title %q, sections %q", got.Title, got.Sections)
	}
}

// TestDocumentMarkupStaysText: a document full of HTML and script is shown
// as its characters; nothing in it runs, loads or becomes an element,
// whatever the reader hovers or clicks.
func TestDocumentMarkupStaysText(t *testing.T) {
	e := setup(t)
	var got struct {
		seen
		Dialogs                  []string
		Pwned                    *string
		Title, Text              string
		Images, Scripts, Anchors int
	}
	e.browse(t, "doc_markup", "/ui/", &got)
	got.check(t)
	if got.Pwned != nil || len(got.Dialogs) > 0 || strings.Contains(got.Title, "pwned") {
		pwned := "unset"
		if got.Pwned != nil {
			pwned = *got.Pwned
		}
		t.Errorf("the document's script ran: __strataPwned=%s dialogs=%q title=%q", pwned, got.Dialogs, got.Title)
	}
	if got.Images != 0 || got.Scripts != 0 || got.Anchors != 0 {
		t.Errorf("the document's markup became elements: %d img, %d script, %d links", got.Images, got.Scripts, got.Anchors)
	}
	for _, want := range []string{`<script>window.__strataPwned = "script"; document.title = "pwned";</script>`,
		`<img src=x onerror="window.__strataPwned = 'onerror'">`, `<b onmouseover="window.__strataPwned='hover'">bold</b>`,
		`&amp; entities &lt;i&gt;`} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the page does not show %s as text:\n%s", want, got.Text)
		}
	}
}
