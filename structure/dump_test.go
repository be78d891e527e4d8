package structure

import (
	"os"
	"testing"
)

// TestDump prints the sections of STRATA_DUMP (a file) in format
// STRATA_DUMP_FORMAT; a tool for looking at what Parse does with a document.
func TestDump(t *testing.T) {
	path := os.Getenv("STRATA_DUMP")
	if path == "" {
		t.Skip("set STRATA_DUMP=FILE to print its sections")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	format := os.Getenv("STRATA_DUMP_FORMAT")
	if format == "" {
		format = "text"
	}
	for _, s := range Parse(string(b), 0, format) {
		t.Logf("L%d %-9s %-40q | %s", s.Level, s.Kind, s.Path, firstLine(string(b)[s.Start:s.HeadingEnd]))
	}
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i] + "⏎…"
		}
	}
	return s
}
