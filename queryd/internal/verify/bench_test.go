package verify

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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

// BenchmarkCheckDraft5000 is issue 14's target: a draft of 5,000
// characters against 10 passages, with the p50 and p95 of one check
// (target p95 at most 20 ms).
func BenchmarkCheckDraft5000(b *testing.B) {
	passage := strings.Repeat("Either party may end this agreement with ninety (90) days' written notice; fees of EUR 1.000,00 are due by 4 November 2026 under clause 7.2. ", 7)
	ps := make([]string, 10)
	for i := range ps {
		// Each passage its own text, as in an answer.
		ps[i] = passage + strings.Repeat(" It applies to site "+strconv.Itoa(i+1)+".", i+1)
	}
	unit := `The notice is 90 days [S1]. Fees of 1000 EUR are due on 2026-11-04 [S2]. It says "Either party may end this agreement" [S3]. `
	draft := strings.Repeat(unit, 5000/len(unit)+1)[:0]
	for len(draft)+len(unit) <= 5000 {
		draft += unit
	}
	if len(draft) < 4800 {
		b.Fatalf("draft of %d characters", len(draft))
	}
	var took []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		began := time.Now()
		if r := Check(draft, ps); r.Status != Verified {
			b.Fatalf("%+v", r)
		}
		took = append(took, time.Since(began))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
}
