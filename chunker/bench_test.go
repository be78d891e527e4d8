package chunker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/schema"
)

// largestPEP reads the largest document of the PEP corpus (about 120 KB of
// reStructuredText with a few hundred headings).
func largestPEP(b *testing.B) (*schema.ParsedDoc, []schema.Section) {
	dir := filepath.Join(testenv.SharedDir(b), "corpora", "python-peps")
	testenv.Require(b, dir, "the PEP corpus")
	names, err := filepath.Glob(filepath.Join(dir, "*.rst"))
	if err != nil {
		b.Fatalf("list PEPs: %v", err)
	}
	var best []byte
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatalf("read PEP: %v", err)
		}
		if len(data) > len(best) {
			best = data
		}
	}
	text := string(best)
	body := bodyStart(text)
	return &schema.ParsedDoc{Text: text, BodyStart: body}, testSections(text, body)
}

func reportMBs(b *testing.B, n int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/s/1e6, "MB/s")
	}
}

// BenchmarkChunk chunks the largest PEP at the default size, with the
// sections a structure pass would find.
func BenchmarkChunk(b *testing.B) {
	doc, secs := largestPEP(b)
	var n int
	for b.Loop() {
		n = len(Chunk(doc, secs, Options{}))
	}
	reportMBs(b, len(doc.Text))
	b.ReportMetric(float64(n), "chunks/op")
}

// BenchmarkChunkSmall chunks the same document at size 200, where most
// paragraphs must be split into sentences and words.
func BenchmarkChunkSmall(b *testing.B) {
	doc, secs := largestPEP(b)
	for b.Loop() {
		Chunk(doc, secs, Options{Size: 200})
	}
	reportMBs(b, len(doc.Text))
}

// BenchmarkSentences splits the whole document into sentences.
func BenchmarkSentences(b *testing.B) {
	doc, _ := largestPEP(b)
	for b.Loop() {
		Sentences(doc.Text, doc.BodyStart, len(doc.Text))
	}
	reportMBs(b, len(doc.Text))
}
