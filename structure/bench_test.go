package structure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/schema"
)

// benchParse parses text repeatedly and reports throughput in MB/s and
// sections per document.
func benchParse(b *testing.B, text, format string) {
	var n int
	for b.Loop() {
		n = len(Parse(text, 0, format))
	}
	b.ReportMetric(float64(len(text))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(n), "sections/doc")
}

// BenchmarkParse measures Parse on the fixture contract repeated to 1 MB
// (always available) and on the longest PEP of the shared corpus.
func BenchmarkParse(b *testing.B) {
	b.Run("contract-1MB", func(b *testing.B) {
		raw, err := os.ReadFile(filepath.Join("testdata", "contract.txt"))
		if err != nil {
			b.Fatal(err)
		}
		text := strings.Repeat(string(raw)+"\n", 1<<20/len(raw))
		benchParse(b, text, schema.FormatText)
	})
	b.Run("pep-0008", func(b *testing.B) {
		path := filepath.Join(testenv.SharedDir(b), "corpora", "python-peps", "pep-0008.rst")
		raw, err := os.ReadFile(path)
		if err != nil {
			testenv.Missing(b, err.Error())
		}
		benchParse(b, string(raw), schema.FormatText)
	})
}

// BenchmarkParseReferences measures reference parsing of a typical question.
func BenchmarkParseReferences(b *testing.B) {
	q := "Under clause 7.2 and Art. 12, does § 4 or Annex II override 4.3.2 for version 1.2?"
	for b.Loop() {
		ParseReferences(q)
	}
}
