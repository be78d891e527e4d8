package chunker

import (
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratakb/stratakb/schema"
)

// longSentence is n bytes of words with no sentence end and no line break:
// what a file that is one long line of words looks like to the chunker.
func longSentence(n int) string {
	words := []string{"leave", "policy", "days", "carried", "over", "employee", "manager", "request", "x", "approval"}
	r := rand.New(rand.NewSource(7))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.Intn(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

// TestLongSentenceMemory: chunking one sentence of 4 MB allocates a small
// multiple of its size, not one atom per word held all at once (which took
// 60 bytes per byte of text, and 1.95 GB of RSS for a 63 MB file).
func TestLongSentenceMemory(t *testing.T) {
	long := longSentence(4 << 20)
	for _, text := range []string{long, "# " + long + "\n\nBody text.\n"} {
		doc := &schema.ParsedDoc{Text: text}
		secs := testSections(text, 0)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cs := Chunk(doc, secs, Options{Size: 800})
		runtime.ReadMemStats(&after)
		if len(cs) < len(text)/800 {
			t.Fatalf("%d chunks for %d bytes", len(cs), len(text))
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		if perByte := float64(alloc) / float64(len(text)); perByte > 2 {
			t.Errorf("chunking %q… (%d bytes, %d sections) allocated %d bytes, %.1f per byte of text; want at most 2",
				text[:20], len(text), len(secs), alloc, perByte)
		}
	}
}

// TestLazyWordsChunkTheSame: listing a sentence's words lazily gives the
// same chunks as listing them all, on the random documents and on long
// sentences with headings, pages and list items around them.
func TestLazyWordsChunkTheSame(t *testing.T) {
	saved := minWordRun
	defer func() { minWordRun = saved }()
	chunk := func(doc *schema.ParsedDoc, secs []schema.Section, size, run int) []schema.Chunk {
		minWordRun = run
		return Chunk(doc, secs, Options{Size: size})
	}
	same := func(name string, doc *schema.ParsedDoc, secs []schema.Section, size int) {
		t.Helper()
		eager := chunk(doc, secs, size, 1<<62)
		lazy := chunk(doc, secs, size, 1)
		if len(eager) != len(lazy) {
			t.Fatalf("%s (size %d): %d chunks listing words lazily, %d listing them all", name, size, len(lazy), len(eager))
		}
		for i := range eager {
			if eager[i] != lazy[i] {
				t.Fatalf("%s (size %d): chunk %d differs:\nlazy  %+v\neager %+v", name, size, i, lazy[i], eager[i])
			}
		}
		if err := invariantErr(doc, secs, size, lazy); err != nil {
			t.Fatalf("%s (size %d): %v", name, size, err)
		}
	}
	r := rand.New(rand.NewSource(3))
	for i := range 3000 {
		doc := randomDoc(r)
		size := 50 + r.Intn(200)
		secs := testSections(doc.Text, doc.BodyStart)
		same("random document "+string(rune('0'+i%10)), doc, secs, size)
		same("random document without sections", doc, nil, size)
	}
	long := longSentence(300 << 10)
	for _, text := range []string{
		long,
		"# Title\n\n" + long + "\n\n## Next\n\nA short paragraph.\n",
		"Intro sentence. " + long + "end. Another sentence.\n- item one " + long[:5000] + "\n",
		"word" + strings.Repeat("x", 3000) + " " + long[:20000] + strings.Repeat("y", 2000),
	} {
		doc := &schema.ParsedDoc{Text: text, Pages: []schema.Page{{Number: 1, Start: 0, End: len(text) / 2}, {Number: 2, Start: len(text) / 2, End: len(text)}}}
		secs := testSections(text, 0)
		for _, size := range []int{100, 800, 4000} {
			same("long sentence", doc, secs, size)
		}
	}
}

// TestLongWordIsCut: a run of non-space bytes longer than MaxWordBytes (a
// file of base64 with no space) becomes pieces of at most MaxWordBytes, cut
// at character boundaries, instead of one chunk as long as the file, which
// PostgreSQL's full-text index refuses past 1 MB.
func TestLongWordIsCut(t *testing.T) {
	word := strings.Repeat("Zm9vYmFy", 40000) + strings.Repeat("é", 3000) // 320 KB of base64, then two-byte characters
	for _, text := range []string{word, "Intro sentence here. " + word + " and the end.", "# Data\n\n" + word + "\n"} {
		doc := &schema.ParsedDoc{Text: text}
		secs := testSections(text, 0)
		for _, size := range []int{100, 800, 5000} {
			cs := Chunk(doc, secs, Options{Size: size})
			if err := invariantErr(doc, secs, size, cs); err != nil {
				t.Fatalf("size %d: %v", size, err)
			}
			for _, c := range cs {
				if len(c.Text) > max(size, MaxWordBytes) || !utf8.ValidString(c.Text) {
					t.Fatalf("size %d: chunk of %d bytes (valid UTF-8: %t)", size, len(c.Text), utf8.ValidString(c.Text))
				}
			}
		}
	}
}
