package structure

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/schema"
)

// corpusDoc is one document of a shared corpus, as Parse sees it.
type corpusDoc struct {
	corpus, name, text, format string
	bodyStart                  int
}

// loadCorpora reads the three corpora the README's figures come from: the
// ITU-T standards (PDF text from pdftotext, with and without -layout), the
// PEPs and the Go blog.
func loadCorpora(t *testing.T) []corpusDoc {
	t.Helper()
	shared := testenv.SharedDir(t)
	var docs []corpusDoc
	if _, err := exec.LookPath("pdftotext"); err != nil {
		testenv.Missing(t, "pdftotext (Debian package poppler-utils)")
	}
	for _, f := range []string{"itu-t81.pdf", "T4.pdf", "T6.pdf"} {
		path := filepath.Join(shared, "corpora", "pdf-text", f)
		for _, mode := range []string{"raw", "layout"} {
			args := []string{"-q", path, "-"}
			if mode == "layout" {
				args = []string{"-q", "-layout", path, "-"}
			}
			out, err := exec.Command("pdftotext", args...).Output()
			if err != nil {
				t.Fatalf("pdftotext %s: %v", f, err)
			}
			docs = append(docs, corpusDoc{corpus: "itu-" + mode, name: f, text: string(out), format: schema.FormatPDF})
		}
	}
	read := func(dir, ext, corpus, format string, body func(string) int) {
		paths, err := filepath.Glob(filepath.Join(shared, "corpora", dir, "*."+ext))
		if err != nil || len(paths) == 0 {
			testenv.Missing(t, "corpus "+dir)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("read %s: %v", p, err)
			}
			s := string(b)
			docs = append(docs, corpusDoc{corpus: corpus, name: filepath.Base(p), text: s, format: format, bodyStart: body(s)})
		}
	}
	// A PEP's RFC 822 header ends at the first blank line.
	read("python-peps", "rst", "peps", schema.FormatText, func(s string) int {
		if i := strings.Index(s, "\n\n"); i >= 0 {
			return i + 2
		}
		return 0
	})
	read("go-blog-markdown", "md", "go-blog", schema.FormatMarkdown, func(s string) int {
		if strings.HasPrefix(s, "---\n") {
			if i := strings.Index(s[4:], "\n---\n"); i >= 0 {
				return 4 + i + 5
			}
		}
		return 0
	})
	return docs
}

// TestCorpusSections reports the sections Parse finds in the shared corpora
// and checks the invariants on every document. With STRATA_EVAL_SAMPLE=FILE
// it also writes a random sample of sections (seeded, so the sample in
// README.md can be drawn again) for hand checking. It runs when
// STRATA_EVAL=1.
func TestCorpusSections(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to measure the corpora")
	}
	docs := loadCorpora(t)
	type stat struct{ docs, sections, numbered, headings int }
	stats := map[string]*stat{}
	type item struct {
		doc corpusDoc
		sec schema.Section
	}
	byCorpus := map[string][]item{}
	for _, d := range docs {
		secs := Parse(d.text, d.bodyStart, d.format)
		if err := checkInvariants(d.text, d.bodyStart, secs); err != nil {
			t.Errorf("%s/%s: %v", d.corpus, d.name, err)
		}
		st := stats[d.corpus]
		if st == nil {
			st = &stat{}
			stats[d.corpus] = st
		}
		st.docs++
		st.sections += len(secs)
		for _, s := range secs {
			if s.Number != "" {
				st.numbered++
			} else {
				st.headings++
			}
			byCorpus[d.corpus] = append(byCorpus[d.corpus], item{d, s})
		}
	}
	names := make([]string, 0, len(stats))
	for k := range stats {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		st := stats[k]
		t.Logf("%-10s docs %4d  sections %6d  numbered %5d  unnumbered headings %5d", k, st.docs, st.sections, st.numbered, st.headings)
	}
	out := os.Getenv("STRATA_EVAL_SAMPLE")
	if out == "" {
		return
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatalf("create sample: %v", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(1, 2))
	// Numbered sections are where the heuristics can go wrong, so part of
	// each corpus's quota is drawn from them; the rest from all sections.
	// 40 in all: 8 + 8 from the ITU texts, 12 from the PEPs, 12 from the
	// Go blog.
	quota := map[string][2]int{ // numbered, any
		"itu-raw": {8, 0}, "itu-layout": {8, 0}, "peps": {6, 6}, "go-blog": {4, 8},
	}
	for _, k := range names {
		items := byCorpus[k]
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		var picked []item
		used := map[int]bool{}
		q := quota[k]
		for i, it := range items {
			if len(picked) < q[0] && it.sec.Number != "" {
				picked = append(picked, it)
				used[i] = true
			}
		}
		for i, it := range items {
			if len(picked) < q[0]+q[1] && !used[i] {
				picked = append(picked, it)
			}
		}
		for _, it := range picked {
			s := it.sec
			ctxStart := max(0, s.Start-160)
			ctxEnd := min(len(it.doc.text), s.HeadingEnd+200)
			fmt.Fprintf(w, "=== %s %s  kind=%s number=%q title=%q level=%d\n    path=%q\n%s\n>>>%s<<<\n%s\n\n",
				k, it.doc.name, s.Kind, s.Number, s.Title, s.Level, s.Path,
				it.doc.text[ctxStart:s.Start], it.doc.text[s.Start:s.HeadingEnd], it.doc.text[s.HeadingEnd:ctxEnd])
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("write sample: %v", err)
	}
}
