package route

import (
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Fixture layers for class 8 of issue 12: descriptions as a user writes
// them with `ingestd add --description`, a few patterns, one of them a
// short common word ("go") and one an acronym ("EU").
var described = []store.Layer{
	{ID: 1, Name: "payments", Description: "SEPA credit transfer and instant payment rulebooks, reason codes and message formats",
		RoutingPatterns: []string{`/\bpacs\.\d+/`}},
	{ID: 2, Name: "handbook", Description: "Employee handbook: annual leave, sick days, travel expenses and salaries"},
	{ID: 3, Name: "goblog", Description: "Articles from the Go blog on the Go programming language, its compiler, modules and concurrency",
		RoutingPatterns: []string{"go"}},
	{ID: 4, Name: "gdpr", Description: "The EU General Data Protection Regulation: personal data, consent, controllers and processors",
		RoutingPatterns: []string{"EU"}},
	{ID: 5, Name: "contracts", Description: "Supplier and distribution agreements: termination, liability, confidentiality and governing law"},
	{ID: 6, Name: "undescribed"},
}

// TestRouteByDescription measures routing by patterns and descriptions on
// questions written for the fixture layers: each must go to its layer, or
// (want "") to no layer at all.
func TestRouteByDescription(t *testing.T) {
	t.Parallel()
	cases := []struct{ q, want, by string }{
		{"Which reason codes reject an instant payment?", "payments", "description"},
		{"What does a pacs.008 carry?", "payments", "pattern"},
		{"How many sick days can an employee take?", "handbook", "description"},
		{"Are travel expenses reimbursed?", "handbook", "description"},
		{"How do Go modules pick a version?", "goblog", "pattern"},
		{"What did the compiler team change in generics?", "goblog", "description"},
		{"When may a controller process personal data without consent?", "gdpr", "description"},
		{"What does the EU say about data portability?", "gdpr", "pattern"},
		{"Can the supplier end the agreement for convenience?", "contracts", "description"},
		{"Which governing law applies to the distribution agreement?", "contracts", "description"},
		// A short common word as a pattern must not pull another layer's
		// question ("go" in a contract question; "eu" lower-case).
		{"How long does the confidentiality duty go on after termination?", "contracts", "description"},
		{"Does the liability cap go beyond the fees?", "contracts", "description"},
		// Nothing clearly leads: every layer.
		{"What is the capital of Peru?", "", ""},
		{"Which rules apply?", "", ""},
	}
	right := 0
	for _, c := range cases {
		d := Decide(c.q, described)
		got, by := "", ""
		if d.Routed {
			if len(d.Layers) == 1 {
				got, by = d.Layers[0].Name, d.Why[0].By
			} else {
				got = "several"
			}
		}
		if got == c.want && by == c.by {
			right++
		} else {
			t.Errorf("%q: routed to %q by %q, want %q by %q (scores %+v)", c.q, got, by, c.want, c.by,
				DescriptionScores(c.q, described))
		}
	}
	t.Logf("routing by patterns and descriptions: %d of %d fixture questions right", right, len(cases))
}

// TestShortPatterns: a keyword pattern of fewer than MinPatternChars
// letters routes alone only as an acronym written in capitals; otherwise
// only with the description's support.
func TestShortPatterns(t *testing.T) {
	t.Parallel()
	layers := []store.Layer{
		{ID: 1, Name: "goblog", Description: "Go blog articles", RoutingPatterns: []string{"go"}},
		{ID: 2, Name: "gdpr", Description: "data protection", RoutingPatterns: []string{"EU"}},
		{ID: 3, Name: "other"},
	}
	for q, want := range map[string]string{
		"How far does the notice period go?":  "",       // "go" alone, no support
		"go blog articles on errors":          "goblog", // "blog", "articles" support it
		"What does the EU require?":           "gdpr",   // an acronym as written
		"how does the eu regulation compare?": "",       // lower-case: weak, unsupported
	} {
		d := Decide(q, layers)
		got := ""
		if d.Routed {
			got = d.Chosen()[0]
		}
		if got != want {
			t.Errorf("%q: routed to %q, want %q", q, got, want)
		}
	}
}
