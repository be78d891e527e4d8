package parsers

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/schema"
)

// layoutText is the text of the OCR layout test pages, written for it: four
// paragraphs of ordinary prose, long enough to fill two columns of a page.
var layoutText = []string{
	"The night shift begins at ten. Before the first batch is loaded, the " +
		"operator checks that the cooling pumps run, that the spare filters " +
		"are on the shelf by the north door, and that the log book from the " +
		"day shift has been signed. Any open fault is written on the board " +
		"so that the next person sees it before touching the line.",
	"Samples are taken every two hours from the third tank. Each sample " +
		"goes into a clean jar with a label that gives the time, the tank " +
		"and the initials of the person who took it. The jars wait in the " +
		"cold room until the laboratory opens at seven in the morning.",
	"When a pressure alarm sounds, stop the feed first and open the relief " +
		"valve second. Do not restart the pump until the gauge has fallen " +
		"below four bar and a supervisor has looked at the seals. Record the " +
		"reading, the time and what was done in the log book.",
	"At the end of the shift the floor is swept, the hoses are coiled on " +
		"their hooks and the waste bins are taken to the yard. The operator " +
		"hands the keys to the morning crew and goes through the board with " +
		"them, item by item, before leaving the building.",
}

// wrapWords breaks a paragraph into lines of at most width characters.
func wrapWords(par string, width int) []string {
	var lines []string
	var line string
	for _, w := range strings.Fields(par) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// layoutPDF writes a one-page letter-size PDF of the paragraphs in 10 pt
// Courier (every glyph 6 pt wide, so lines wrap exactly), in one column
// 6 inches wide or two of 3 inches with a half-inch gutter, the whole page
// turned by skew degrees about its centre like a sheet fed askew into a
// scanner. It returns the PDF and the text in reading order.
func layoutPDF(pars []string, columns int, skew float64) (pdf []byte, truth string) {
	width := 72 // characters per line in one column of 432 pt
	if columns == 2 {
		width = 36 // 216 pt
	}
	var lines []string
	for i, p := range pars {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, wrapWords(p, width)...)
	}
	cols := [][]string{lines}
	if columns == 2 {
		// Split at a paragraph break near the middle.
		half := len(lines) / 2
		for half < len(lines) && lines[half] != "" {
			half++
		}
		cols = [][]string{lines[:half], lines[min(half+1, len(lines)):]}
	}
	a := skew * math.Pi / 180
	c, s := math.Cos(a), math.Sin(a)
	const cx, cy = 306.0, 396.0
	var content strings.Builder
	fmt.Fprintf(&content, "q %.6f %.6f %.6f %.6f %.4f %.4f cm\n", c, s, -s, c, cx-c*cx+s*cy, cy-s*cx-c*cy)
	var parts []string
	for i, col := range cols {
		fmt.Fprintf(&content, "BT /F1 10 Tf 14 TL %d 700 Td\n", 72+i*252)
		for _, l := range col {
			fmt.Fprintf(&content, "(%s) Tj T*\n", l)
		}
		content.WriteString("ET\n")
		parts = append(parts, strings.Join(col, "\n"))
	}
	content.WriteString("Q\n")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
	}
	return writeTestPDF("%PDF-1.4\n", objs), strings.Join(parts, "\n")
}

// levenshtein is the edit distance between a and b, in runes.
func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// charAccuracy is 1 - Levenshtein(got, want)/len(want), after both have
// their white space runs turned into single spaces.
func charAccuracy(got, want string) float64 {
	g := []rune(strings.Join(strings.Fields(got), " "))
	w := []rune(strings.Join(strings.Fields(want), " "))
	return 1 - float64(levenshtein(g, w))/float64(len(w))
}

// TestOCRColumns renders pages of our own text at 300 dpi, one column and
// two, turned by one degree, and OCRs each through Parse: the one-column page
// as a PNG, the two-column one as a scanned PDF.
// The OCR text must follow the columns: character accuracy against the text
// in reading order at least 0.97. (With tesseract's single-block
// segmentation the two-column page came out line by line across both
// columns.)
func TestOCRColumns(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm (poppler-utils) is not installed")
	}
	dir := t.TempDir()
	for _, columns := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d-column", columns), func(t *testing.T) {
			pdf, truth := layoutPDF(layoutText, columns, 1)
			src := filepath.Join(dir, fmt.Sprintf("cols%d.pdf", columns))
			write(t, src, pdf)
			base := filepath.Join(dir, fmt.Sprintf("cols%d", columns))
			if out, err := exec.Command("pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", src, base).CombinedOutput(); err != nil {
				t.Fatalf("pdftoppm: %v: %s", err, out)
			}
			img, err := os.ReadFile(base + ".png")
			if err != nil {
				t.Fatal(err)
			}
			// The one-column page goes in as an image file, the two-column
			// page as a scanned PDF (an image-only page that Parse renders
			// again and OCRs).
			path, data := base+".png", img
			if columns == 2 {
				decoded, err := png.Decode(bytes.NewReader(img))
				if err != nil {
					t.Fatal(err)
				}
				gray := image.NewGray(decoded.Bounds())
				draw.Draw(gray, gray.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
				path, data = base+"-scan.pdf", buildPDF([]testPage{{Image: gray}})
				write(t, path, data)
			}
			doc, err := Parse(context.Background(), path, data, time.Now(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Pages) != 1 || doc.Pages[0].TextOrigin != schema.OriginOCR {
				t.Fatalf("pages %+v", doc.Pages)
			}
			acc := charAccuracy(doc.Text, truth)
			t.Logf("%d column(s), 1 degree: character accuracy %.3f, confidence %.0f", columns, acc, doc.Pages[0].OCRConfidence)
			if acc < 0.97 {
				t.Errorf("character accuracy %.3f < 0.97; OCR text:\n%s", acc, doc.Text)
			}
		})
	}
}
