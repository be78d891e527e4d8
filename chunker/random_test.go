package chunker

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

// randomDoc builds a document from tokens that trip the rules: headings of
// every kind, list markers, end marks, abbreviations, form feeds, long
// words; with a random body start and up to three pages.
func randomDoc(r *rand.Rand) *schema.ParsedDoc {
	toks := []string{"# ", "## ", "### ", "\n", "\n\n", " ", "a", "A", "0", "7.2", ".", "!", "?", "§", "Title",
		"===", "---", "- ", "1. ", "(a) ", "word", "x", "\"", ")", "Art.", "e.g.", "\f", "\t", "  ", "etc.", "Mr.",
		"Ü", "longwordlongwordlongword", "Article 4", "\n7 Terms\n"}
	var b strings.Builder
	for range r.Intn(120) {
		b.WriteString(toks[r.Intn(len(toks))])
	}
	text := b.String()
	doc := &schema.ParsedDoc{Text: text, BodyStart: r.Intn(len(text) + 1)}
	if n := r.Intn(4); n > 0 {
		for i := range n {
			doc.Pages = append(doc.Pages, schema.Page{Number: i + 1, Start: i * len(text) / n, End: (i + 1) * len(text) / n})
		}
	}
	return doc
}

// TestChunkRandomDocuments checks every invariant on 3,000 generated
// documents at sizes from 50 to 250, with and without sections: a fixed
// seed, so a failure is reproducible, and cheap enough for every run (the
// fuzz targets go further but only when asked).
func TestChunkRandomDocuments(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 3000 {
		doc := randomDoc(r)
		size := 50 + r.Intn(200)
		secs := testSections(doc.Text, doc.BodyStart)
		for _, ss := range [][]schema.Section{secs, nil} {
			cs := Chunk(doc, ss, Options{Size: size})
			if err := invariantErr(doc, ss, size, cs); err != nil {
				t.Fatalf("%q (body %d, %d pages, size %d, %d sections): %v", doc.Text, doc.BodyStart, len(doc.Pages), size, len(ss), err)
			}
		}
		if err := spansErr(doc.Text, doc.BodyStart, len(doc.Text), Sentences(doc.Text, doc.BodyStart, len(doc.Text))); err != nil {
			t.Fatalf("Sentences(%q): %v", doc.Text, err)
		}
	}
}
