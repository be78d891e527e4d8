package parsers

import (
	"bytes"
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

	"github.com/ledongthuc/pdf"

	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// rawPDF writes a one-page PDF whose content stream is ops, with /F1 a
// Helvetica whose /Widths give every code from 32 to 126 the width w (in
// thousandths of the font size), and /F2 a Helvetica without widths.
func rawPDF(ops string, w int) []byte {
	widths := strings.TrimSpace(strings.Repeat(fmt.Sprintf("%d ", w), 126-32+1))
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 126 /Widths [" + widths + "] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(ops), ops),
	}
	return writeTestPDF("%PDF-1.4\n", objs)
}

// firstPageText reads page 1 of data with the Go reader alone.
func firstPageText(t *testing.T, data []byte) string {
	t.Helper()
	r, err := openGo(data)
	if err != nil {
		t.Fatal(err)
	}
	text, err := goPageText(r.Page(1))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// flowedOps is a page set the way word processors write it: one BT block,
// every new line reached with TD or Td (never T*), a heading's number and
// title apart by a TJ gap and no space glyph, a running footer drawn first
// at the foot of the page.
const flowedOps = `BT
/F1 1 Tf 10 0 0 10 300 40 Tm (7) Tj
10 0 0 10 72 740 Tm
[(4) -1000 (Coding scheme)] TJ
0 -1.8 TD [(4.1) -1000 (One-dimensional coding)] TJ
0 -1.6 TD (A pause may be placed in the message flow by) Tj
0 -1.15 Td (sending fill bits.) Tj
0 -1.8 TD [(4.1.1) -1000 (Return To Control)] TJ
0 -1.6 TD (The end of a document is indicated by) Tj
0 -1.15 Td (six consecutive EOLs.) Tj
ET`

// TestPDFLinesFollowPositions: the library's GetPlainText breaks lines only
// at BT and T*, so on a page like flowedOps a heading sits in the middle of
// a line and two lines' words run together. The Go reader's text must have
// the page's lines, the heading at the start of its own line, the TJ gap
// as a space and a blank line where the baseline moves further than the
// usual line spacing.
func TestPDFLinesFollowPositions(t *testing.T) {
	data := rawPDF(flowedOps, 500)
	// The old extraction, kept here as the reason for this test.
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	old, err := r.Page(1).GetPlainText(nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(old, "\n4.1.1") {
		t.Fatalf("GetPlainText now breaks lines at TD; this test no longer shows the old fault:\n%s", old)
	}

	got := firstPageText(t, data)
	want := "7\n\n4 Coding scheme\n\n4.1 One-dimensional coding\n\n" +
		"A pause may be placed in the message flow by\nsending fill bits.\n\n" +
		"4.1.1 Return To Control\n\nThe end of a document is indicated by\nsix consecutive EOLs."
	if strings.TrimSpace(got) != want {
		t.Errorf("page text\n%q\nwant\n%q", got, want)
	}

	// Through Parse and the structure map: the clause is found and its
	// text starts with its heading.
	path := filepath.Join(t.TempDir(), "flowed.pdf")
	write(t, path, data)
	doc, err := Parse(context.Background(), path, data, time.Now(), Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q", doc.Warnings)
	}
	secs := structure.Parse(doc.Text, doc.BodyStart, doc.Format)
	var found bool
	for _, s := range secs {
		if s.Number == "4.1.1" {
			found = true
			if h := doc.Text[s.Start:s.HeadingEnd]; !strings.HasPrefix(h, "4.1.1 Return To Control") {
				t.Errorf("4.1.1 heading %q", h)
			}
			if s.Path != "4 Coding scheme > 4.1 One-dimensional coding > 4.1.1 Return To Control" {
				t.Errorf("4.1.1 path %q", s.Path)
			}
		}
	}
	if !found {
		t.Errorf("no clause 4.1.1 in %+v\ntext:\n%s", secs, doc.Text)
	}
}

// TestPDFWordGaps covers how words are told apart by position: a space
// glyph that the producer kerns back over joins (pdftotext does the same),
// a gap made by letter spacing (Tc) alone is a space, a page number drawn
// after the rule it sits in is put back in place, and fake bold (the same
// glyphs drawn again a hair to the right) is written once. With widths of
// 500/1000 em, a glyph of the 10-point font is 5 units wide.
func TestPDFWordGaps(t *testing.T) {
	cases := []struct{ name, ops, want string }{
		{"kerned-back space", `BT /F1 10 Tf 72 700 Td [(Cont ) 500 (ents)] TJ ET`, "Contents"},
		{"letter spacing", `BT /F1 10 Tf 72 700 Td (Th) Tj 2.5 Tc (eO) Tj 0 Tc [250 (rigins)] TJ ET`, "The Origins"},
		{"tight kerning", `BT /F1 10 Tf 72 700 Td [(Wor) 80 (ld)] TJ ET`, "World"},
		{"TJ word gap", `BT /F1 10 Tf 72 700 Td [(two) -300 (words)] TJ ET`, "two words"},
		{"page number after its rule", `BT /F1 10 Tf 300 40 Td (-   -) Tj 10 0 Td (1) Tj ET`, "- 1 -"},
		{"fake bold", `BT /F1 10 Tf 72 700 Td (Bold) Tj ET BT /F1 10 Tf 72.4 700 Td (Bold) Tj ET`, "Bold"},
		{"subscript stays on the line", `BT /F1 10 Tf 72 700 Td (H) Tj /F1 7 Tf 5 -3 Td (2) Tj /F1 10 Tf 4 3 Td (O) Tj ET`, "H2O"},
		// A font without widths: where its glyphs end is unknown, so only
		// the producer's moves and space glyphs make spaces, and lines still
		// break by position.
		{"no widths", `BT /F2 10 Tf 72 700 Td (one) Tj 40 0 Td (two) Tj 0 -12 TD (next line) Tj ET`, "one two\nnext line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.TrimSpace(firstPageText(t, rawPDF(c.ops, 500))); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestPDFCorpusStructure parses the ITU-T PDFs of the shared corpus with the
// PDF parser (OCR off) and checks their structure maps. Before the Go reader
// broke lines by position, T.4 had 1 section (a false appendix), T.6 19 and
// T.81 232 (the last two partly from pages that fell back to pdftotext).
func TestPDFCorpusStructure(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		testenv.Missing(t, "pdftotext (poppler-utils)")
	}
	dir := filepath.Join(testenv.SharedDir(t), "corpora", "pdf-text")
	testenv.Require(t, dir, "the pdf-text corpus")
	cases := []struct {
		file   string
		min    int               // numbered sections at least
		starts map[string]string // clause number → how its text starts
	}{
		{"T4.pdf", 215, map[string]string{
			"1":     "1 Scanning track",
			"4.1":   "4.1 One-dimensional coding scheme",
			"4.1.1": "4.1.1 Data",
			"4.1.4": "4.1.4 Return To Control (RTC)\n",
			"4.2.4": "4.2.4 Return To Control (RTC)",
			"A":     "Annex A",
			"A.3.2": "A.3.2 Flag sequence (F)",
		}},
		{"T6.pdf", 28, map[string]string{"2.2.3.2": "2.2.3.2 Vertical mode"}},
		{"itu-t81.pdf", 395, map[string]string{
			"1":   "1 Scope",
			"4":   "4 General",
			"4.1": "4.1 Elements specified in this Specification",
			"B.2": "B.2 General sequential and progressive syntax",
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f := filepath.Join(dir, c.file)
			data, err := os.ReadFile(f)
			if err != nil {
				testenv.Missing(t, f)
			}
			doc, _, err := parsePDF(context.Background(), f, data, Options{NoOCR: true}.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			secs := structure.Parse(doc.Text, doc.BodyStart, doc.Format)
			numbered := 0
			byNumber := map[string]schema.Section{}
			for _, s := range secs {
				if s.Number != "" {
					numbered++
				}
				if _, ok := byNumber[s.Number]; !ok {
					byNumber[s.Number] = s
				}
			}
			t.Logf("%s: %d sections, %d numbered; warnings %q", c.file, len(secs), numbered, doc.Warnings)
			if numbered < c.min {
				t.Errorf("%d numbered sections, want at least %d", numbered, c.min)
			}
			for num, want := range c.starts {
				s, ok := byNumber[num]
				if !ok {
					t.Errorf("no section %s", num)
					continue
				}
				if got := doc.Text[s.Start:min(s.End, s.Start+len(want))]; got != want {
					t.Errorf("section %s starts %q, want %q", num, got, want)
				}
			}
		})
	}
}

// TestEvalWordGaps measures the Go reader's words against pdftotext's on
// every page of the pdf-text corpus that both read, for the library's
// GetPlainText (the reader before) and for pageText at several word-gap
// thresholds: the words of either text that the other lacks (as multisets,
// page by page), halved, over pdftotext's words (words glued, split or lost
// where pdftotext has them whole), and the words of over 20 letters (glued
// words). STRATA_EVAL=1 go
// test ./parsers -run TestEvalWordGaps -v
func TestEvalWordGaps(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to measure word gaps")
	}
	dir := filepath.Join(testenv.SharedDir(t), "corpora", "pdf-text")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	words := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) })
	}
	long := func(w string) bool {
		n := 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				n++
			}
		}
		return n > 20
	}
	defer func(v float64) { wordBreakGap = v }(wordBreakGap)
	gaps := []float64{0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25}
	var b strings.Builder
	b.WriteString("| file | words (pdftotext) | before: missing | before: > 20 letters |")
	for _, g := range gaps {
		fmt.Fprintf(&b, " %.2f: missing | %.2f: > 20 |", g, g)
	}
	b.WriteString("\n|---|---:|---:|---:|" + strings.Repeat("---:|---:|", len(gaps)) + "\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ref := pdftotextPages(t, f)
		r, err := openGo(data)
		if err != nil {
			continue
		}
		pages, err := goPages(r)
		if err != nil || len(pages) != len(ref) {
			continue
		}
		// count returns the words of the Go text not in pdftotext's page
		// (as a multiset) and the words of over 20 letters.
		count := func(page int, text string) (miss, lng int) {
			have := map[string]int{}
			for _, w := range words(ref[page]) {
				have[w]++
			}
			for _, w := range words(text) {
				if have[w] > 0 {
					have[w]--
				} else {
					miss++
				}
				if long(w) {
					lng++
				}
			}
			for _, n := range have {
				miss += n
			}
			return miss, lng
		}
		total := 0
		var oldMiss, oldLong int
		miss := make([]int, len(gaps))
		lng := make([]int, len(gaps))
		for i, p := range pages {
			old, err := func() (s string, err error) {
				defer func() {
					if recover() != nil {
						err = fmt.Errorf("panic")
					}
				}()
				if err := checkPage(p); err != nil {
					return "", err
				}
				return p.GetPlainText(nil)
			}()
			if err != nil {
				continue
			}
			total += len(words(ref[i]))
			m, l := count(i, old)
			oldMiss += m
			oldLong += l
			for k, g := range gaps {
				wordBreakGap = g
				text, err := goPageText(p)
				if err != nil {
					continue
				}
				m, l := count(i, text)
				miss[k] += m
				lng[k] += l
			}
		}
		pct := func(n int) string { return fmt.Sprintf("%.1f %%", 50*float64(n)/float64(max(total, 1))) }
		fmt.Fprintf(&b, "| %s | %d | %s | %d |", filepath.Base(f), total, pct(oldMiss), oldLong)
		for k := range gaps {
			fmt.Fprintf(&b, " %s | %d |", pct(miss[k]), lng[k])
		}
		b.WriteString("\n")
	}
	t.Log("\n" + b.String())
}
