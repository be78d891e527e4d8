package verify

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestLeadScanAgrees: the lead scans find exactly what the patterns find,
// on texts built from the pieces they match and around them.
func TestLeadScanAgrees(t *testing.T) {
	pieces := []string{"EUR", "eur", "usd", "$", "€", "£", "¥", "ſek", "1.000,00", "7", "30", "2026", " ", "  ", ",", ".", "million",
		"bn", "k", "x", "_", "Sept", "sept.", "May", "may", "November", "nov", "4th", "Dec", "ſeptember", "K", "ab", "\n", "é", "1,5", "%", " percent", "per cent", "twenty", "-one", "ninety", "Thirty", "hundred", "ſix", "1st", "2nd"}
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "Fees of EUR 1.000,00 are due by November 4, 2026.", "USD 5 million and $3k on May 1st, 2025; xMay 1, 2025",
		"Either party may end this agreement with ninety (90) days' written notice; fees of EUR 1.000,00 are due by 4 November 2026 under clause 7.2."}
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, c := range []struct {
		name string
		scan *leadScan
	}{{"amountPre", amountPreScan}, {"mdy", mdyScan}, {"dmy", dmyScan}, {"percent", percentScan}, {"wordNum", wordNumScan}} {
		for _, text := range texts {
			want := c.scan.re.FindAllStringSubmatchIndex(text, -1)
			got := c.scan.FindAllStringSubmatchIndex(text)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q: got %v, want %v", c.name, text, got, want)
			}
		}
	}
}
