package chunker

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/schema"
)

// corpusDoc is one real document read from the shared corpora.
type corpusDoc struct {
	name string
	doc  *schema.ParsedDoc
	secs []schema.Section
}

// loadCorpus reads up to n files of each of the Markdown and PEP corpora,
// in name order, with front matter found and sections from testSections.
func loadCorpus(t testing.TB, n int) []corpusDoc {
	t.Helper()
	root := filepath.Join(testenv.SharedDir(t), "corpora")
	var docs []corpusDoc
	for _, dir := range []string{"go-blog-markdown", "python-peps"} {
		testenv.Require(t, filepath.Join(root, dir), "corpus "+dir)
		names, err := filepath.Glob(filepath.Join(root, dir, "*"))
		if err != nil {
			t.Fatalf("list corpus %s: %v", dir, err)
		}
		sort.Strings(names)
		if len(names) > n {
			names = names[:n]
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatalf("read corpus file: %v", err)
			}
			text := string(b)
			body := bodyStart(text)
			docs = append(docs, corpusDoc{
				name: dir + "/" + filepath.Base(name),
				doc:  &schema.ParsedDoc{Text: text, BodyStart: body, Format: schema.FormatMarkdown},
				secs: testSections(text, body),
			})
		}
	}
	return docs
}

// TestCorpusInvariants chunks 200 real documents at three sizes, with and
// without sections, and checks every invariant on every chunk.
func TestCorpusInvariants(t *testing.T) {
	docs := loadCorpus(t, 100)
	var chunks, bytes int
	for _, d := range docs {
		for _, size := range []int{300, DefaultSize, 2000} {
			for _, secs := range [][]schema.Section{d.secs, nil} {
				cs := Chunk(d.doc, secs, Options{Size: size})
				checkInvariants(t, d.name, d.doc, secs, size, cs)
				if size == DefaultSize && secs != nil {
					chunks += len(cs)
					for _, c := range cs {
						bytes += len(c.Text)
					}
				}
			}
		}
	}
	if chunks > 0 {
		t.Logf("%d documents, %d chunks at size %d, mean %d bytes", len(docs), chunks, DefaultSize, bytes/chunks)
	}
}

// TestCorpusSentences checks Sentences on real documents: spans in order,
// trimmed, and every non-blank line is in a span or is a separator line.
func TestCorpusSentences(t *testing.T) {
	for _, d := range loadCorpus(t, 100) {
		text := d.doc.Text
		spans := Sentences(text, d.doc.BodyStart, len(text))
		if err := spansErr(text, d.doc.BodyStart, len(text), spans); err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
	}
}
