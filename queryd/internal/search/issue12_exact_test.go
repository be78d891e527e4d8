package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/jobs"
)

// exactFixture is a layer written for the exact-lookup tests of issue 12:
// twelve short agreements that each have a clause 2.2, a regulation of
// Articles 1 to 12, a statute of § sections, a manual whose clause 4 is a
// plain numbered clause, and release notes full of version numbers.
func exactFixture(t *testing.T) *Searcher {
	t.Helper()
	files := map[string]string{
		"regulation.txt": "Article 1 Scope\n\nThis regulation covers the archiving of tax records.\n\n" +
			"Article 2 Definitions\n\nA record is any document kept for tax purposes.\n\n" +
			"Article 12 Termination\n\nEither party may end the archiving mandate with three months of notice in writing.\n",
		"statute.txt": "§ 3 Storage\n\nRecords are stored in the member state.\n\n" +
			"§ 4 Retention\n\nRecords are retained for ten years after the end of the tax year.\n",
		"manual.txt": "1 Overview\n\nThis manual describes the archive software.\n\n2 Setup\n\nInstall the archive server first.\n\n" +
			"3 Backups\n\nBackups run every night.\n\n4 Retention\n\nThe software keeps old archives until an operator deletes them.\n",
		"release-notes.md": "# Release notes\n\nVersion 7.2 added retention reports. The hosting budget of EUR 7.2 million " +
			"and the 7.2 kg server rack are described in the plan.\n",
		"agreements/filtered.md": "---\nowner: legal\n---\n# Filtered agreement\n\n1 Scope\n\nThis filtered agreement covers hosting.\n\n" +
			"2 Payment\n\n2.1 Invoices\n\nInvoices are sent every quarter.\n\n2.2 Late payment\n\nLate payment carries interest of two percent a month.\n",
	}
	for i := 1; i <= 12; i++ {
		files[fmt.Sprintf("agreements/a%02d.txt", i)] = fmt.Sprintf("1 Scope\n\nThis agreement covers hosting for customer number %d.\n\n"+
			"2 Payment\n\n2.1 Invoices\n\nInvoices are sent every month.\n\n"+
			"2.2 Late payment\n\nLate payment of an invoice carries interest of four percent a year.\n", i)
	}
	files["annex.txt"] = "Annex B Data formats\n\nB.1 General\n\nB.1.1 Parts\n\nB.1.1.1 Parameters\n\n" +
		"Parameters are integers that the decoder reads before the data.\n\nB.1.1.2 Markers\n\nMarkers start each segment.\n"
	// A section 7.2 exists, so a "7.2" that is a version or an amount has
	// something to wrongly match.
	files["pricing.txt"] = "7 Hosting\n\n7.1 Base fee\n\nThe base fee is fixed.\n\n7.2 Surcharges\n\nSurcharges apply to rack space of more than 7.2 kg.\n"
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "docs"}, files)
	return f.searcher(t)
}

func countExact(resp *Response) int {
	n := 0
	for _, r := range resp.Results {
		if r.Match == "exact" {
			n++
		}
	}
	return n
}

