package question

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	q := Parse("What does section 4.1.1 of RFC 5321 say about the \"Organizing Go code\" post?")
	if len(q.References) != 1 || q.References[0].Number != "4.1.1" {
		t.Errorf("references %+v", q.References)
	}
	if !slices.Equal(q.NumberKeys(), []string{"rfc 5321"}) || q.NumberAsWritten("rfc 5321") != "RFC 5321" {
		t.Errorf("numbers %+v", q.Numbers)
	}
	if q.Folded != " what does section 4 1 1 of rfc 5321 say about the organizing go code post " {
		t.Errorf("folded %q", q.Folded)
	}
	if q.NumberAsWritten("pep 8") != "" {
		t.Error("a number the question does not write")
	}
}

func TestProperNames(t *testing.T) {
	cases := map[string][]string{
		"What does section 22 of the Cano Petroleum–Boyd sponsorship agreement provide?":                                  {"cano", "petroleum", "boyd"},
		"What does section 21 of the software license and maintenance agreement between Sparkling Spring and Garman say?": {"sparkling", "spring", "garman"},
		"Under Article 5, may Acme Corp. assign it to Beta?":                                                              {"acme", "corp", "beta"},
		"What does RFC 5321 say in section 4.1?":                                                                          nil,
		"Which law governs?":                                                                                              nil,
	}
	for q, want := range cases {
		if got := properNames(q); !slices.Equal(got, want) {
			t.Errorf("properNames(%q) = %q, want %q", q, got, want)
		}
	}
}
