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
