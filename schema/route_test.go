package schema

import (
	"strings"
	"testing"
)

func TestRoutePattern(t *testing.T) {
	for _, c := range []struct {
		pattern, query string
		match          bool
	}{
		{`/\bpacs\.\d+/`, "What is a PACS.008?", true},
		{"credit transfer", "Credit   Transfer limits", true},
		{"leave", "cleaver sharpening", false},
		{"a.b", "axb", false}, // a keyword is literal, not an expression
	} {
		re, err := RoutePattern(c.pattern)
		if err != nil {
			t.Errorf("RoutePattern(%q): %v", c.pattern, err)
			continue
		}
		if got := re.MatchString(c.query); got != c.match {
			t.Errorf("RoutePattern(%q) on %q = %v, want %v", c.pattern, c.query, got, c.match)
		}
	}
	for _, c := range []struct{ pattern, want string }{
		{"/[unclosed/", "not a valid regular expression: error parsing regexp: missing closing ]"},
		{"/(a/", "missing closing )"},
		{"//", "between the slashes is empty"},
		{"  ", "is empty"},
	} {
		_, err := RoutePattern(c.pattern)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RoutePattern(%q) error %v, want one containing %q", c.pattern, err, c.want)
		}
	}
}
