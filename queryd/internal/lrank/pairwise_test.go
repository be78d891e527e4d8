package lrank

import (
	"math"
	"testing"
)

// pairLists: 60 lists of 6 candidates. Within a list the relevant
// candidate is the one with the highest coverage; across lists, lists
// whose unknown_share is low have relevant candidates and the others not.
func pairLists(t *testing.T) []Example {
	t.Helper()
	cov, unk := col(t, "coverage"), col(t, "unknown_share")
	var ex []Example
	for l := range 60 {
		answerable := l%3 != 0
		u := 0.1
		if !answerable {
			u = 0.6
		}
		for c := range 6 {
			f := make([]float64, len(FeatureNames))
			f[cov] = float64((c*7+l)%6) / 6
			f[unk] = u
			rel := answerable && (c*7+l)%6 == 5
			ex = append(ex, Example{F: f, Rel: rel, Group: l, List: l})
		}
	}
	return ex
}

// TestFitMixedPairwise: the pairwise fit alone orders by what differs
// within a list and gives no weight to what is the same for the whole
// list; Calibrate keeps that order and learns the list-level feature.
func TestFitMixedPairwise(t *testing.T) {
	t.Parallel()
	ex := pairLists(t)
	cov, unk := col(t, "coverage"), col(t, "unknown_share")
	p := fitMixed(ex, 0.01, 0, 1, "pairwise")
	if p.Weights[cov] <= 0 || math.Abs(p.Weights[unk]) > 1e-9 {
		t.Fatalf("pairwise weights: coverage %v, unknown_share %v", p.Weights[cov], p.Weights[unk])
	}
	c := Calibrate(p, ex, 0.01, "calibrated")
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Weights[unk] >= 0 {
		t.Errorf("calibrated unknown_share weight %v, want negative", c.Weights[unk])
	}
	if lp, lc := LogLoss(p, ex), LogLoss(c, ex); lc >= lp {
		t.Errorf("calibration did not lower the log loss: %v -> %v", lp, lc)
	}
	// The order within each list is the pairwise fit's.
	byList := map[int][]int{}
	for i, e := range ex {
		byList[e.List] = append(byList[e.List], i)
	}
	for l, is := range byList {
		for _, a := range is {
			for _, b := range is {
				if (p.Prob(ex[a].F) > p.Prob(ex[b].F)) != (c.Prob(ex[a].F) > c.Prob(ex[b].F)) {
					t.Fatalf("list %d: candidates %d and %d change places", l, a, b)
				}
			}
		}
	}
	// With the pointwise term, the mixed fit is the pointwise fit at pair 0.
	a, b := FitMixed(ex, 0.01, 0, "m"), Fit(ex, 0.01, "f")
	if a.Bias != b.Bias || a.Weights[cov] != b.Weights[cov] {
		t.Errorf("FitMixed at 0 differs from Fit: %v / %v", a, b)
	}
}
