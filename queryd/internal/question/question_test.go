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
		"What is Norway's dialling code, and Logan’s?":                                                                    {"norway", "logan"},
	}
	for q, want := range cases {
		if got := properNames(q); !slices.Equal(got, want) {
			t.Errorf("properNames(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestDescriptor(t *testing.T) {
	cases := map[string][]string{
		"What happens in section 7 of the TS/SCI clearance upgrade process?":             {"sci", "clearance", "upgrade", "process"},
		"What does section 8 of the Intro to GitHub training cover?":                     {"intro", "github", "training"},
		"What does section 4 of the Requirements for Passwords page require?":            {"requirements", "passwords"},
		"What does section 22 of the Cano Petroleum–Boyd sponsorship agreement provide?": {"cano", "petroleum", "boyd", "sponsorship"},
		"Under Article 5 of the supply agreement, may Acme assign it?":                   {"supply"},
		"What does section 4.1 of RFC 5321 say?":                                         nil,
		"What does section 4.1 say about relays?":                                        nil,
		"Section 3 of the leave policy: how many days carry over?":                       {"leave"},
	}
	for q, want := range cases {
		if got := Parse(q).Described; !slices.Equal(got, want) {
			t.Errorf("descriptor(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestPartyGroups(t *testing.T) {
	cases := map[string][][]string{
		"Does the distributor agreement between Cisco and Comware restrict assignment?":                            {{"cisco"}, {"comware"}},
		"What is the minimum annual purchase commitment under the Cisco–Tech Data distributor agreement?":          {{"cisco"}, {"tech", "data"}},
		"In PEP 3148, what happens if I call Executor.submit after shutdown?":                                      nil,
		`In "Common Format and MIME Type for Comma-Separated Values (CSV) Files", can a file start with a header?`: nil,
		"In Eleven Years of Go, which release delivered modules?":                                                  {{"eleven", "years"}},
		"Is the Gridiron BioNutrients–NFL Alumni agreement exclusive?":                                             {{"gridiron", "bionutrients"}, {"alumni"}},
	}
	for q, want := range cases {
		got := Parse(q).PartyGroups
		if len(got) != len(want) {
			t.Errorf("partyGroups(%q) = %q, want %q", q, got, want)
			continue
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("partyGroups(%q) = %q, want %q", q, got, want)
			}
		}
	}
}
