package parsers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func addSeeds(f *testing.F, patterns ...string) {
	for _, p := range patterns {
		files, _ := filepath.Glob(p)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
}

// FuzzMarkdown: any bytes either fail permanently or give a document whose
// text is the file itself, with a body start inside it, a well-formed date
// and supersedes paths that stay inside the layer.
func FuzzMarkdown(f *testing.F) {
	addSeeds(f, "testdata/*.md", "../fixtures/bad/*.md")
	f.Add([]byte("---\ndate: 2026-03-04\nsupersedes: [a.md, ../b.md, /c.md]\n---\n# T\n"))
	f.Add([]byte("\xef\xbb\xbf---\ntitle: bom\n---\nbody"))
	f.Add([]byte("---\n- a list\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseMarkdown(data, time.Unix(0, 0))
		if err != nil {
			if !errors.Is(err, ErrPermanent) {
				t.Fatalf("non-permanent error %v", err)
			}
			return
		}
		if doc.Text != string(data) {
			t.Fatal("stored text differs from the file")
		}
		checkSpans(t, doc)
		if doc.Date != "" {
			if _, err := time.Parse(time.DateOnly, doc.Date); err != nil {
				t.Fatalf("date %q", doc.Date)
			}
		}
		for _, s := range doc.Supersedes {
			if strings.HasPrefix(s, "/") || s == ".." || strings.HasPrefix(s, "../") {
				t.Fatalf("supersedes %q escapes the layer", s)
			}
		}
	})
}

// FuzzPDF runs the Go side of the PDF parser (the library behind recover,
// the usable-text test, cleaning and assembly) on arbitrary bytes: no panic,
// page spans in bounds and valid UTF-8. Poppler and OCR are not fuzzed here:
// they run as separate processes.
func FuzzPDF(f *testing.F) {
	addSeeds(f, "testdata/*.pdf", "../fixtures/bad/*.pdf")
	f.Fuzz(func(t *testing.T, data []byte) {
		var pages []pageResult
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			pages, _, err = goExtract(context.Background(), data)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the Go PDF reader hangs on this input")
		}
		if err != nil {
			return
		}
		for i := range pages {
			if pages[i].Method == "" {
				pages[i].Method = methodBlank
			}
		}
		doc := assemblePDF(pages, Options{})
		checkSpans(t, doc)
		if !utf8.ValidString(doc.Text) {
			t.Fatal("invalid UTF-8 in text")
		}
		if len(doc.Pages) != len(pages) {
			t.Fatalf("%d pages for %d results", len(doc.Pages), len(pages))
		}
	})
}

// FuzzText feeds plain text and reStructuredText (with a PEP-style header)
// to the text parser, as both kinds: no panic, the stored text is the file,
// spans and the date are well formed.
func FuzzText(f *testing.F) {
	addSeeds(f, "../fixtures/bad/*.txt")
	f.Add([]byte("PEP: 8\nTitle: Style Guide\nCreated: 05-Jul-2001\n\nIntroduction\n============\n\nText.\n"))
	f.Add([]byte("Created: 31-Feb-2001\nTitle:\n\n"))
	f.Add([]byte("plain text\r\nwith CRLF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, rst := range []bool{false, true} {
			doc, err := parseText(data, time.Unix(0, 0), rst)
			if err != nil {
				if !errors.Is(err, ErrPermanent) {
					t.Fatalf("non-permanent error %v", err)
				}
				continue
			}
			if doc.Text != string(data) {
				t.Fatal("stored text differs from the file")
			}
			checkSpans(t, doc)
			if doc.Date != "" {
				if _, err := time.Parse(time.DateOnly, doc.Date); err != nil {
					t.Fatalf("date %q", doc.Date)
				}
			}
		}
	})
}

// FuzzTable reads arbitrary bytes as CSV, as TSV and as a workbook: no
// panic, only permanent errors, and a table whose sheets lie in order inside
// the text. A CSV or TSV never has more lines than the file (line N of the
// text is line N of the file).
func FuzzTable(f *testing.F) {
	addSeeds(f, "../fixtures/tables/*")
	f.Add([]byte("a,b\n\"x\ny\",2\n\n3,4,5\n"))
	f.Add([]byte("a;b\n1;\"2\"\"\"\n"))
	f.Add([]byte("h\tk\n5\" pipe\tx\n"))
	f.Add(workbook(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		for _, name := range []string{"f.csv", "f.tsv", "f.xlsx"} {
			doc, err := Parse(ctx, name, data, time.Unix(0, 0), Options{MaxFileSize: 1 << 20})
			if err != nil {
				if !errors.Is(err, ErrPermanent) {
					t.Fatalf("%s: non-permanent error %v", name, err)
				}
				continue
			}
			checkTable(t, doc)
			if !utf8.ValidString(doc.Text) {
				t.Fatalf("%s: text is not UTF-8", name)
			}
			if name != "f.xlsx" && strings.Count(doc.Text, "\n") > strings.Count(string(data), "\n")+1 {
				t.Fatalf("%s: text has more lines than the file", name)
			}
		}
	})
}
