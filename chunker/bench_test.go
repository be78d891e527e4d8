package chunker

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// BenchmarkChunkOneLine chunks 8 MB of text that is one line: sentences,
// words with no sentence end, and base64 with no space. It reports MB/s and
// the bytes allocated per byte of text (B/op over the text's size): what
// bounds the memory of a document that is one huge line.
func BenchmarkChunkOneLine(b *testing.B) {
	const n = 8 << 20
	words := longSentence(n)
	var sentences strings.Builder
	for i := 0; sentences.Len() < n; i++ {
		at := i * 60 % (len(words) - 60)
		sentences.WriteString(words[at : at+58])
		sentences.WriteString(". The ")
	}
	base64 := strings.Repeat("Zm9vYmFyYmF6cXV4", n/16)
	for _, c := range []struct{ name, text string }{
		{"sentences", sentences.String()}, {"no-sentence-end", words}, {"no-space", base64},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc := &schema.ParsedDoc{Text: c.text}
			b.SetBytes(int64(len(c.text)))
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			chunks := 0
			for b.Loop() {
				chunks = len(Chunk(doc, nil, Options{Size: 800}))
			}
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/float64(len(c.text)), "alloc-B/text-B")
			b.ReportMetric(float64(chunks), "chunks")
		})
	}
}
