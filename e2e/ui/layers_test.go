package uie2e

import (
	"strings"
	"testing"
)

// TestLayersPageShowsFailedAndSkipped: the Layers page shows the fixture
// layer's card, and once chosen (with the keyboard) its failed file with
// the parser's error and its skipped file with the reason, and its
// documents; it fits 320 px.
func TestLayersPageShowsFailedAndSkipped(t *testing.T) {
	e := setup(t)
	var got struct {
		seen
		Card                           string
		Documents, FailedRows, Skipped [][]string
		Hash, MainText                 string
		Narrow                         int
	}
	e.browse(t, "layers", "/ui/", &got)
	got.check(t)
	for _, want := range []string{"explorer", "Fixture layer of the explorer's browser tests", "Documents\n2", "Failed files\n1", "Last run"} {
		if !strings.Contains(got.Card, want) {
			t.Errorf("the layer's card lacks %q:\n%s", want, got.Card)
		}
	}
	if got.Hash != "#layer=explorer" {
		t.Errorf("Enter on the layer's link went to %q", got.Hash)
	}
	if len(got.FailedRows) != 1 || got.FailedRows[0][0] != "broken-scan.pdf" || got.FailedRows[0][1] != "failed" || !strings.Contains(got.FailedRows[0][4], "not a PDF") {
		t.Errorf("failed files: %q, want broken-scan.pdf, failed, with its error", got.FailedRows)
	}
	if len(got.Skipped) != 1 || got.Skipped[0][0] != "slides.pptx" || got.Skipped[0][1] != "format not supported (.pptx)" {
		t.Errorf("skipped files: %q, want slides.pptx with its reason", got.Skipped)
	}
	var files []string
	for _, r := range got.Documents {
		files = append(files, r[0])
	}
	if strings.Join(files, ",") != "markup-sample.md,travel-policy.md" {
		t.Errorf("documents %q", got.Documents)
	}
	for _, bad := range []string{"null", "undefined", "NaN", "[object"} {
		if strings.Contains(got.MainText, bad) {
			t.Errorf("the page shows %q:\n%s", bad, got.MainText)
		}
	}
	if got.Narrow > 320 {
		t.Errorf("at 320 px the page is %d px wide", got.Narrow)
	}
	t.Logf("failed: %q; skipped: %q", got.FailedRows, got.Skipped)
}
