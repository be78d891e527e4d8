package parsers

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/chunker"
	"github.com/stratakb/stratakb/structure"
)

// TestPageFurniture: a book's running heads (the section's title with the
// page's number, "SECTION 1.1 HELLO, WORLD 3") and a standard's footer
// ("T.81 (1992 E)") on every page of a generated PDF stay in the stored text
// at their offsets, head no section and make no passage on their own
// (issue 32, item 15).
func TestPageFurniture(t *testing.T) {
	body := func(n int) []string {
		var l []string
		for j := range 6 {
			l = append(l, fmt.Sprintf("Sentence %d about example %d shows how the program prints its greeting.", j, n))
		}
		return l
	}
	head := func(title string, page int) string { return fmt.Sprintf("SECTION %s %d", title, page+2) }
	const footer = "T.81 (1992 E)"
	var pages []testPage
	for i, p := range [][]string{
		append([]string{"1.1 Hello, World", ""}, body(1)...),
		{}, // a page with nothing but its head and footer
		append([]string{"1.2 Command-Line Arguments", ""}, body(2)...),
		body(3),
		body(4),
	} {
		title := "1.1 HELLO, WORLD"
		if i >= 2 {
			title = "1.2 COMMAND-LINE ARGUMENTS"
		}
		lines := append([]string{head(title, i+1), ""}, p...)
		pages = append(pages, testPage{Lines: append(lines, "", footer)})
	}
	path := filepath.Join(t.TempDir(), "book.pdf")
	write(t, path, buildPDF(pages))
	doc := mustParse(t, path, Options{NoOCR: true})
	if n := strings.Count(doc.Text, footer); n != len(pages) {
		t.Fatalf("the stored text holds the footer %d times, want %d: %q", n, len(pages), doc.Text)
	}
	isFurn := []string{footer}
	for i := range pages {
		isFurn = append(isFurn, head("1.1 HELLO, WORLD", i+1), head("1.2 COMMAND-LINE ARGUMENTS", i+1))
	}
	if furn := structure.Furniture(doc.Text, doc.Format); len(furn) != 2*len(pages) {
		t.Errorf("%d spans of furniture, want the %d heads and footers", len(furn), 2*len(pages))
	}
	secs := structure.Parse(doc.Text, doc.BodyStart, doc.Format)
	var paths []string
	for _, s := range secs {
		paths = append(paths, s.Path)
		if strings.Contains(s.Path, "SECTION") || strings.Contains(s.Path, "T.81") {
			t.Errorf("section %q is headed by page furniture", s.Path)
		}
	}
	if len(secs) != 2 {
		t.Errorf("sections %q, want 1.1 and 1.2", paths)
	}
	for _, c := range chunker.Chunk(doc, secs, chunker.Options{Size: 300}) {
		rest := c.Text
		for _, f := range isFurn {
			rest = strings.ReplaceAll(rest, f, "")
		}
		if strings.TrimSpace(rest) == "" {
			t.Errorf("chunk %d (page %d) is only page furniture: %q", c.Ordinal, c.Page, c.Text)
		}
	}
}
