package retrieve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// fixtureContract writes a contract between two parties in the way real
// ones are laid out: a preamble and recitals full of both names, clauses
// that call them by their roles, a notices block and a signature block with
// the names again, and one governing-law clause naming neither.
func fixtureContract(kind, a, b, roleA, roleB, state, city string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s AGREEMENT\n\nThis %s Agreement is made between %s Holdings Inc. (\"%s\" or the \"%s\") and %s Ltd. (\"%s\" or the \"%s\").\n\n",
		strings.ToUpper(kind), kind, a, a, roleA, b, b, roleB)
	fmt.Fprintf(&sb, "RECITALS\n\nA. %s makes and sells goods of its own design, and %s wishes to sell them. B. %s and %s have agreed the clauses below, and %s has read them with %s.\n\n",
		a, b, a, b, b, a)
	clauses := []string{
		"Services. The %[2]s shall carry out the work described in the schedule, with the care a skilled provider would use, and shall report each month to the %[1]s on what was done.",
		"Fees. The %[1]s shall pay the %[2]s the fees in the schedule within thirty days of each invoice; late sums bear interest at two per cent over the base rate until paid.",
		"Term. This Agreement runs for three years from the date above and may be renewed by written consent for further periods of one year each.",
		"Confidentiality. Each party keeps the other's business information secret, uses it only for this Agreement, and returns or destroys it when the Agreement ends.",
		"Intellectual property. Marks and designs of the %[1]s stay the %[1]s's; the %[2]s gets only the use needed to perform, which ends with this Agreement.",
		"Insurance. The %[2]s keeps liability insurance of at least one million for each event during the term and shows proof of it on request.",
		"Governing law. This Agreement shall be governed by and construed in accordance with the laws of the State of " + state + ", without regard to its conflict of law rules, and the courts of " + city + " shall hear any dispute.",
		"Entire agreement. This document is the whole of what the parties agreed and replaces every earlier understanding, written or spoken, on its subject.",
	}
	for i, c := range clauses {
		if strings.Contains(c, "%") {
			c = fmt.Sprintf(c, roleA, roleB)
		}
		fmt.Fprintf(&sb, "%d. %s\n\n", i+1, c)
	}
	fmt.Fprintf(&sb, "NOTICES\n\nIf to %s: %s Holdings Inc., 1 Harbour Road, attention of the general counsel of %s. If to %s: %s Ltd., 9 Mill Lane, attention of the managing director of %s. Notices to %s or %s are given in writing.\n\n",
		a, a, a, b, b, b, a, b)
	fmt.Fprintf(&sb, "IN WITNESS WHEREOF %s and %s have signed this %s Agreement.\n\n%s Holdings Inc.\nBy: ____ for %s\n\n%s Ltd.\nBy: ____ for %s\n",
		a, b, kind, a, a, b, b)
	return sb.String()
}

// TestDocumentEvidence (issue 12, class 1): a question that names the
// parties of one contract and asks for a clause gets that contract's clause
// first, not the preamble, notices or signature block where the names
// recur, and not another contract's clause of the same kind. With the
// document evidence off (DocTermDiscount and DocContext 0) the names'
// chunks win, so the fixture shows the issue.
func TestDocumentEvidence(t *testing.T) {
	t.Parallel()
	st, layer := ingestFixture(t, contractFixtures(), jobs.Layer{Name: "contracts", Preset: "contracts", ChunkSize: 400})
	first := firstLexical(t, st, layer.ID, true)
	for _, c := range evidenceCases {
		file, text := first(c.q, noClauseWords(DefaultParams()))
		if file != c.file || !strings.Contains(text, c.want) {
			t.Errorf("%q: want the chunk of %s holding %q first, got %s: %.80q", c.q, c.file, c.want, file, text)
		}
		off := noClauseWords(DefaultParams())
		off.DocTermDiscount, off.DocContext = 0, 0
		if file, text := first(c.q, off); file == c.file && strings.Contains(text, c.want) {
			t.Errorf("%q: without document evidence the names' chunks should come first (the fixture no longer shows the issue), got %.80q", c.q, text)
		}
	}
}

// TestDocumentEvidenceContractsOnly (issue 31): the same contracts in a
// layer without the contracts preset get no document evidence, so the
// names' chunks come first as with the evidence off, unless
// DocEvidenceEverywhere brings it to every layer.
func TestDocumentEvidenceContractsOnly(t *testing.T) {
	t.Parallel()
	st, layer := ingestFixture(t, contractFixtures(), jobs.Layer{Name: "agreements", ChunkSize: 400})
	first := firstLexical(t, st, layer.ID, false)
	for _, c := range evidenceCases {
		if file, text := first(c.q, DefaultParams()); file == c.file && strings.Contains(text, c.want) {
			t.Errorf("%q: a layer without the contracts preset got the document evidence: %.80q first", c.q, text)
		}
		every := DefaultParams()
		every.DocEvidenceEverywhere = true
		if file, text := first(c.q, every); file != c.file || !strings.Contains(text, c.want) {
			t.Errorf("%q: with DocEvidenceEverywhere want the chunk of %s holding %q first, got %s: %.80q", c.q, c.file, c.want, file, text)
		}
	}
	// strata_ask's engine sets the option: a run's parameters carry it.
	ctx := context.Background()
	for _, on := range []bool{false, true} {
		eng := New(st, Options{Embedder: bow{}, KeywordSlots: 1, DocEvidenceEverywhere: on})
		if got := eng.Query(Query{Text: "which law governs", TopK: 3}).Params(ctx).DocEvidenceEverywhere; got != on {
			t.Errorf("Options.DocEvidenceEverywhere %v: the run's parameters say %v", on, got)
		}
	}
}

