package verify

import (
	"strings"
	"testing"
)

// BenchmarkCheck checks a draft of 20 sentences against 10 passages of
// about 1,000 characters each, about what an answer holds.
func BenchmarkCheck(b *testing.B) {
	passage := strings.Repeat("Either party may end this agreement with ninety (90) days' written notice; fees of EUR 1.000,00 are due by 4 November 2026 under clause 7.2. ", 7)
	ps := make([]string, 10)
	for i := range ps {
		ps[i] = passage
	}
	draft := strings.Repeat(`The notice is 90 days [S1]. Fees of 1000 EUR are due on 2026-11-04 [S2]. It says "Either party may end this agreement" [S3]. `, 7)
	b.ReportAllocs()
	for b.Loop() {
		if r := Check(draft, ps); r.Status != Verified {
			b.Fatalf("%+v", r)
		}
	}
}
