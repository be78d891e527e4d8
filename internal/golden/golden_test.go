package golden

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, c := range []struct {
		name, want, got string
		has             []string
		hasNot          []string
	}{
		{"equal", "a\nb\n", "a\nb\n", nil, []string{"-", "+"}},
		{"changed line", "a\nb\nc\n", "a\nB\nc\n", []string{"@@ line 1\n  a\n- b\n+ B\n  c\n"}, nil},
		{"inserted line", "a\nc\nd\ne\nf\ng", "a\nb\nc\nd\ne\nf\ng", []string{"@@ line 1\n  a\n+ b\n  c\n  d\n"}, []string{"- ", "  f\n"}},
		{"removed tail", "a\nb\nc", "a", []string{"- b\n", "- c\n"}, []string{"+ "}},
		{"two changes far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9", "x\n2\n3\n4\n5\n6\n7\n8\ny",
			[]string{"@@ line 1\n- 1\n+ x\n", "@@ line 7\n  7\n  8\n- 9\n+ y\n"}, []string{"  5\n"}},
	} {
		d := Diff(c.want, c.got)
		for _, s := range c.has {
			if !strings.Contains(d, s) {
				t.Errorf("%s: diff lacks %q:\n%s", c.name, s, d)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(d, s) {
				t.Errorf("%s: diff has %q:\n%s", c.name, s, d)
			}
		}
	}
	if Diff("x\ny", "x\ny") != "" {
		t.Error("equal texts must give an empty diff")
	}
}

// TestDiffLarge: a large changed middle is listed without the table.
func TestDiffLarge(t *testing.T) {
	w, g := strings.Repeat("a\n", 3000), strings.Repeat("b\n", 3000)
	d := Diff(w, g)
	if !strings.Contains(d, "- a\n") || !strings.Contains(d, "… and more") {
		t.Errorf("large diff starts %q", d[:min(len(d), 200)])
	}
}
