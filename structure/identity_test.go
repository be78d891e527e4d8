package structure

import (
	"slices"
	"strings"
	"testing"
)

func TestDocumentKeys(t *testing.T) {
	cases := []struct {
		file, title string
		meta        map[string]string
		head        string
		want        []string
	}{
		{"pep-0572.rst", "Assignment Expressions", map[string]string{"PEP": "572", "Title": "Assignment Expressions"}, "", []string{"pep 572"}},
		{"rfc5321.txt", "", nil, "Network Working Group    J. Klensin\nRequest for Comments: 5321\nObsoletes: 2821\nUpdates: 1123\n", []string{"rfc 5321"}},
		{"T4.pdf", "", nil, "", []string{"t 4"}},
		{"itu-t81.pdf", "", nil, "", []string{"t 81"}},
		{"std/T6.pdf", "ITU-T Rec. T.6 (11/88) Facsimile coding schemes", nil, "", []string{"t 6"}},
		{"pep-0754.rst", "IEEE 754 Floating Point Special Values", map[string]string{"PEP": "754"}, "", []string{"pep 754"}},
		{"go1.13-errors.md", "Working with Errors in Go 1.13", nil, "", []string{"go 1.13"}},
		{"pages/leave/telework.md", "Telework", map[string]string{"title": "Telework"}, "", []string{}},
		// Another document's number in the text is not this one's key.
		{"pep-0008.rst", "Style Guide", map[string]string{"PEP": "8"}, "See PEP 572 and RFC 2119.", []string{"pep 8"}},
		{"12years.md", "Twelve Years of Go", nil, "", []string{}},
	}
	for _, c := range cases {
		// The title's own key, beside the numbers.
		if t := TitleKey(c.title); t != "" {
			c.want = append(slices.Clone(c.want), t)
			slices.Sort(c.want)
		}
		got := DocumentKeys(c.file, c.title, c.meta, c.head)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("DocumentKeys(%q) = %q, want %q", c.file, got, c.want)
		}
	}
}

func TestNamedNumbers(t *testing.T) {
	cases := map[string][]string{
		"What does PEP 572 propose?":                     {"pep 572"},
		"pep-0572 and PEP572, and RFC 5321 section 4.1":  {"pep 572", "rfc 5321"},
		"What does T.81 say in clause 4.2?":              {"t 81"},
		"Is the notice period 30 days under Article 12?": nil,
		"What changed in Go 1.13 errors?":                {"go 1.13"},
		"Which port 25 service?":                         nil,
		"the SHA256 digest":                              nil,
	}
	for q, want := range cases {
		var got []string
		for _, n := range NamedNumbers(q) {
			got = append(got, n.Key)
			if q[n.Start:n.End] != n.Raw {
				t.Errorf("%q: span %d-%d is %q, raw %q", q, n.Start, n.End, q[n.Start:n.End], n.Raw)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("NamedNumbers(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestTitleNamed(t *testing.T) {
	cases := []struct {
		q, title string
		want     bool
	}{
		{"In Organizing Go code, what is a grab bag package?", "Organizing Go code", true},
		{"What does the telework page say about core hours?", "Telework", true},
		{`What does "Telework" say about core hours?`, "Telework", true},
		{"Can I telework on Fridays?", "Telework", false},
		{"What is the syntax for delegating to a subgenerator?", "Syntax for Delegating to a Subgenerator", true},
		{"Who pays for travel?", "Travel and per diem", false},
		{"What does the Go 1.13 errors post say?", "", false},
		{"Does organizing go coders matter?", "Organizing Go code", false},
	}
	for _, c := range cases {
		if got := TitleNamed(c.q, c.title); got != c.want {
			t.Errorf("TitleNamed(%q, %q) = %v, want %v", c.q, c.title, got, c.want)
		}
	}
}

func TestTitleKeys(t *testing.T) {
	keys := TitleKeys("In \"Organizing Go code\", what is a grab-bag package?")
	for _, want := range []string{"t:organizing go code", "t:in", "t:grab bag package"} {
		if !slices.Contains(keys, want) {
			t.Errorf("TitleKeys lacks %q: %q", want, keys)
		}
	}
	if TitleKey("Organizing Go code") != "t:organizing go code" || TitleKey("") != "" {
		t.Errorf("TitleKey %q", TitleKey("Organizing Go code"))
	}
	if TitleKey(strings.Repeat("word ", maxTitleWords+1)) != "" {
		t.Error("a title longer than maxTitleWords has a key")
	}
}
