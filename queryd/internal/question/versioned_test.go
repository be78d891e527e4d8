package question

import (
	"slices"
	"testing"
)

func TestVersionedTerms(t *testing.T) {
	for q, want := range map[string][]string{
		"Does net/http support server push over HTTP/3?":              {"http 3"},
		"Does Go support the WASI preview 2 component model?":         {"preview 2"},
		"What carrier frequency does V.29 use for Group 3 facsimile?": {"group 3"}, // one letter is too short a term
		"Is Windows 11 supported by Go 1.26?":                         {"windows 11", "go 1.26"},
		// Quantities, sections, document series and amounts are no
		// versions; nor is a year.
		"Are payments over EUR 500 within 30 days reviewed?":  nil,
		"What does Article 41 of RFC 5321 say about step 7?":  nil,
		"Which release in 2024 added it?":                     nil,
		"How many votes did each candidate receive at least?": nil,
		"Does delivery take 3 days to Oslo?":                  nil,
		"Group 4 terminals":                                   nil, // the text's first word
		"Does the ARM64 port run?":                            {"arm 64"},
	} {
		var got []string
		for _, v := range VersionedTerms(q) {
			got = append(got, v.Word+" "+v.Number)
		}
		if !slices.Equal(got, want) {
			t.Errorf("VersionedTerms(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestOtherVersions(t *testing.T) {
	http3 := VersionedTerms("server push over HTTP/3")[0]
	for text, want := range map[string][]string{
		"HTTP/2 server push lets a server send; HTTP/1.1 has none.": {"2", "1.1"},
		"HTTP/2 and HTTP/3 both carry it.":                          nil,
		"The http package supports push.":                           nil,
	} {
		if got := http3.OtherVersions(text); !slices.Equal(got, want) {
			t.Errorf("OtherVersions(%q) = %q, want %q", text, got, want)
		}
	}
	py := VersionedTerms("Does Python 3 have it?")[0]
	if got := py.OtherVersions("Python 3.8 added it; Python 2.7 lacks it."); got != nil {
		t.Errorf("a more specific version is the same: %q", got)
	}
	goRel := VersionedTerms("What changed in Go 1.26?")[0]
	if got := goRel.OtherVersions("go1.26.md\nThe release brings a new collector."); got != nil {
		t.Errorf("the file path gives the version: %q", got)
	}
}
