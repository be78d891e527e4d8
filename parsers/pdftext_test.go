package parsers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stratakb/stratakb/internal/testenv"
)

// nonSpace counts the characters of s that are not white space.
func nonSpace(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// pdftotextPages runs pdftotext over the whole file and returns each page's
// text (it ends every page with a form feed).
func pdftotextPages(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-q", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", path, err)
	}
	parts := strings.Split(string(out), "\f")
	return parts[:len(parts)-1]
}

// TestPDFKeepsPdftotextText parses every PDF of the shared pdf-text corpus
// (OCR off, so that only the text-layer readers are judged) and checks that
// no page stores less than 90 % of the non-space characters pdftotext finds
// on it. It logs the per-document figures.
func TestPDFKeepsPdftotextText(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		testenv.Missing(t, "pdftotext (poppler-utils)")
	}
	dir := filepath.Join(testenv.SharedDir(t), "corpora", "pdf-text")
	testenv.Require(t, dir, "the pdf-text corpus")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	if len(files) == 0 {
		testenv.Missing(t, "no files in "+dir)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| file | pages | pdftotext chars | stored chars | stored/pdftotext | lowest page | pages < 90 %% | stored bytes |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var totalRef, totalGot int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ref := pdftotextPages(t, f)
		doc, _, err := parsePDF(context.Background(), f, data, Options{NoOCR: true}.withDefaults())
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if len(ref) != len(doc.Pages) {
			t.Errorf("%s: %d pages, pdftotext has %d", filepath.Base(f), len(doc.Pages), len(ref))
			continue
		}
		var docRef, docGot, low int
		lowest, lowPage := 0.0, 0
		for i, p := range doc.Pages {
			want := nonSpace(ref[i])
			got := nonSpace(doc.Text[p.Start:p.End])
			docRef += want
			docGot += got
			if want == 0 {
				continue
			}
			r := float64(got) / float64(want)
			if lowPage == 0 || r < lowest {
				lowest, lowPage = r, i+1
			}
			if r < 0.9 {
				low++
				t.Errorf("%s page %d: stored %d of pdftotext's %d non-space characters (%.0f %%)", filepath.Base(f), i+1, got, want, 100*r)
			}
		}
		totalRef += docRef
		totalGot += docGot
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.3f | %.3f (p. %d) | %d | %d |\n",
			filepath.Base(f), len(doc.Pages), docRef, docGot, float64(docGot)/float64(max(docRef, 1)), lowest, lowPage, low, len(doc.Text))
	}
	fmt.Fprintf(&b, "| **total** | | %d | %d | %.3f | | | |\n", totalRef, totalGot, float64(totalGot)/float64(max(totalRef, 1)))
	t.Log("\n" + b.String())
}

// TestPDFFormText: the Go reader does not run form XObjects, so on a page
// whose body is drawn through one it sees only the running footer. That text
// passes the usable-text test; pdftotext's text of the page must be stored
// instead, with a warning.
func TestPDFFormText(t *testing.T) {
	body := []string{
		"4 Delivery",
		"4.1 The Supplier delivers the goods to the Customer's warehouse in Leeds.",
		"4.2 Risk passes to the Customer when the goods are unloaded.",
		"4.3 The Customer inspects every delivery within five working days.",
	}
	footer := []string{"Supply agreement between Northwind Ltd and Contoso plc - confidential"}
	data := buildPDF([]testPage{
		{Lines: []string{"Supply Agreement", "1 Parties", "1.1 Northwind Ltd supplies Contoso plc."}},
		{Lines: footer, FormLines: body},
	})
	path := filepath.Join(t.TempDir(), "form.pdf")
	write(t, path, data)
	doc, err := Parse(context.Background(), path, data, time.Now(), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	p2 := doc.Text[doc.Pages[1].Start:doc.Pages[1].End]
	for _, want := range append(body, footer...) {
		if !strings.Contains(p2, want) {
			t.Errorf("page 2 lacks %q:\n%s", want, p2)
		}
	}
	want := "page 2: text from pdftotext (" + goShort + ")"
	if len(doc.Warnings) != 1 || doc.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", doc.Warnings, want)
	}
	if p1 := doc.Text[doc.Pages[0].Start:doc.Pages[0].End]; !strings.Contains(p1, "1.1 Northwind Ltd supplies Contoso plc.") {
		t.Errorf("page 1 %q", p1)
	}
}
