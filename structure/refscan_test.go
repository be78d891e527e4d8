package structure

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/rescan"
)

// refScanPieces are what the texts of the agreement tests are built from:
// keywords in each case and with the characters case folding makes
// letters (ſ is s), what stands before and after them, numbers of every
// shape the bare patterns take, and letters and numbers outside ASCII
// (\p{L} and \p{N}: é, ٣, Ⅻ, ½).
var refScanPieces = []string{"clause", "Clauses", "CL.", "cl", "section", "SECT.", "sec.", "ſection", "ſch.", "Article", "arts", "art.",
	"Paragraphs", "paras.", "para", "Annex", "annexes", "Appendix", "appendices", "app.", "Schedule", "schedules", "sch.",
	"no.", "No", " ", "  ", "\t", "\u00a0", "\n", "§", "§§", "¶", "(", ")", "(2)", "(b)", "(iv)", "(abcde)", ".", ",", "-", "_", "x", "é", "٣", "Ⅻ", "½",
	"7", "12", "1234", "12345", "7.2", "4.3.2", "1.2.3.4.5", "12345.6", "A.1", "B.1.1.1", "T.81", "7(2)(b)", "123(4)", "1234(5)", "\xff", "\xe2\x82",
	"clause 7.2", "§ 4", "Art. 12", "Annex II", "clauses 7.2 and 7.3"}

func refScanTexts(n int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "Under clause 7.2 and Art. 12, does § 4 or Annex II override 4.3.2 for version 1.2?",
		"Either party may end this agreement with ninety (90) days' written notice; fees of EUR 1.000,00 are due by 4 November 2026 under clause 7.2.",
		"xclause 7 (clause 8) sub-section 9 §§\u00a03 ¶7 B.1.1.1 of T.81 7(2)(b) 1234.5678"}
	for range n {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(refScanPieces[r.IntN(len(refScanPieces))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// checkRefScansAgree fails t where a scan finds other matches in text
// than its pattern, or, with tails, another first match in a tail of text
// (as ParseReferences searches for keywords).
func checkRefScansAgree(t *testing.T, text string, tails bool) {
	t.Helper()
	for _, s := range []*rescan.Scan{refKeywordScan, signScan, bareAnnexScan, bareParenScan, bareDottedScan} {
		re := s.Regexp()
		if got, want := s.FindAllStringIndex(text), re.FindAllStringIndex(text, -1); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on %q: got %v, want %v", re, text, got, want)
		}
		for i := range len(text) {
			if !tails {
				break
			}
			if got, want := s.FindStringSubmatchIndex(text[i:]), re.FindStringSubmatchIndex(text[i:]); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q: got %v, want %v (first match)", re, text[i:], got, want)
			}
		}
	}
}

// TestRefScansAgree: the scans find exactly what the reference patterns
// find.
func TestRefScansAgree(t *testing.T) {
	t.Parallel()
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i, text := range refScanTexts(n) {
		checkRefScansAgree(t, text, i%5 == 0)
	}
}

// FuzzRefScans: the scans agree with the reference patterns on any text.
func FuzzRefScans(f *testing.F) {
	for _, text := range refScanTexts(20) {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkRefScansAgree(t, text, true)
	})
}
