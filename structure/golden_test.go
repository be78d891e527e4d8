package structure

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
				t.Errorf("%s differs from %s (- want, + got; rewrite with -update if the change is right):\n%s", d.file, path, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff is a small line diff (longest common subsequence) that shows
// changed lines with - and + and two lines of context.
func lineDiff(a, b string) string {
	x := strings.Split(a, "\n")
	y := strings.Split(b, "\n")
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', y[j]})
			j++
		default:
			ops = append(ops, op{'-', x[i]})
			i++
		}
	}
	var out strings.Builder
	for k, o := range ops {
		near := false
		for d := -2; d <= 2; d++ {
			if k+d >= 0 && k+d < len(ops) && ops[k+d].kind != ' ' {
				near = true
			}
		}
		if near {
			fmt.Fprintf(&out, "%c %s\n", o.kind, o.line)
		}
	}
	return out.String()
}

// TestLineDiff checks that the diff shows what changed.
func TestLineDiff(t *testing.T) {
	d := lineDiff("a\nb\nc\n", "a\nB\nc\n")
	if !strings.Contains(d, "- b") || !strings.Contains(d, "+ B") || !strings.Contains(d, "  a") {
		t.Errorf("diff:\n%s", d)
	}
}
