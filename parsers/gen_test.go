package parsers

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

var update = flag.Bool("update", false, "rewrite generated fixtures and golden files")

// testPage is one page of a PDF written by buildPDF: lines of Helvetica text,
// or an image drawn over the whole page, or nothing (a blank page). FormLines
// are drawn through a form XObject (a content stream of its own that the page
// runs with the "Do" operator), below Lines.
type testPage struct {
	Lines     []string
	FontSize  int
	Image     *image.Gray
	FormLines []string
}

// textOps writes the operators that show lines of Helvetica from (72, top).
func textOps(w *bytes.Buffer, lines []string, size, top int) {
	fmt.Fprintf(w, "BT /F1 %d Tf %d TL 72 %d Td\n", size, size*3/2, top)
	for _, l := range lines {
		l = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		fmt.Fprintf(w, "(%s) Tj T*\n", l)
	}
	w.WriteString("ET\n")
}

// buildPDF writes a minimal, valid PDF 1.4 by hand: a catalog, a page tree,
// one Helvetica font, and per page a content stream and optional image.
func buildPDF(pages []testPage) []byte {
	var objs []string // object bodies; object i+1 is objs[i]
	add := func(body string) int { objs = append(objs, body); return len(objs) }
	add("<< /Type /Catalog /Pages 2 0 R >>")
	add("") // page tree, filled in below
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, p := range pages {
		res := fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font)
		var content bytes.Buffer
		if p.Image != nil {
			b := p.Image.Bounds()
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			for y := b.Min.Y; y < b.Max.Y; y++ {
				zw.Write(p.Image.Pix[(y-b.Min.Y)*p.Image.Stride : (y-b.Min.Y)*p.Image.Stride+b.Dx()])
			}
			zw.Close()
			img := add(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", b.Dx(), b.Dy(), z.Len(), z.String()))
			res = fmt.Sprintf("<< /XObject << /Im1 %d 0 R >> >>", img)
			content.WriteString("q 612 0 0 792 0 0 cm /Im1 Do Q\n")
		}
		size := p.FontSize
		if size == 0 {
			size = 12
		}
		if len(p.Lines) > 0 {
			textOps(&content, p.Lines, size, 720)
		}
		if len(p.FormLines) > 0 {
			var form bytes.Buffer
			textOps(&form, p.FormLines, size, 720-(len(p.Lines)+1)*size*3/2)
			fm := add(fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Length %d >>\nstream\n%s\nendstream", font, form.Len(), form.String()))
			res = fmt.Sprintf("<< /Font << /F1 %d 0 R >> /XObject << /Fm1 %d 0 R >> >>", font, fm)
			content.WriteString("q /Fm1 Do Q\n")
		}
		page := fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s", res)
		if content.Len() > 0 {
			c := add(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()))
			page += fmt.Sprintf(" /Contents %d 0 R", c)
		}
		kids = append(kids, fmt.Sprintf("%d 0 R", add(page+" >>")))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages))

	return writeTestPDF("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", objs)
}

// writeTestPDF writes a PDF of the object bodies (object i+1 is objs[i],
// object 1 the catalog) after header, with its cross-reference table and
// trailer.
func writeTestPDF(header string, objs []string) []byte {
	var out bytes.Buffer
	out.WriteString(header)
	offsets := make([]int, len(objs))
	for i, body := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes()
}

// The text of the generated fixtures.
var (
	helloPages = []testPage{
		{Lines: []string{"Service Agreement", "", "1 Definitions", "1.1 The Supplier hosts the service for the Customer."}},
		{}, // a blank page
		{Lines: []string{"7 Termination", "7.2 Either party may end this agreement with 30 days notice (in writing)."}},
	}
	scanLines = []string{"INVOICE 4711", "", "Total due: 1250 EUR", "", "Payment within 30 days."}
)

