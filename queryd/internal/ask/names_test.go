package ask

import (
	"reflect"
	"strings"
	"testing"
)

func texts(ns []Name) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.Text)
	}
	return out
}

func TestNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q    string
		want []string
	}{
		// Each kind the spec lists.
		{"How do I size asyncio.TaskPool?", []string{"asyncio.TaskPool"}},
		{"What does max_batch_size control?", []string{"max_batch_size"}},
		{"When is TaskPool closed?", []string{"TaskPool"}},
		{"What does __init_subclass__ receive?", []string{"__init_subclass__"}},
		{`What is the default of config["timeout"]?`, []string{`config["timeout"]`}},
		{"What does reason code AC04 mean, and AT-44?", []string{"AC04", "AT-44"}},
		{"Which fields does pacs.008 carry?", []string{"pacs.008"}},
		{"Does PYTHONHASHSEED affect HEALTHCHECK?", []string{"PYTHONHASHSEED", "HEALTHCHECK"}},
		{"What does PEP 8 say about tabs, per RFC 2119 words?", []string{"PEP 8", "RFC 2119"}},
		{"what does pep 8 say about line length", []string{"pep 8"}},
		// Not names: acronyms under 8 capitals, ordinary words, clause
		// references, versions, account numbers, abbreviations.
		{"Is HTTP over JSON allowed for SEPA payments?", []string{}},
		{"What does clause 7.2 say about notice?", []string{}},
		{"What changed in 7.2.1 and section 4.3?", []string{}},
		{"What changed in version 3.11.4?", []string{}},
		{"Who owns account 12345678 or DE89370400440532013000?", []string{}},
		{"Give an example, e.g. a refund, i.e. money back", []string{}},
		{"What happened in Q3 with the top 5 mp3 files?", []string{}},
		// Amounts, years, status codes and account numbers are not
		// numbered references, whole or in part; PEP 8 and RFC 2119 are.
		{"Do SEPA transfers above EUR 1000 need a second approval?", []string{}},
		{"Is USD 500 the daily limit?", []string{}},
		{"Is the cap EUR 7.2 million?", []string{}},
		{"What changed in SEPA 2025?", []string{}},
		{"Why does the API return HTTP 404?", []string{}},
		{"Why was the payment to DE89 3704 0044 0532 0130 00 returned?", []string{}},
		{"Is DE89 3704 the start of the account?", []string{}},
		{"Does SEPA 1000 EUR need approval, and is VAT 19% due?", []string{}},
		{"Does NIST 800 follow RFC 2119 and ISO 20022?", []string{"NIST 800", "RFC 2119", "ISO 20022"}},
		{"Which of ISO 2022 and PEP 8 applies?", []string{"ISO 2022", "PEP 8"}},
		// A short code after a word that introduces one is a name.
		{"What is the base fee for tariff zone Z9?", []string{"Z9"}},
		{"Which grade B2 steels and gate A14 apply?", []string{"B2", "A14"}},
		{"Sales in Q3 and the A4 paper size", []string{}},
		// In a question written in capitals no word counts for its
		// capitals alone; codes still count.
		{"WHAT DOES THE HEALTHCHECK OPTION DO", []string{}},
		{"WHAT DOES CODE AC04 MEAN", []string{"AC04"}},
		// Each name once, in the order written.
		{"Compare AC04 with ac04 and AC04.", []string{"AC04"}},
	}
	for _, c := range cases {
		got := texts(Names(c.q))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Names(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

func TestNamesAtMostTen(t *testing.T) {
	t.Parallel()
	q := "AC01 AC02 AC03 AC04 AC05 AC06 AC07 AC08 AC09 AC10 AC11 AC12"
	got := texts(Names(q))
	if len(got) != MaxNames || got[0] != "AC01" || got[9] != "AC10" {
		t.Fatalf("Names = %q, want the first %d", got, MaxNames)
	}
}

func TestMissing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q       string
		sources []NameSource
		missing []string
	}{
		// PEP 8 matches PEP8 in the text and pep-0008 in a path.
		{"What does PEP 8 say?", []NameSource{{Text: "As PEP8 says, use spaces."}}, []string{}},
		{"What does PEP 8 say?", []NameSource{{Text: "Use spaces.", File: "peps/pep-0008.rst"}}, []string{}},
		// ... but not PEP 80 or PEP 818.
		{"What does PEP 8 say?", []NameSource{{Text: "PEP 80 and PEP 818 say otherwise.", File: "pep-0080.rst"}}, []string{"PEP 8"}},
		// Case and spacing do not matter; letters inside a longer word do.
		{"What is asyncio.TaskPool?", []NameSource{{Text: "the ASYNCIO . taskpool class"}}, []string{}},
		{"Where is AC04 used?", []NameSource{{Text: "codes XAC04 and AC045"}}, []string{"AC04"}},
		{"Where are AC04 and AT-44?", []NameSource{{Text: "AT 44 is a country code"}}, []string{"AC04"}},
	}
	for _, c := range cases {
		got := texts(Missing(Names(c.q), c.sources))
		if !reflect.DeepEqual(got, c.missing) {
			t.Errorf("Missing(%q, %+v) = %q, want %q", c.q, c.sources, got, c.missing)
		}
	}
}

func TestCheckNames(t *testing.T) {
	t.Parallel()
	both := Names("Do AC04 and AC05 apply?")
	one := []NameSource{{Text: "AC04 applies to closed accounts."}}
	none := []NameSource{{Text: "Reason codes are listed in the annex."}}
	cases := []struct {
		name           string
		status         Status
		sources        []NameSource
		clauseReturned bool
		grounded       bool
		want           Status
		related        bool
	}{
		{"all there keeps found", Found, []NameSource{{Text: "AC04 and AC05 both apply."}}, false, true, Found, false},
		{"some missing: found becomes partly_found", Found, one, false, true, PartlyFound, false},
		{"some missing keeps partly_found", PartlyFound, one, false, true, PartlyFound, false},
		{"none there: not_found with related-text note", Found, none, false, true, NotFound, true},
		{"none there, extractive: no related-text sentence", Found, none, false, false, NotFound, false},
		{"none there but a named clause came back", Found, none, true, true, PartlyFound, false},
	}
	for _, c := range cases {
		got := CheckNames(c.status, both, c.sources, c.clauseReturned, c.grounded)
		if got.Status != c.want {
			t.Errorf("%s: status %s, want %s", c.name, got.Status, c.want)
		}
		if c.want != c.status || len(got.Missing) > 0 {
			if got.Note == "" {
				t.Errorf("%s: no note", c.name)
			}
		}
		hasRelated := got.Note != "" && strings.Contains(got.Note, "related text, not the answer")
		if hasRelated != c.related {
			t.Errorf("%s: note %q, related-text sentence %v, want %v", c.name, got.Note, hasRelated, c.related)
		}
	}
	if c := CheckNames(Found, nil, none, false, true); c.Status != Found || c.Note != "" {
		t.Errorf("no names: %+v", c)
	}
}
