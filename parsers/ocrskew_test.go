package parsers

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratakb/stratakb/schema"
)

// rotate90 turns a grey image a quarter turn clockwise, as a page fed
// sideways into a scanner comes out.
func rotate90(src *image.Gray) *image.Gray {
	b := src.Bounds()
	dst := image.NewGray(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			dst.SetGray(b.Max.Y-1-y, x-b.Min.X, src.GrayAt(x, y))
		}
	}
	return dst
}

// scanPDF writes a one-page PDF holding only img, a grey scan at 300 dpi, on a
// page of the image's own size and shape (a page fed sideways is landscape).
func scanPDF(img *image.Gray) []byte {
	b := img.Bounds()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		zw.Write(img.Pix[(y-b.Min.Y)*img.Stride : (y-b.Min.Y)*img.Stride+b.Dx()])
	}
	zw.Close()
	w, h := float64(b.Dx())*72/300, float64(b.Dy())*72/300
	content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q\n", w, h)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>", w, h),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", b.Dx(), b.Dy(), z.Len(), z.String()),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
	}
	return writeTestPDF("%PDF-1.4\n", objs)
}

// skewedScan renders the two-column test page at 300 dpi in grey, turned by
// skew degrees and then, if rotated, a quarter turn clockwise; it returns the
// image and the page's text in reading order.
func skewedScan(t *testing.T, dir string, skew float64, rotated bool) (*image.Gray, string) {
	t.Helper()
	pdf, truth := layoutPDF(layoutText, 2, skew)
	base := filepath.Join(dir, fmt.Sprintf("skew%g-rot%v", skew, rotated))
	write(t, base+".pdf", pdf)
	if out, err := exec.Command("pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", base+".pdf", base).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	img, err := os.ReadFile(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := png.Decode(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	gray := image.NewGray(decoded.Bounds())
	draw.Draw(gray, gray.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
	if rotated {
		gray = rotate90(gray)
	}
	return gray, truth
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStraighten checks the angles straighten measures: a straight page is
// handed on untouched, a skewed one is turned back by its skew, and one fed
// sideways gets three quarter turns (one to lay its lines flat, two more
// because that left it upside down).
func TestStraighten(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm (poppler-utils) is not installed")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		skew    float64
		rotated bool
		quads   int
	}{{0, false, 0}, {-4, false, 0}, {5, false, 0}, {4, true, 3}} {
		img, _ := skewedScan(t, dir, tc.skew, tc.rotated)
		in := encodePNG(t, img)
		out, s := straighten(in)
		t.Logf("skew %g, rotated %v: %+v", tc.skew, tc.rotated, s)
		if s.Quads != tc.quads || math.Abs(s.Skew-tc.skew) > 0.25 {
			t.Errorf("skew %g, rotated %v: straightened by %d quarter turns and %.2f degrees, want %d and %g", tc.skew, tc.rotated, s.Quads, s.Skew, tc.quads, tc.skew)
		}
		if unchanged := bytes.Equal(out, in); unchanged != (tc.skew == 0 && !tc.rotated) {
			t.Errorf("skew %g, rotated %v: image unchanged = %v", tc.skew, tc.rotated, unchanged)
		}
	}
}

// TestOCRSkewedScans renders the two-column test page at 300 dpi turned by
// 3 to 5 degrees (a sheet fed askew) and, turned by 4 degrees, a quarter turn
// as well (a sheet fed sideways and askew), and OCRs each through Parse, as an
// image file and as a scanned PDF. Each must read at character accuracy 0.97
// or more against the text in reading order, as the straight page does.
func TestOCRSkewedScans(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm (poppler-utils) is not installed")
	}
	dir := t.TempDir()
	cases := []struct {
		name    string
		skew    float64
		rotated bool
	}{
		{"skew3", 3, false},
		{"skew-4", -4, false},
		{"skew5", 5, false},
		{"rot90-skew4", 4, true},
		{"rot90-skew-4", -4, true},
	}
	for _, tc := range cases {
		gray, truth := skewedScan(t, dir, tc.skew, tc.rotated)
		base := filepath.Join(dir, tc.name)
		inputs := []struct {
			kind, path string
			data       []byte
		}{
			{"png", base + ".png", encodePNG(t, gray)},
			{"pdf", base + "-scan.pdf", scanPDF(gray)},
		}
		for _, in := range inputs {
			t.Run(fmt.Sprintf("%s/%s", tc.name, in.kind), func(t *testing.T) {
				write(t, in.path, in.data)
				doc, err := Parse(context.Background(), in.path, in.data, time.Now(), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if len(doc.Pages) != 1 || doc.Pages[0].TextOrigin != schema.OriginOCR {
					t.Fatalf("pages %+v", doc.Pages)
				}
				acc := charAccuracy(doc.Text, truth)
				t.Logf("%s as %s: character accuracy %.3f, confidence %.0f", tc.name, in.kind, acc, doc.Pages[0].OCRConfidence)
				if acc < 0.97 {
					t.Errorf("character accuracy %.3f < 0.97; OCR text:\n%s", acc, doc.Text)
				}
			})
		}
	}
}
