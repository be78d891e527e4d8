package embed

import (
	"os"
	"regexp"
	"testing"
)

// TestSetupReadsTheCatalog: scripts/setup.sh finds the default model and
// its int8 query export by reading catalog.go's lines with sed; this reads
// them the same way, so that a reformatted line fails here and not on a
// user's first `make setup`.
func TestSetupReadsTheCatalog(t *testing.T) {
	src, err := os.ReadFile("catalog.go")
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?m)^const DefaultLocalModel = "(.*)"$`).FindSubmatch(src)
	if def == nil || string(def[1]) != DefaultLocalModel {
		t.Fatalf("setup.sh's pattern finds %q, want %q", def, DefaultLocalModel)
	}
	export, ok := QueryExport(DefaultLocalModel)
	if !ok {
		t.Fatalf("the default model %s has no int8 query export", DefaultLocalModel)
	}
	q := regexp.MustCompile(`(?m)^\t"` + regexp.QuoteMeta(DefaultLocalModel) + `": *"(.*)",$`).FindSubmatch(src)
	if q == nil || string(q[1]) != export {
		t.Errorf("setup.sh's pattern finds %q, want %q", q, export)
	}
	if _, ok := catalog[export]; !ok {
		t.Errorf("the export %s is not in models.tsv: make setup cannot fetch it", export)
	}
}
