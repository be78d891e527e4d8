package lrank

import (
	"fmt"
	"math"
	"os"
	"testing"
)

// TestRankingObjectives (STRATA_RERANK_EXPERIMENT=judged lists, as
// STRATA_RERANK_JUDGED writes them) compares fits by grouped 5-fold
// cross-validation on the train lists: the pointwise fit, pointwise plus a
// pairwise term, the pairwise fit calibrated, and the weight of the
// answer set. It reads no test list.
func TestRankingObjectives(t *testing.T) {
	train := experimentTrain(t)
	// The ceiling: every relevant candidate first.
	oracle := make([][]float64, len(train))
	for i, j := range train {
		oracle[i] = make([]float64, len(j.Cands))
		for c, r := range j.Rel {
			if r {
				oracle[i][c] = 1
			}
		}
	}
	fmt.Printf("train lists reordered perfectly: SciFact nDCG@10 %.4f (list order %.4f)\n\n", Evaluate(train, oracle).NDCG, Evaluate(train, oracle).NDCGFusion)
	if os.Getenv("STRATA_RERANK_ROUND") == "0" {
		return
	}
	type variant struct {
		name  string
		share float64
		fit   func([]Example) Model
	}
	vs := []variant{
		{"pointwise l2 0.001 (today)", 0.5, func(ex []Example) Model { return Fit(ex, 0.001, "cv") }},
	}
	if os.Getenv("STRATA_RERANK_ROUND") != "2" {
		vs = append(vs,
			variant{"pointwise l2 0.0003", 0.5, func(ex []Example) Model { return Fit(ex, 0.0003, "cv") }},
			variant{"pointwise, answers 0.3", 0.3, func(ex []Example) Model { return Fit(ex, 0.001, "cv") }},
			variant{"pointwise, answers 0.7", 0.7, func(ex []Example) Model { return Fit(ex, 0.001, "cv") }},
			variant{"pointwise calibrated", 0.5, func(ex []Example) Model { return Calibrate(Fit(ex, 0.001, "cv"), ex, 0.001, "cv") }})
		for _, lam := range []float64{0.25, 0.5, 1, 2, 4} {
			vs = append(vs, variant{fmt.Sprintf("mixed lambda %g", lam), 0.5, func(ex []Example) Model { return FitMixed(ex, 0.001, lam, "cv") }})
		}
		for _, lam := range []float64{1, 4} {
			vs = append(vs, variant{fmt.Sprintf("mixed lambda %g calibrated", lam), 0.5, func(ex []Example) Model {
				return Calibrate(FitMixed(ex, 0.001, lam, "cv"), ex, 0.001, "cv")
			}})
		}
		for _, l2 := range []float64{0.001, 0.01} {
			vs = append(vs, variant{fmt.Sprintf("pairwise l2 %g calibrated", l2), 0.5, func(ex []Example) Model { return FitPairwise(ex, l2, "cv") }})
		}
	} else {
		for _, l2 := range []float64{0.03, 0.1} {
			vs = append(vs, variant{fmt.Sprintf("pairwise l2 %g calibrated", l2), 0.5, func(ex []Example) Model { return FitPairwise(ex, l2, "cv") }})
		}
		for _, c := range []struct{ l2, lam, share float64 }{{0.003, 1, 0.5}, {0.01, 1, 0.5}, {0.01, 2, 0.5}, {0.001, 1, 0.3}, {0.003, 1, 0.7}} {
			vs = append(vs, variant{fmt.Sprintf("mixed lambda %g l2 %g answers %g", c.lam, c.l2, c.share), c.share, func(ex []Example) Model { return FitMixed(ex, c.l2, c.lam, "cv") }})
		}
	}
	fmt.Printf("| variant | CV log loss | SciFact nDCG@10 | answers hit@1 | answers MRR | AUC ans/unans | mark (unans 0.88) | answered there |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range vs {
		ex, owner := Examples(train, v.share)
		// The log loss is always read at the 0.5 share, so that variants
		// of the share compare on one scale.
		ref, _ := Examples(train, 0.5)
		cvRow(v.name, train, ex, ref, owner, v.fit)
	}
}

// mrr is the answer set's mean reciprocal rank of the first gold candidate
// over its answerable lists (0 for a list without one).
func mrr(js []Judged, scores [][]float64) float64 {
	sum, n := 0.0, 0
	for i, j := range js {
		if j.Set != SetAnswers || j.Unanswerable() {
			continue
		}
		n++
		for r, k := range rankBy(scores[i]) {
			if j.Rel[k] {
				sum += 1 / float64(r+1)
				break
			}
		}
	}
	return sum / math.Max(1, float64(n))
}