// evidenceCases are questions naming the parties of one fixture contract
// and a clause of it.
var evidenceCases = []struct{ q, file, want string }{
	{"Which law governs the sponsorship agreement between Halvorsen and Lakeside?", "halvorsen-lakeside.txt", "State of Oregon"},
	{"What law governs the Quillon and Marrowby distribution agreement?", "quillon-marrowby.txt", "State of Texas"},
	{"Which insurance must the agency keep under the promotion agreement between Ostrava and Pellam?", "ostrava-pellam.txt", "liability insurance"},
}

// noClauseWords turns the contracts preset's clause words off, so that a
// search of a contracts layer differs from another layer's only by the
// document evidence.
func noClauseWords(p Params) Params {
	p.ClauseWords = 0
	return p
}

// firstLexical returns a function giving the file and text of the
// lexical channel's first hit in the layer (contracts: a layer of the
// contracts preset is searched).
func firstLexical(t *testing.T, st *store.Corpus, layerID int64, contracts bool) func(q string, p Params) (file, text string) {
	ctx := context.Background()
	eng := New(st, Options{Embedder: bow{}, KeywordSlots: 1})
	return func(q string, p Params) (file, text string) {
		lex, err := eng.Query(Query{Text: q, TopK: 3, Params: &p}).Lexical(ctx, []int64{layerID}, 10, contracts)
		if err != nil {
			t.Fatal(err)
		}
		if len(lex.Hits) == 0 {
			return "", ""
		}
		h, err := st.Chunks(ctx, []int64{lex.Hits[0].ChunkID})
		if err != nil {
			t.Fatal(err)
		}
		return h[lex.Hits[0].ChunkID].File, h[lex.Hits[0].ChunkID].Text
	}
}

// contractFixtures are ten contracts of the same shape: the names are
// rare in the layer, the clause words everywhere.
func contractFixtures() map[string]string {
	files := map[string]string{
		"halvorsen-lakeside.txt": fixtureContract("Sponsorship", "Halvorsen", "Lakeside", "Sponsor", "Club", "Oregon", "Portland"),
		"quillon-marrowby.txt":   fixtureContract("Distribution", "Quillon", "Marrowby", "Supplier", "Distributor", "Texas", "Austin"),
		"ostrava-pellam.txt":     fixtureContract("Promotion", "Ostrava", "Pellam", "Company", "Agency", "Ohio", "Columbus"),
	}
	// More contracts of the same shape, as a layer of contracts has: the
	// names are rare in the layer, the clause words everywhere.
	for i, p := range [][2]string{{"Brennic", "Tolvane"}, {"Caskell", "Verrow"}, {"Dunmore", "Sallet"},
		{"Eskarth", "Moravel"}, {"Fenwyck", "Ulstead"}, {"Garrowby", "Tiernan"}, {"Hollins", "Rackmere"}} {
		files[strings.ToLower(p[0]+"-"+p[1])+".txt"] = fixtureContract([]string{"Supply", "Licence", "Services"}[i%3],
			p[0], p[1], "Customer", "Provider", []string{"Nevada", "Maine", "Utah"}[i%3], []string{"Reno", "Augusta", "Provo"}[i%3])
	}
	return files
}

// TestPerDocument: after fusion, a document's chunks beyond its first n go
// behind every other chunk in their order; chunks of unknown document stay.
func TestPerDocument(t *testing.T) {
	order := []*Candidate{{ChunkID: 1, DocumentID: 7}, {ChunkID: 2, DocumentID: 7}, {ChunkID: 3, DocumentID: 7},
		{ChunkID: 4, DocumentID: 8}, {ChunkID: 5}, {ChunkID: 6}, {ChunkID: 7, DocumentID: 8}}
	ids := func(cs []*Candidate) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ChunkID)
		}
		return out
	}
	for _, c := range []struct {
		n    int
		want []int64
	}{{0, []int64{1, 2, 3, 4, 5, 6, 7}}, {1, []int64{1, 4, 5, 6, 2, 3, 7}}, {2, []int64{1, 2, 4, 5, 6, 7, 3}}} {
		if got := ids(perDocument(slices.Clone(order), c.n)); !slices.Equal(got, c.want) {
			t.Errorf("perDocument n %d: %v, want %v", c.n, got, c.want)
		}
	}
}
