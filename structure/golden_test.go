package structure

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/golden"
	"github.com/stratakb/stratakb/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenDocs are the fixture documents, written for these tests, with the
// format the parsers give them.
var goldenDocs = []struct{ file, format string }{
	{"contract.txt", schema.FormatText},
	{"handbook.md", schema.FormatMarkdown},
	{"rfc.txt", schema.FormatText},
	{"regulation.txt", schema.FormatText},
}

// bodyStartOf skips YAML front matter, as the Markdown parser does.
func bodyStartOf(text string) int {
	if strings.HasPrefix(text, "---\n") {
		if i := strings.Index(text[4:], "\n---\n"); i >= 0 {
			return 4 + i + 5
		}
	}
	return 0
}

// renderSections writes a structure map one section per block, with its
// spans, the heading as the text has it, and its key.
func renderSections(text string, secs []schema.Section) string {
	var b strings.Builder
	for i, s := range secs {
		fmt.Fprintf(&b, "[%d] L%d %s number=%q title=%q parent=%d key=%q\n", i, s.Level, s.Kind, s.Number, s.Title, s.Parent, SectionKey(s))
		fmt.Fprintf(&b, "    path:    %s\n", s.Path)
		fmt.Fprintf(&b, "    span:    %d-%d-%d (lines %d-%d)\n", s.Start, s.HeadingEnd, s.End, schema.LineOf(text, s.Start), schema.LineOf(text, s.End))
		fmt.Fprintf(&b, "    heading: %q\n", text[s.Start:s.HeadingEnd])
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, d := range goldenDocs {
		t.Run(d.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", d.file))
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			body := bodyStartOf(text)
			secs := Parse(text, body, d.format)
			if err := checkInvariants(text, body, secs); err != nil {
				t.Error(err)
			}
			got := renderSections(text, secs)
			path := filepath.Join("testdata", "golden", d.file+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./structure -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (- want, + got; rewrite with -update if the change is right):\n%s", d.file, path, golden.Diff(string(want), got))
			}
		})
	}
}
