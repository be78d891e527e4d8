package parsers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/golden"
	"github.com/stratakb/stratakb/schema"
)

var testModTime = time.Date(2025, 6, 7, 23, 30, 0, 0, time.FixedZone("X", -5*3600))

func parseFile(t *testing.T, path string, opt Options) (*schema.ParsedDoc, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(context.Background(), path, data, testModTime, opt)
}

func mustParse(t *testing.T, path string, opt Options) *schema.ParsedDoc {
	t.Helper()
	doc, err := parseFile(t, path, opt)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	checkSpans(t, doc)
	return doc
}

// checkSpans asserts what every consumer of a ParsedDoc relies on.
func checkSpans(t testing.TB, doc *schema.ParsedDoc) {
	t.Helper()
	if doc.BodyStart < 0 || doc.BodyStart > len(doc.Text) {
		t.Fatalf("BodyStart %d outside text of %d bytes", doc.BodyStart, len(doc.Text))
	}
	prevEnd := 0
	for i, p := range doc.Pages {
		if p.Number != i+1 || p.Start < prevEnd || p.End < p.Start || p.End > len(doc.Text) {
			t.Fatalf("page %d span %d-%d bad (previous end %d, text %d bytes)", p.Number, p.Start, p.End, prevEnd, len(doc.Text))
		}
		if i > 0 && doc.Text[prevEnd:p.Start] != PageSeparator {
			t.Fatalf("page %d not preceded by the page separator: %q", p.Number, doc.Text[prevEnd:p.Start])
		}
		prevEnd = p.End
	}
	if len(doc.Pages) > 0 && prevEnd != len(doc.Text) {
		t.Fatalf("last page ends at %d, text is %d bytes", prevEnd, len(doc.Text))
	}
}