// TestWriteFixtures regenerates the binary fixtures with -update:
// parsers/testdata/{hello,scan,encrypted,owner-only}.pdf, testdata/scan.png
// and the files under fixtures/bad/. The encrypted PDFs need qpdf (a
// development tool only) and the image needs pdftoppm.
func TestWriteFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to regenerate the fixtures")
	}
	hello := buildPDF(helloPages)
	write(t, "testdata/hello.pdf", hello)

	// The scan: a text PDF rendered to a grey image, stored as a PNG and as
	// an image-only PDF.
	dir := t.TempDir()
	src := filepath.Join(dir, "src.pdf")
	write(t, src, buildPDF([]testPage{{Lines: scanLines, FontSize: 20}}))
	out, err := exec.Command("pdftoppm", "-r", "100", "-gray", "-png", "-singlefile", src, filepath.Join(dir, "scan")).CombinedOutput()
	if err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	pngData, err := os.ReadFile(filepath.Join(dir, "scan.png"))
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatal(err)
	}
	gray := image.NewGray(decoded.Bounds())
	draw.Draw(gray, gray.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
	var pngOut bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&pngOut, gray); err != nil {
		t.Fatal(err)
	}
	write(t, "testdata/scan.png", pngOut.Bytes())
	write(t, "testdata/scan.pdf", buildPDF([]testPage{{Image: gray}}))

	for _, enc := range []struct{ name, user string }{{"encrypted.pdf", "secret"}, {"owner-only.pdf", ""}} {
		out, err := exec.Command("qpdf", "--encrypt", enc.user, "owner-secret", "256", "--", "testdata/hello.pdf", "testdata/"+enc.name).CombinedOutput()
		if err != nil {
			t.Fatalf("qpdf: %v: %s", err, out)
		}
	}

	bad := "../fixtures/bad/"
	write(t, bad+"empty.md", nil)
	write(t, bad+"binary.md", append([]byte("# Looks like Markdown\n\x00\x01\x02"), pngData[:64]...))
	write(t, bad+"latin1.txt", []byte("Caf\xe9 menu, priced in \xa3.\n"))
	write(t, bad+"truncated.pdf", hello[:len(hello)/2])
	write(t, bad+"not-a-pdf.pdf", []byte("<html><body>Error 404</body></html>\n"))
	write(t, bad+"yaml-bomb.md", []byte(yamlBomb))
	write(t, bad+"malformed-front-matter.md", []byte("---\ntitle: [unclosed\ndate: 2026-03-04\n---\n# Body survives\n\nText after broken front matter.\n"))
	write(t, bad+"unterminated-front-matter.md", []byte("---\ntitle: Never closed\n\n# Heading\n\nThe body is still here.\n"))
	write(t, bad+"bad-image.png", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0xAB}, 100)...))
}

// yamlBomb is a "billion laughs" front matter: nine levels of aliases that
// would expand to 9^9 strings.
var yamlBomb = func() string {
	var b strings.Builder
	b.WriteString("---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	b.WriteString("title: Bomb\n---\n# After the bomb\n\nThe body is indexed.\n")
	return b.String()
}()

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildTIFF writes an uncompressed 8-bit grey TIFF with one page per image,
// at 100 dpi, in little-endian byte order.
func buildTIFF(pages []*image.Gray) []byte {
	var out bytes.Buffer
	le := func(v any) { _ = binaryWrite(&out, v) }
	out.WriteString("II*\x00")
	le(uint32(8))
	for i, img := range pages {
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		const nEntries = 11
		ifdStart := out.Len()
		ifdSize := 2 + nEntries*12 + 4
		resOff := ifdStart + ifdSize
		dataOff := resOff + 8
		next := uint32(0)
		if i+1 < len(pages) {
			next = uint32(dataOff + w*h)
		}
		le(uint16(nEntries))
		entry := func(tag, typ uint16, count, value uint32) { le(tag); le(typ); le(count); le(value) }
		entry(256, 4, 1, uint32(w))
		entry(257, 4, 1, uint32(h))
		entry(258, 3, 1, 8)
		entry(259, 3, 1, 1)
		entry(262, 3, 1, 1)
		entry(273, 4, 1, uint32(dataOff))
		entry(277, 3, 1, 1)
		entry(278, 4, 1, uint32(h))
		entry(279, 4, 1, uint32(w*h))
		entry(282, 5, 1, uint32(resOff))
		entry(296, 3, 1, 2)
		le(next)
		le(uint32(100))
		le(uint32(1))
		for y := 0; y < h; y++ {
			out.Write(img.Pix[y*img.Stride : y*img.Stride+w])
		}
	}
	return out.Bytes()
}

func binaryWrite(w *bytes.Buffer, v any) error { return binary.Write(w, binary.LittleEndian, v) }

// TestMultiPageTIFF OCRs a two-page TIFF built from scan.png and a blank page.
func TestMultiPageTIFF(t *testing.T) {
	f, err := os.Open("testdata/scan.png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	gray := image.NewGray(img.Bounds())
	draw.Draw(gray, gray.Bounds(), img, img.Bounds().Min, draw.Src)
	blank := image.NewGray(image.Rect(0, 0, 200, 200))
	draw.Draw(blank, blank.Bounds(), image.White, image.Point{}, draw.Src)
	data := buildTIFF([]*image.Gray{blank, gray})
	if n, err := tiffPageCount(data); n != 2 || err != nil {
		t.Fatalf("tiffPageCount = %d, %v", n, err)
	}
	doc, err := Parse(context.Background(), "two.tiff", data, testModTime, Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, doc)
	if len(doc.Pages) != 2 || doc.Format != schema.FormatImage {
		t.Fatalf("pages %+v", doc.Pages)
	}
	p2 := doc.Text[doc.Pages[1].Start:doc.Pages[1].End]
	if !strings.Contains(p2, "INVOICE 4711") || doc.Pages[0].End != doc.Pages[0].Start {
		t.Errorf("page texts %q", doc.Text)
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "page 1: blank page") {
		t.Errorf("warnings %q", doc.Warnings)
	}
}
