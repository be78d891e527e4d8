package parsers

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
)

// sharePDF writes a PDF whose pages show a running footer directly and
// draw their body through a form XObject, which the Go reader does not run:
// it reads each page as its footer alone, as it read the paper
// converted by htmldoc (Debian's htmldoc output reads completely with the Go
// reader here, so the shape is built by hand). body gives each page's body.
func sharePDF(t *testing.T, body func(page int) []string) string {
	t.Helper()
	var pages []testPage
	for i := 1; i <= 3; i++ {
		pages = append(pages, testPage{
			Lines:     []string{fmt.Sprintf("Journal of Test Results, volume 7, page %d", i)},
			FormLines: body(i),
		})
	}
	path := filepath.Join(t.TempDir(), "paper.pdf")
	write(t, path, buildPDF(pages))
	return path
}

// TestGoReaderKeepsATenth: a page the Go reader reads as a tenth of what
// pdftotext reads is replaced by pdftotext's text even where the usable-text
// test finds fault with that text's layout (a clause number glued to its
// title), and says so; a page whose pdftotext text is garbled keeps the Go
// text with a warning, and a document that keeps under half of pdftotext's
// characters gets a document warning (issue 32, item 0).
func TestGoReaderKeepsATenth(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		testenv.Missing(t, "pdftotext (poppler-utils)")
	}
	prose := func(page int) []string {
		lines := []string{fmt.Sprintf("%d.1Introduction of the method on page %d", page, page)}
		for j := range 30 {
			lines = append(lines, fmt.Sprintf("Sentence %d of page %d says what the method measures and why.", j, page))
		}
		return lines
	}
	path := sharePDF(t, prose)
	ref := pdftotextPages(t, path)
	doc := mustParse(t, path, Options{NoOCR: true})
	for i, p := range doc.Pages {
		got, want := nonSpace(doc.Text[p.Start:p.End]), nonSpace(ref[i])
		if float64(got) < 0.9*float64(want) {
			t.Errorf("page %d keeps %d of pdftotext's %d characters", i+1, got, want)
		}
	}
	if len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], "pages 1-3: text from pdftotext (Go reader kept under 10 % of pdftotext's characters; pdftotext: a clause number runs into its title)") {
		t.Errorf("warnings %q, want one for pages 1-3 naming why", doc.Warnings)
	}

	// Punctuation alone is garbled text: the footer stays, with warnings.
	path = sharePDF(t, func(int) []string { return []string{strings.Repeat("*#* ", 60), strings.Repeat("@+@ ", 60)} })
	doc = mustParse(t, path, Options{NoOCR: true})
	want := []string{
		"pages 1-3: text from the Go reader, which may miss text (Go reader kept under 98 % of pdftotext's characters, and pdftotext's text is unusable: garbled: too few letters or digits)",
		"text may be missing: the stored text holds ",
	}
	if len(doc.Warnings) != 2 || doc.Warnings[0] != want[0] || !strings.HasPrefix(doc.Warnings[1], want[1]) {
		t.Errorf("warnings %q, want %q…", doc.Warnings, want)
	}
}
