package retrieve

import (
	"reflect"
	"strings"
	"testing"
)

func TestExactTerms(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"What does reason code AC04 mean in pacs.008?": {"AC04", "pacs.008"},
		"Which Cache-Control header, per PEP 8?":       {"Cache-Control", "PEP 8"},
		"RFC 2119 keywords and p53":                    {"RFC 2119", "p53"},
		"how many leave days are left":                 nil,
		"AT-44 and at-44 again.":                       {"AT-44"},
	} {
		if got := ExactTerms(q); !reflect.DeepEqual(got, want) {
			t.Errorf("ExactTerms(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestCutAtWord(t *testing.T) {
	t.Parallel()
	short := "7.2 Notice. Either party may end this agreement."
	if got, cut := cutAtWord(short, 10); got != short || cut {
		t.Errorf("a clause of 200 characters or less is never cut: %q %v", got, cut)
	}
	long := ""
	for len(long) < 7000 {
		long += "Confidential information means every document. "
	}
	got, cut := cutAtWord(long, ExactTextLimit)
	if !cut || len(got) > ExactTextLimit || got[len(got)-1] == ' ' || long[len(got)] != ' ' {
		t.Errorf("cut must end at a word within the limit: cut=%v len=%d", cut, len(got))
	}
}

func TestClauseWords(t *testing.T) {
	for q, want := range map[string]string{
		"Which law governs the agreement between Acme and Globex?":                     "construed",
		"Under the HotApp–DSS development agreement, what jurisdiction's law applies?": "governed",
		"Can either party terminate for convenience?":                                  "convenience",
		"Does the agreement restrict assignment?":                                      "successors",
		"Is there a cap on liability?":                                                 "aggregate",
		"How much notice stops the agreement from renewing?":                           "automatically",
		"What audit rights does the buyer have?":                                       "books",
	} {
		if got := ClauseWords(q); !strings.Contains(got, want) {
			t.Errorf("ClauseWords(%q) = %q, want %q among them", q, got, want)
		}
	}
	for _, q := range []string{"What does PEP 8 say about tabs?", "What is the base fee for zone Z6?", ""} {
		if got := ClauseWords(q); got != "" {
			t.Errorf("ClauseWords(%q) = %q, want none", q, got)
		}
	}
}

type mapThesaurus map[string][]string

func (m mapThesaurus) Synonyms(w string, first bool) []string {
	s := m[w]
	if first && len(s) > 1 {
		return s[:1]
	}
	return s
}

func TestSynonymWords(t *testing.T) {
	th := mapThesaurus{"terminate": {"end", "stop"}, "contract": {"agreement", "the"}, "what": {"which"}}
	// "what" is a stop word, and so is the synonym "the"; "ends" is not
	// "end", which is added.
	if got := SynonymWords("What ends when you terminate the contract?", th, true); got != "end stop agreement" {
		t.Errorf("all senses: %q", got)
	}
	if got := SynonymWords("Terminate the contract", th, false); got != "end agreement" {
		t.Errorf("first sense: %q", got)
	}
	if got := SynonymWords("what is it", th, true); got != "" {
		t.Errorf("stop words only: %q", got)
	}
}
