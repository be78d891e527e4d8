package parsers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/testenv"
)

// TestEvalCorpora prints, for every PDF of the shared corpora, how many pages
// each extractor handled. It runs only with STRATA_EVAL=1 (it OCRs dozens of
// pages): STRATA_EVAL=1 go test -run TestEvalCorpora -v -timeout 30m ./parsers/
func TestEvalCorpora(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to measure the PDF corpora")
	}
	shared := testenv.SharedDir(t)
	var files []string
	for _, dir := range []string{"pdf-text", "pdf-scanned"} {
		m, _ := filepath.Glob(filepath.Join(shared, "corpora", dir, "*"))
		sort.Strings(m)
		files = append(files, m...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| file | pages | Go reader | pdftotext | OCR | blank | failed | OCR conf | seconds |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var total [6]int
	var totalDur time.Duration
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		doc, pages, err := parsePDF(context.Background(), f, data, Options{}.withDefaults())
		dur := time.Since(start)
		totalDur += dur
		rel := filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f))
		if err != nil {
			fmt.Fprintf(&b, "| %s | error: %v |\n", rel, err)
			continue
		}
		var c [6]int
		var conf float64
		for _, p := range pages {
			switch p.Method {
			case methodGo:
				c[1]++
			case methodPdftotext:
				c[2]++
			case methodOCR:
				c[3]++
				conf += p.Confidence
			case methodBlank:
				c[4]++
			default:
				c[5]++
			}
		}
		c[0] = len(pages)
		for i := range c {
			total[i] += c[i]
		}
		cs := "–"
		if c[3] > 0 {
			cs = fmt.Sprintf("%.0f", conf/float64(c[3]))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %s | %.1f |\n", rel, c[0], c[1], c[2], c[3], c[4], c[5], cs, dur.Seconds())
		for _, w := range doc.Warnings {
			t.Logf("%s: %s", rel, w)
		}
	}
	fmt.Fprintf(&b, "| **total** | %d | %d | %d | %d | %d | %d | | %.1f |\n", total[0], total[1], total[2], total[3], total[4], total[5], totalDur.Seconds())
	t.Log("\n" + b.String())
}

// TestEvalTextCorpora parses the Markdown and reStructuredText corpora and
// counts errors, front-matter dates, titles and warnings (STRATA_EVAL=1).
func TestEvalTextCorpora(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to measure the text corpora")
	}
	shared := testenv.SharedDir(t)
	for _, c := range []struct{ dir, glob string }{{"go-blog-markdown", "*.md"}, {"python-peps", "*.rst"}} {
		files, _ := filepath.Glob(filepath.Join(shared, "corpora", c.dir, c.glob))
		var errs, fmDates, titles, warned, bytes int
		start := time.Now()
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			bytes += len(data)
			doc, err := Parse(context.Background(), f, data, time.Now(), Options{})
			if err != nil {
				errs++
				t.Logf("%s: %v", filepath.Base(f), err)
				continue
			}
			if doc.DateSource == "front_matter" {
				fmDates++
			}
			if doc.Title != "" {
				titles++
			}
			if len(doc.Warnings) > 0 {
				warned++
				t.Logf("%s: %q", filepath.Base(f), doc.Warnings)
			}
		}
		d := time.Since(start)
		t.Logf("%s: %d files, %d errors, %d dates from the file's own header, %d titles, %d with warnings, %.0f files/s (%.0f MB/s)",
			c.dir, len(files), errs, fmDates, titles, warned, float64(len(files))/d.Seconds(), float64(bytes)/1e6/d.Seconds())
	}
}