// goldenDoc is the JSON form of a ParsedDoc in golden files.
func goldenJSON(t *testing.T, doc *schema.ParsedDoc) []byte {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestGolden parses every text and PDF fixture in testdata and compares the
// result with testdata/golden; -update rewrites the golden files.
func TestGolden(t *testing.T) {
	for _, name := range []string{"front-matter.md", "heading-title.md", "pep-like.rst", "plain.txt", "hello.pdf", "owner-only.pdf"} {
		t.Run(name, func(t *testing.T) {
			doc := mustParse(t, filepath.Join("testdata", name), Options{})
			got := goldenJSON(t, doc)
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				write(t, golden, got)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./parsers -run TestGolden -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s:\n%s", name, golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff is golden.Diff for the golden tests of this package.
func lineDiff(want, got string) string { return golden.Diff(want, got) }

func itoa(i int) string    { return strings.TrimSpace(strings.Repeat(" ", 0) + jsonNum(i)) }
func jsonNum(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestMarkdownFrontMatter(t *testing.T) {
	doc := mustParse(t, "testdata/front-matter.md", Options{})
	if doc.Text[:4] != "---\n" {
		t.Errorf("stored text must keep the front matter, starts %q", doc.Text[:10])
	}
	if !strings.HasPrefix(doc.Text[doc.BodyStart:], "# Database failover") {
		t.Errorf("body starts at %q", doc.Text[doc.BodyStart:min(len(doc.Text), doc.BodyStart+30)])
	}
	if doc.Title != "Incident Runbook" {
		t.Errorf("title %q", doc.Title)
	}
	// updated wins over date, and a timestamp keeps the date it was written in.
	if doc.Date != "2026-03-04" || doc.DateSource != schema.DateSourceFrontMatter {
		t.Errorf("date %q from %q", doc.Date, doc.DateSource)
	}
	want := []string{"runbooks/old-runbook.md", "runbooks/older.md"}
	if strings.Join(doc.Supersedes, ",") != strings.Join(want, ",") {
		t.Errorf("supersedes %q, want %q", doc.Supersedes, want)
	}
	var abs, escape bool
	for _, w := range doc.Warnings {
		abs = abs || strings.Contains(w, "/etc/passwd") && strings.Contains(w, "absolute")
		escape = escape || strings.Contains(w, "../outside.md") && strings.Contains(w, "leaves the layer root")
	}
	if !abs || !escape {
		t.Errorf("want warnings for the absolute and the escaping path, got %q", doc.Warnings)
	}
	if doc.Meta["owner"] != "sre-team" || doc.Meta["severity"] != "2" || doc.Meta["public"] != "false" {
		t.Errorf("meta %v", doc.Meta)
	}
	if _, ok := doc.Meta["tags"]; ok {
		t.Errorf("a list is not a scalar meta value: %v", doc.Meta)
	}
}

func TestMarkdownDates(t *testing.T) {
	cases := []struct{ fm, date, source string }{
		{"date: 2026-03-04", "2026-03-04", "front_matter"},
		{"date: 2026-03-04T10:00:00Z", "2026-03-04", "front_matter"},
		{"date: 2026-03-04T23:30:00-05:00", "2026-03-04", "front_matter"},
		{"date: 2026-03-04 10:00", "2026-03-04", "front_matter"},
		{"date: 2026-03-04T10:00:00", "2026-03-04", "front_matter"},
		{"date: !!timestamp 2026-03-04", "2026-03-04", "front_matter"},
		{"date: \"2026-03-04\"", "2026-03-04", "front_matter"},
		{"date: 2024-4-09", "2024-04-09", "front_matter"},
		{"updated: 2026-05-01\ndate: 2026-03-04", "2026-05-01", "front_matter"},
		{"updated: soon\ndate: 2026-03-04", "2026-03-04", "front_matter"},
		{"date: next tuesday", "2025-06-08", "file"}, // modTime in UTC
		{"title: no date", "2025-06-08", "file"},
	}
	for _, c := range cases {
		data := []byte("---\n" + c.fm + "\n---\nbody\n")
		doc, err := Parse(context.Background(), "x.md", data, testModTime, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Date != c.date || doc.DateSource != c.source {
			t.Errorf("%q: date %q from %q, want %q from %q", c.fm, doc.Date, doc.DateSource, c.date, c.source)
		}
	}
}

func TestMarkdownTitleFromHeading(t *testing.T) {
	doc := mustParse(t, "testdata/heading-title.md", Options{})
	if doc.Title != "The Real Title" || doc.BodyStart != 0 {
		t.Errorf("title %q body start %d", doc.Title, doc.BodyStart)
	}
}

func TestPEPHeader(t *testing.T) {
	doc := mustParse(t, "testdata/pep-like.rst", Options{})
	if doc.Title != "A Made-Up Proposal For Tests" || doc.Date != "2001-07-05" || doc.DateSource != schema.DateSourceFrontMatter {
		t.Errorf("title %q date %q from %q", doc.Title, doc.Date, doc.DateSource)
	}
	if doc.Meta["PEP"] != "9999" || !strings.Contains(doc.Meta["Author"], "Second Author") {
		t.Errorf("meta %v", doc.Meta)
	}
	if !strings.HasPrefix(strings.TrimLeft(doc.Text[doc.BodyStart:], "\n"), "Abstract") {
		t.Errorf("body starts %q", doc.Text[doc.BodyStart:])
	}
	plain := mustParse(t, "testdata/plain.txt", Options{})
	if plain.Date != "2025-06-08" || plain.DateSource != schema.DateSourceFile || plain.Format != schema.FormatText {
		t.Errorf("plain text: %+v", plain)
	}
}

// TestBadFixtures checks what each broken file in fixtures/bad becomes.
func TestBadFixtures(t *testing.T) {
	cases := []struct {
		file      string
		permanent string // substring of the permanent error, or "" for a doc
		warning   string // substring of a warning on the doc
		body      string // text the body must still hold
	}{
		{"empty.md", "", "empty file", ""},
		{"binary.md", "NUL byte at offset", "", ""},
		{"latin1.txt", "invalid UTF-8 at offset 3", "", ""},
		{"truncated.pdf", "corrupt PDF", "", ""},
		{"not-a-pdf.pdf", "not a PDF", "", ""},
		{"bad-image.png", "corrupt image", "", ""},
		{"yaml-bomb.md", "", "excessive aliasing", "The body is indexed."},
		{"malformed-front-matter.md", "", "invalid YAML", "Text after broken front matter."},
		{"unterminated-front-matter.md", "", "never closed", "The body is still here."},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			start := time.Now()
			doc, err := parseFile(t, filepath.Join("..", "fixtures", "bad", c.file), Options{})
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if c.permanent != "" {
				if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), c.permanent) {
					t.Fatalf("want permanent error containing %q, got %v", c.permanent, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkSpans(t, doc)
			if !strings.Contains(strings.Join(doc.Warnings, "\n"), c.warning) {
				t.Errorf("warnings %q lack %q", doc.Warnings, c.warning)
			}
			if !strings.Contains(doc.Text[doc.BodyStart:], c.body) {
				t.Errorf("body lost: %q", doc.Text[doc.BodyStart:])
			}
		})
	}
}

func TestPDFTextLayer(t *testing.T) {
	doc := mustParse(t, "testdata/hello.pdf", Options{})
	if len(doc.Pages) != 3 || doc.Format != schema.FormatPDF {
		t.Fatalf("pages %d format %s", len(doc.Pages), doc.Format)
	}
	p3 := doc.Text[doc.Pages[2].Start:doc.Pages[2].End]
	if !strings.Contains(p3, "7.2 Either party may end this agreement with 30 days notice (in writing).") {
		t.Errorf("page 3 text %q", p3)
	}
	if doc.Pages[1].Start != doc.Pages[1].End {
		t.Errorf("blank page 2 has text %q", doc.Text[doc.Pages[1].Start:doc.Pages[1].End])
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "page 2: blank page") {
		t.Errorf("warnings %q", doc.Warnings)
	}
	if off := strings.Index(doc.Text, "Termination"); doc.PageAt(off) != 3 {
		t.Errorf("Termination on page %d", doc.PageAt(off))
	}
}

func TestEncryptedPDF(t *testing.T) {
	_, err := parseFile(t, "testdata/encrypted.pdf", Options{})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "password") {
		t.Fatalf("want a permanent password error, got %v", err)
	}
	// Encrypted with an empty user password: readable, so it is read.
	doc := mustParse(t, "testdata/owner-only.pdf", Options{})
	if !strings.Contains(doc.Text, "7 Termination") {
		t.Errorf("owner-only PDF text %q", doc.Text)
	}
}

func TestOCR(t *testing.T) {
	for _, name := range []string{"scan.png", "scan.pdf"} {
		t.Run(name, func(t *testing.T) {
			doc := mustParse(t, filepath.Join("testdata", name), Options{Concurrency: 2})
			if len(doc.Pages) != 1 || doc.Pages[0].TextOrigin != schema.OriginOCR {
				t.Fatalf("pages %+v", doc.Pages)
			}
			for _, want := range []string{"INVOICE 4711", "1250 EUR", "Payment within 30 days."} {
				if !strings.Contains(doc.Text, want) {
					t.Errorf("OCR text lacks %q: %q", want, doc.Text)
				}
			}
			if c := doc.Pages[0].OCRConfidence; c < 70 || c > 100 {
				t.Errorf("confidence %.1f", c)
			}
		})
	}
	doc := mustParse(t, "testdata/scan.pdf", Options{NoOCR: true})
	if doc.Text != "" || !strings.Contains(strings.Join(doc.Warnings, "\n"), "OCR is off") {
		t.Errorf("without OCR: text %q warnings %q", doc.Text, doc.Warnings)
	}
}

func TestLimitsAndCancel(t *testing.T) {
	_, err := Parse(context.Background(), "big.md", make([]byte, 2048), testModTime, Options{MaxFileSize: 1024})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("too large: %v", err)
	}
	_, err = Parse(context.Background(), "notes.docx", []byte("x"), testModTime, Options{})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "unsupported") {
		t.Errorf("unsupported: %v", err)
	}
	_, err = Parse(context.Background(), "notes.txt", []byte("\xff\xfeH\x00i\x00"), testModTime, Options{})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "UTF-16") {
		t.Errorf("UTF-16: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data, _ := os.ReadFile("testdata/scan.pdf")
	_, err = Parse(ctx, "testdata/scan.pdf", data, testModTime, Options{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrPermanent) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSupported(t *testing.T) {
	for path, want := range map[string]bool{
		"a.md": true, "b.MARKDOWN": true, "c.txt": true, "d.rst": true, "e.PDF": true,
		"f.png": true, "g.jpeg": true, "h.JPG": true, "i.tif": true, "j.tiff": true,
		"m.csv": true, "n.TSV": true, "o.xlsx": true, "p.tab": true,
		"k.docx": false, "Makefile": false, "l.md.bak": false, "q.xls": false,
	} {
		if Supported(path) != want {
			t.Errorf("Supported(%q) = %v", path, !want)
		}
	}
}

func TestJudgeText(t *testing.T) {
	cases := []struct {
		text string
		ok   bool
	}{
		{"Service Agreement\n1.1 The Supplier hosts the service.", true},
		{"", false},
		{"   \n\t ", false},
		{"A.3.4 Iterator ........................... 137\nA.3.5 Mediator ........................... 143", true}, // leader dots
		{"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ !\"#$%&'()*+ !\"#$%&'", false},                                      // glyph indices
		{"\x00\x12\x00\x4b\x00\x48\x00\x4f\x00\x4f\x00\x52 text", false},                                         // undecoded CID codes
		{"Hello \uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD world", false},
		{strings.Repeat("EvaluatingtheGOProgrammingLanguagewithDesignPatterns", 5), false}, // words run together
		// A table of contents whose entries run into their leaders (xdp_2.0.pdf page 5).
		{strings.Repeat("1.1 Background and Goals"+strings.Repeat(".", 120)+"1\n", 12), true},
		// Run-together words with an ellipsis are still run together (go-lecture.pdf page 11).
		{strings.Repeat("Alanguageshouldnotingeneralbecomparedfromitssyntax...(weskipthem).\nI\n", 4), false},
		// A table of contents with neither spaces nor line breaks.
		{"viiiCONTENTSA.3.4Iterator" + strings.Repeat(".", 40) + "137A.3.5Mediator" + strings.Repeat(".", 40) + "143A.3.6Memento" + strings.Repeat(".", 40) + "148A.3.7Observer" + strings.Repeat(".", 40) + "152", false},
		// A table whose cells and lines the reader joined into one line.
		{strings.Repeat("DHP define hierarchical progression marker DHT define Huffman tables marker ", 20), false},
		// The same words as ordinary lines of a page.
		{strings.Repeat("DHP define hierarchical progression marker\nDHT define Huffman tables marker\n", 20), true},
		// A clause number glued to its title.
		{"Rec. T.6\n2.2.3.2Vertical modeWhen this mode is identified, the position is coded.", false},
		// A clause heading as it should be, and a version in running text.
		{"2.2.3.2 Vertical mode\nWhen this mode is identified, Go 1.21 is used.", true},
		// Long paragraphs, one per line, are still lines.
		{strings.Repeat(strings.Repeat("The supplier hosts the service and keeps it available. ", 8)+"\n", 5), true},
	}
	for _, c := range cases {
		if got := judgeText(c.text); got.OK != c.ok {
			t.Errorf("judgeText(%.40q) = %+v, want ok=%v", c.text, got, c.ok)
		}
	}
}

func TestPDFGuards(t *testing.T) {
	hello, err := os.ReadFile("testdata/hello.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if err := preflight(hello); err != nil {
		t.Errorf("preflight rejects a good PDF: %v", err)
	}
	// A CID font's /W glyph widths are not a cross-reference /W.
	cid := append(append([]byte{}, hello...), "9 0 obj\n<< /Type /Font /Subtype /CIDFontType2 /W [1 100 500] >>\nendobj\n"...)
	if err := preflight(cid); err != nil {
		t.Errorf("preflight rejects CID widths: %v", err)
	}
	huge := []byte(strings.Replace(string(hello), "xref\n0 ", "xref\n0 0\n090000000 % a comment\n", 1))
	if err := preflight(huge); err == nil {
		t.Error("preflight accepts a subsection starting at object 90,000,000")
	}
	for stream, want := range map[string]bool{
		"BT (Hello) Tj ET":           false,
		"BT <48656c6c6f> Tj ET":      false,
		"BT <48656c6c":               true,
		"BT <48 65 6c\n":             true,
		"BT <48zz (unterminated":     false, // the library aborts at a non-hex byte
		"BT (a <b) Tj ET % <c\nET":   false,
		"BT (a \\q <4142":            true, // an invalid escape ends the string early
		"<< /A 1 >> BT <41> Tj <<42": false,
	} {
		if got := hexHangRisk([]byte(stream)); got != want {
			t.Errorf("hexHangRisk(%q) = %v", stream, got)
		}
	}
}

// TestGoReaderBudget: when the Go reader takes too long, poppler reads the
// document instead of the job waiting forever.
func TestGoReaderBudget(t *testing.T) {
	old := goReaderBudget
	goReaderBudget = time.Millisecond
	testHookGoExtract = func() { time.Sleep(200 * time.Millisecond) }
	defer func() { goReaderBudget, testHookGoExtract = old, nil }()
	doc := mustParse(t, "testdata/hello.pdf", Options{NoOCR: true})
	if !strings.Contains(doc.Text, "7.2 Either party") || !strings.Contains(strings.Join(doc.Warnings, "\n"), "timed out") {
		t.Errorf("text %q warnings %q", doc.Text, doc.Warnings)
	}
}
