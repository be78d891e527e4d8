package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/schema"
)

// TestClauseWordsForContracts is issue 12 class 1's vocabulary half, on
// agreements we wrote: the question asks which law governs, the clause says
// "construed in accordance with the laws of", and another clause says "law"
// three times. In a layer of the contracts preset the clause words put the
// governing-law clause first; with ClauseWords 0, or in a layer without the
// preset, the other clause wins, so the test fails without the rule.
func TestClauseWordsForContracts(t *testing.T) {
	contract := func(a, b string) string {
		return fmt.Sprintf("SERVICES AGREEMENT\n\nThis Services Agreement is made between %[1]s Inc. (\"%[1]s\") and %[2]s Ltd. (\"%[2]s\").\n\n"+
			"1. Services. %[2]s shall provide hosting services to %[1]s as described in the order form.\n\n"+
			"2. Trade secrets notice. Nothing in this agreement limits any right under federal law or state law; "+
			"the trade secret law of each place still applies, and %[2]s may report a suspected violation of law to an official.\n\n"+
			"3. Fees. %[1]s shall pay the fees within thirty days of each invoice.\n\n"+
			"4. Choice of law. This agreement shall be construed and enforced in accordance with the laws of the State of Delaware, "+
			"without regard to its conflict of laws principles.\n\n"+
			"5. Notices. Notices to %[1]s or %[2]s go to the addresses above.\n\n"+
			"IN WITNESS WHEREOF %[1]s and %[2]s sign this agreement.\n", a, b)
	}
	files := map[string]string{
		"acme-globex.txt":    contract("Acme", "Globex"),
		"initech-hooli.txt":  contract("Initech", "Hooli"),
		"umbrella-wayne.txt": contract("Umbrella", "Wayne"),
	}
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "contracts", Preset: "contracts", AnswerMode: schema.AnswerExtractive, ChunkSize: 200}, files)
	f.ingest(t, jobs.Layer{Name: "plain", ChunkSize: 200}, files)
	q := "Which law governs the agreement between Acme and Globex?"
	first := func(s *Searcher, layer string) Result {
		resp := mustSearch(t, s, Request{Query: q, Layers: []string{layer}, TopK: 3})
		if len(resp.Results) == 0 {
			t.Fatalf("%s: no results", layer)
		}
		return resp.Results[0]
	}
	// The fusion weights USE-lite's row of model_search_params has (the
	// bag-of-words test vectors have none), so the lexical channel leads.
	useLite := func(p *retrieve.Params) { p.LexicalWeight, p.VectorWeight = 1, 0.15 }
	s := f.searcher(t, func(o *Options) { o.Tune = useLite })
	if r := first(s, "contracts"); r.File != "acme-globex.txt" || !strings.Contains(r.Text, "construed and enforced") {
		t.Errorf("contracts preset: first result %s %q, want acme-globex.txt's choice-of-law clause", r.File, r.Text)
	}
	off := f.searcher(t, func(o *Options) { o.Tune = func(p *retrieve.Params) { useLite(p); p.ClauseWords = 0 } })
	if r := first(off, "contracts"); strings.Contains(r.Text, "construed and enforced") {
		t.Errorf("without clause words the choice-of-law clause still came first: the fixture does not test the rule")
	}
	if r := first(s, "plain"); strings.Contains(r.Text, "construed and enforced") {
		t.Errorf("a layer without the contracts preset got the clause words")
	}
}
