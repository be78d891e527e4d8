package verify

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/rescan"
)

// scanCases are every scan with its name.
func scanCases() []struct {
	name string
	scan *rescan.Scan
} {
	cs := []struct {
		name string
		scan *rescan.Scan
	}{{"isoDate", isoDateScan}, {"dmy", dmyScan}, {"mdy", mdyScan}, {"dotDate", dotDateScan},
		{"amountPre", amountPreScan}, {"amountPost", amountPostScan}, {"percent", percentScan},
		{"number", numberScan}, {"anyNumber", anyNumberScan}, {"wordNum", wordNumScan}}
	for i, s := range codeScans {
		cs = append(cs, struct {
			name string
			scan *rescan.Scan
		}{"code" + string(rune('0'+i)), s})
	}
	return cs
}

// scanPieces are what the texts of the agreement tests are built from: the
// pieces the patterns match, what stands around them, and characters that
// case folding makes letters (ſ is s, K the Kelvin sign is k).
var scanPieces = []string{"EUR", "eur", "usd", "uſd", "no\u212a", "d\u212ak", "$", "€", "£", "¥", "ſek", "1.000,00", "7", "30", "2026",
	" ", "  ", ",", ".", "-", "'", "%", "\t", "\n", "(", ")", "/", "_", "x", "ab", "é", "\xff", "\xe2\x82",
	"million", "bn", "k", "K", "thousand", "Sept", "sept.", "May", "may", "November", "nov", "Auguſt", "4th", "Dec", "ſeptember",
	"1,5", " percent", "per cent", "twenty", "-one", "ninety", "Thirty", "hundred", "ſix", "1st", "2nd", "11", "04", "12/23/2013",
	"DE89", "3704", "AB12CD", "pacs", ".008", ".001", "AT", "AC01", "W123", "abcdefghi", "euros", "dollar", "Francs",
	// Whole facts and near misses, so that each branch of each pattern
	// is met often.
	"30 November 2026", "4th. Sept 2026", "Nov. 30, 2026", "12\rPER CENT", "5 bn EUR", "3\fm USD", "7 Pounds", "1 000 eur", "2 k$",
	"ABCDEF1", "ABCDEFG12", "AB1234567", "DE89 3704 0044 0532 0130 00", "abcdefgh.001", "abcdefghi.001", "ABCDEF-1", "ABCDEFG-12",
	"31.12.2026", "1.1.2026", "123.4.2026", "3rd", "9", "19", "May 9, 2026", "23rd November 2026", "Dec.\t9 2026", "2ND\nJAN. 2026", "2026-11-04", "20261-11-04", "eighty-one hundred", "ninety nine", "twelve thousand"}

// scanTexts are the fixed texts of the agreement tests and n texts built
// from scanPieces.
func scanTexts(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "Fees of EUR 1.000,00 are due by November 4, 2026.", "USD 5 million and $3k on May 1st, 2025; xMay 1, 2025",
		"Either party may end this agreement with ninety (90) days' written notice; fees of EUR 1.000,00 are due by 4 November 2026 under clause 7.2.",
		"IBAN DE89 3704 0044 0532 0130 00, pacs.008.001.08, AT-44, AC01 and W123 on 2026-11-04 and 4.11.2026: 7,5 % or 12 percent.",
		"It applies to site 1. It applies to site 10. twenty-one thousand, one hundred, -7, 1,1999, 1 000 000.5 EUR"}
	// Every word the patterns know, in each case, between numbers.
	var known []string
	for _, m := range []map[string]int{wordNums, months} {
		for w := range m {
			known = append(known, w)
		}
	}
	for _, m := range []map[string]float64{scales, wordScales} {
		for w := range m {
			known = append(known, w)
		}
	}
	for w := range currencyCode {
		known = append(known, w)
	}
	known = append(known, "eur", "usd", "gbp", "chf", "jpy", "sek", "nok", "dkk", "pln", "cad", "aud")
	for _, w := range known {
		for _, v := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			texts = append(texts, "12 "+v+" 4, 2026", v+" 12", v+"-"+v+" "+v, "7 "+v+" "+v)
		}
	}
	for range n {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(scanPieces[r.IntN(len(scanPieces))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// checkScansAgree fails t where a scan finds other matches than its
// pattern in text, or, with tails, another first match in a tail of text
// (as groupMatches searches).
func checkScansAgree(t *testing.T, text string, tails bool) {
	t.Helper()
	for _, c := range scanCases() {
		want := c.scan.Regexp().FindAllStringSubmatchIndex(text, -1)
		if got := c.scan.FindAllStringSubmatchIndex(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on %q: got %v, want %v", c.name, text, got, want)
		}
		wantIx := c.scan.Regexp().FindAllStringIndex(text, -1)
		if got := c.scan.FindAllStringIndex(text); !reflect.DeepEqual(got, wantIx) {
			t.Fatalf("%s on %q: got %v, want %v (FindAllStringIndex)", c.name, text, got, wantIx)
		}
		for from := range len(text) {
			if !tails {
				break
			}
			want := c.scan.Regexp().FindStringSubmatchIndex(text[from:])
			if got := c.scan.FindStringSubmatchIndex(text[from:]); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q: got %v, want %v (first match)", c.name, text[from:], got, want)
			}
		}
	}
}

// TestScanAgrees: the scans find exactly what the patterns find, on texts
// built from the pieces they match and around them.
func TestScanAgrees(t *testing.T) {
	t.Parallel()
	n := 6000
	if testing.Short() {
		n = 1000
	}
	for i, text := range scanTexts(n) {
		checkScansAgree(t, text, i%10 == 0)
	}
}

// FuzzScans: the scans agree with their patterns on any text.
func FuzzScans(f *testing.F) {
	for _, text := range scanTexts(30) {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkScansAgree(t, text, true)
	})
}

// TestScanWindow: the window of a match reaches past characters only a
// final piece consumes, as the guard of a number does.
func TestScanWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		s    *rescan.Scan
		in   string // consumed, not finally
		out  string // not consumed, or only finally
	}{
		{"number", numberScan, "0123456789.,' ", "xA;)\n"},
		{"anyNumber", anyNumberScan, "0123456789.,' ", "x-;)\n"},
		{"amountPost", amountPostScan, "0123456789.,' \tmkbEURS", ";)("},
	} {
		for _, r := range c.in {
			if !c.s.InWindow(r) {
				t.Errorf("%s: %q not in the window", c.name, r)
			}
		}
		for _, r := range c.out {
			if c.s.InWindow(r) {
				t.Errorf("%s: %q in the window", c.name, r)
			}
		}
	}
	for _, c := range scanCases() {
		if c.scan.MayStart(' ') {
			t.Errorf("%s: a match may start with a space", c.name)
		}
	}
	if !wordNumScan.Boundary() || !mdyScan.Boundary() || numberScan.Boundary() || amountPreScan.Boundary() {
		t.Errorf("boundaries: wordNum %v, mdy %v, number %v, amountPre %v", wordNumScan.Boundary(), mdyScan.Boundary(),
			numberScan.Boundary(), amountPreScan.Boundary())
	}
}