// TestIssue12ExactLookup holds one regression test per class of issue 12
// that concerns exact section lookup (5, 6 and 7), on the fixture above.
func TestIssue12ExactLookup(t *testing.T) {
	s := exactFixture(t)

	// Class 5: numbers that are not clauses produce no exact section, and
	// exact sections never push the results over top_k.
	t.Run("class5-numbers-not-clauses", func(t *testing.T) {
		for _, q := range []string{"What changed in version 7.2?", "Is the EUR 7.2 million budget enough?",
			"Which rack weighs 7.2 kg?", "What did the 7.2 billion deal include?", "Why did costs rise 7.2 %?"} {
			resp := mustSearch(t, s, Request{Query: q, Layers: []string{"docs"}, TopK: 5})
			if n := countExact(resp); n > 0 {
				t.Errorf("%q: %d exact results, want none: %v", q, n, files(resp))
			}
			if len(resp.Results) > 5 {
				t.Errorf("%q: %d results for top_k 5", q, len(resp.Results))
			}
		}
		resp := mustSearch(t, s, Request{Query: "What does clause 7.2 say?", Layers: []string{"docs"}})
		if countExact(resp) != 1 || resp.Results[0].File != "pricing.txt" {
			t.Fatalf("the fixture needs a section 7.2 in pricing.txt; clause 7.2 found %v", files(resp))
		}
		resp = mustSearch(t, s, Request{Query: "What does clause 2.2 say about late payment?", Layers: []string{"docs"}, TopK: 5})
		if len(resp.Results) != 5 || countExact(resp) != 5 {
			t.Errorf("clause 2.2, top_k 5: %d results, %d exact; want 5 exact and nothing more", len(resp.Results), countExact(resp))
		}
		if !strings.Contains(resp.Note, "8 more sections match the references and were not returned (at most 5 are).") {
			t.Errorf("note %q: want the 8 sections of clause 2.2 not returned, at most 5 returned", resp.Note)
		}
	})

	// Class 6: reference forms.
	t.Run("class6-reference-forms", func(t *testing.T) {
		resp := mustSearch(t, s, Request{Query: "termination clause Article 12", Layers: []string{"docs"}})
		if countExact(resp) != 1 || resp.Results[0].File != "regulation.txt" || !strings.Contains(resp.Results[0].ClausePath, "Article 12") {
			t.Errorf("termination clause Article 12: %v, want Article 12 of regulation.txt exact first", files(resp))
		}
		for _, q := range []string{"What does § 4 say?", "What does §4 say?"} {
			resp = mustSearch(t, s, Request{Query: q, Layers: []string{"docs"}})
			if countExact(resp) != 1 || resp.Results[0].File != "statute.txt" {
				t.Errorf("%q: exact %d, first %v; want only statute.txt's § 4, not manual.txt's clause 4", q, countExact(resp), files(resp))
			}
		}
		const missing = "No document of the searched layers (docs) has Article 99."
		resp = mustSearch(t, s, Request{Query: "What does Article 99 say about termination?", Layers: []string{"docs"}})
		if countExact(resp) != 0 || !strings.Contains(resp.Note, missing) || resp.Confidence != "low" {
			t.Errorf("Article 99: %d exact, note %q; want none and the note %q", countExact(resp), resp.Note, missing)
		}
		resp = mustSearch(t, s, Request{Query: "What does clause 2.2 say?", Layers: []string{"docs"}})
		if strings.Contains(resp.Note, "no section of that number") {
			t.Errorf("clause 2.2 exists, but the note says %q", resp.Note)
		}
		resp = mustSearch(t, s, Request{Query: "Is 9.9 about hosting?", Layers: []string{"docs"}})
		if strings.Contains(resp.Note, "no section of that number") {
			t.Errorf("a bare number is not an explicit reference, but the note says %q", resp.Note)
		}
	})

	// Class 7: duplicates and notes.
	t.Run("class7-duplicates-and-notes", func(t *testing.T) {
		resp := mustSearch(t, s, Request{Query: "Article 12 termination notice mandate", Layers: []string{"docs"}, TopK: 5})
		if countExact(resp) != 1 {
			t.Fatalf("Article 12: %d exact results", countExact(resp))
		}
		for _, r := range resp.Results[1:] {
			if r.File == "regulation.txt" && strings.Contains(r.Text, "three months of notice") {
				t.Errorf("the chunk holding Article 12 came back too: %q", r.Text)
			}
		}
		// Thirteen agreements have a clause 2.2; ten come back exact, the
		// other three as ordinary results, so none is "not returned".
		resp = mustSearch(t, s, Request{Query: "clause 2.2 late payment interest invoice", Layers: []string{"docs"}, TopK: 20})
		if countExact(resp) != 10 {
			t.Fatalf("clause 2.2, top_k 20: %d exact, want 10", countExact(resp))
		}
		exactFiles := map[string]bool{}
		for _, r := range resp.Results {
			if r.Match == "exact" {
				exactFiles[r.File] = true
			} else if exactFiles[r.File] && strings.Contains(r.Text, "Late payment") {
				t.Errorf("%s's clause 2.2 came back exact and in an ordinary chunk: %q", r.File, r.Text)
			}
		}
		ordinary := 0
		for _, r := range resp.Results {
			if r.Match != "exact" && strings.HasPrefix(r.File, "agreements/") && strings.Contains(r.Text, "Late payment") {
				ordinary++
			}
		}
		if ordinary != 3 {
			t.Errorf("%d other agreements' clause 2.2 came back as ordinary results, want 3: %v", ordinary, files(resp))
		}
		if strings.Contains(resp.Note, "more sections match") {
			t.Errorf("note %q counts sections that came back as ordinary results", resp.Note)
		}
		// The filter note counts the exact result.
		resp = mustSearch(t, s, Request{Query: "clause 2.2", Layers: []string{"docs"}, MetadataFilter: map[string]string{"owner": "legal"}})
		if countExact(resp) != 1 {
			t.Fatalf("clause 2.2 filtered: %d exact, want 1 (%v)", countExact(resp), files(resp))
		}
		want := fmt.Sprintf("Only %d passages match metadata_filter", len(resp.Results))
		if !strings.Contains(resp.Note, want) || strings.Contains(resp.Note, "Only 0 passages") {
			t.Errorf("note %q, want %q", resp.Note, want)
		}
	})

	// Class 10: an exact section the question names is a confident answer
	// whatever its words' similarity; a bare "7.2" that may be a version
	// lifts the level to medium only; a question naming nothing keeps the
	// similarity marks.
	t.Run("class10-named-section-is-confident", func(t *testing.T) {
		for _, q := range []string{"What does Article 12 say?", "Explain § 4.", "What does B.1.1.1 of the annex say about parameters?"} {
			resp := mustSearch(t, s, Request{Query: q, Layers: []string{"docs"}, TopK: 3})
			if countExact(resp) == 0 {
				t.Fatalf("%q: no exact section (%v)", q, files(resp))
			}
			if resp.Confidence != "high" || resp.Warning != "" {
				t.Errorf("%q: confidence %s %q, want high without a warning", q, resp.Confidence, resp.Warning)
			}
		}
		resp := mustSearch(t, s, Request{Query: "What does B.1.1.1 of the annex say about parameters?", Layers: []string{"docs"}, TopK: 3})
		if resp.Results[0].Match != "exact" || resp.Results[0].File != "annex.txt" || !strings.Contains(resp.Results[0].Text, "integers") {
			t.Errorf("B.1.1.1 without a keyword: first result %s %q, want annex.txt's clause exact", resp.Results[0].File, resp.Results[0].Text)
		}
		resp = mustSearch(t, s, Request{Query: "7.2 surcharges", Layers: []string{"docs"}, TopK: 3})
		if countExact(resp) == 1 && resp.Confidence == "low" {
			t.Errorf("bare 7.2 matching a section: confidence low, want at least medium")
		}
		resp = mustSearch(t, s, Request{Query: "What does Article 99 say about penguins?", Layers: []string{"docs"}, TopK: 3})
		if countExact(resp) != 0 || resp.Confidence == "high" {
			t.Errorf("Article 99 (absent): %d exact, confidence %s; want none and not high", countExact(resp), resp.Confidence)
		}
	})
}
