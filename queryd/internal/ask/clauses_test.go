package ask

import (
	"strings"
	"testing"
)

func TestClauseReport(t *testing.T) {
	t.Parallel()
	whole := ClauseFit{Text: "7.2 Either party may end this agreement."}
	cut := ClauseFit{Text: "7.3 The supplier shall", Cut: true}
	out := ClauseFit{LeftOut: true}
	cases := []struct {
		name   string
		r      ClauseReport
		in     Status
		want   Status
		notes  []string // substrings, one per note, in order
		amount int
	}{
		{"clause 7.2 in two documents, both whole", ClauseReport{References: 1, Clauses: []NamedClause{
			{"clause 7.2", "a.md", whole}, {"clause 7.2", "b.md", whole}}}, Found, Found, nil, 0},
		{"a cut clause", ClauseReport{References: 1, Clauses: []NamedClause{{"clause 7.3", "msa.md", cut}}},
			Found, PartlyFound, []string{"clause 7.3 of msa.md is longer than its share"}, 1},
		{"more clauses than fit", ClauseReport{References: 3, Clauses: []NamedClause{
			{"clause 1", "a.md", whole}, {"clause 2", "a.md", out}, {"clause 3", "a.md", out}}},
			Found, PartlyFound, []string{"2 named sections did not fit", "clause 2 (a.md), clause 3 (a.md)"}, 1},
		{"an extractive not_found keeps its status and note", ClauseReport{References: 1, Clauses: []NamedClause{
			{"clause 2", "a.md", out}}}, NotFound, NotFound, []string{"1 named section did not fit"}, 1},
		{"unread matches with one reference and no layer", ClauseReport{References: 1, Unread: 4,
			Clauses: []NamedClause{{"clause 4", "a.md", whole}}}, Found, Found,
			[]string{"4 more matching sections were not read", "Name a layer"}, 1},
		{"unread matches at the candidate limit with two references", ClauseReport{References: 2, Unread: 40, AtLeast: true,
			Clauses: []NamedClause{{"clause 4", "a.md", whole}}}, Found, Found,
			[]string{"at least 40 more matching sections", "fewer clauses", "Name a layer"}, 1},
		{"unread matches with two references in a named layer", ClauseReport{References: 2, Unread: 3, LayersNamed: true,
			Clauses: []NamedClause{{"clause 4", "a.md", whole}}}, Found, Found,
			[]string{"3 more matching sections", "fewer clauses"}, 1},
		{"candidate limit hit but all read", ClauseReport{References: 1, AtLeast: true}, Found, Found,
			[]string{"more sections may match"}, 1},
		{"references past the tenth", ClauseReport{References: 10, Ignored: []string{"clause 11", "clause 12"}},
			Found, Found, []string{"not looked up: clause 11, clause 12"}, 1},
	}
	for _, c := range cases {
		got, notes := c.r.Apply(c.in)
		if got != c.want {
			t.Errorf("%s: status %s, want %s", c.name, got, c.want)
		}
		if len(notes) != c.amount {
			t.Errorf("%s: %d notes %q, want %d", c.name, len(notes), notes, c.amount)
			continue
		}
		all := strings.Join(notes, "\n")
		for _, sub := range c.notes {
			if !strings.Contains(all, sub) {
				t.Errorf("%s: notes %q lack %q", c.name, notes, sub)
			}
		}
	}
}

func TestStatusFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		score float64
		want  Status
	}{{0.95, Found}, {0.8, Found}, {0.79, PartlyFound}, {0.5, PartlyFound}, {0.49, NotFound}, {0, NotFound}} {
		if got := StatusFor(c.score, 0.8, 0.5); got != c.want {
			t.Errorf("StatusFor(%v) = %s, want %s", c.score, got, c.want)
		}
	}
}

func TestNextStep(t *testing.T) {
	t.Parallel()
	if s := NextStep(Found, nil, false, true); s != "" {
		t.Errorf("found has a next step: %q", s)
	}
	if s := NextStep(NotFound, []string{"a"}, false, false); !strings.Contains(s, "ingestd add DIR --layer NAME") {
		t.Errorf("uncovered question: %q", s)
	}
	if s := NextStep(PartlyFound, []string{"contracts"}, true, true); !strings.Contains(s, "contracts") {
		t.Errorf("named layer: %q", s)
	}
}
