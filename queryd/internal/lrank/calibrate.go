package lrank

import "slices"

// listLevel are the directions in feature space that are the same for
// every candidate of a list: the question's unknown words, the list's best
// cosine (cosine less cosine_gap) and the list's best weighted coverage
// (idf_coverage less coverage_gap). They change no order within a list,
// only how sure the model is of it.
var listLevel = [][2]string{
	{"unknown_any", ""},
	{"unknown_share", ""},
	{"cosine", "cosine_gap"},
	{"idf_coverage", "coverage_gap"},
}

// Calibrate keeps m's order within each list and refits its probability:
// p = sigmoid(a*s + b + c . q), s being m's score (its logit) and q the
// list-level directions, fitted pointwise on ex (weighted log loss, L2
// l2). The result is again one linear model over the features, so it
// serves as m does.
func Calibrate(m Model, ex []Example, l2 float64, version string) Model {
	n := len(m.Weights)
	// A[k] is the k-th calibration input as a linear map of the raw
	// features (input 0 is m's logit less its bias).
	A := make([][]float64, 0, 1+len(listLevel))
	a0 := make([]float64, n)
	c0 := 0.0
	for i := range n {
		a0[i] = m.Weights[i] / m.Scale[i]
		c0 -= m.Weights[i] * m.Mean[i] / m.Scale[i]
	}
	A = append(A, a0)
	for _, dir := range listLevel {
		row := make([]float64, n)
		if i := slices.Index(FeatureNames, dir[0]); i >= 0 && i < n {
			row[i] = 1
		}
		if i := slices.Index(FeatureNames, dir[1]); dir[1] != "" && i >= 0 && i < n {
			row[i] = -1
		}
		A = append(A, row)
	}
	cex := make([]Example, len(ex))
	for j, e := range ex {
		f := make([]float64, len(A))
		for k, row := range A {
			f[k] = dot(row, e.F)
		}
		f[0] += c0
		cex[j] = Example{F: f, Rel: e.Rel, Group: e.Group, Query: e.Query, List: e.List, W: e.W}
	}
	c := Fit(cex, l2, "calibration")
	// Fold the calibration back into one model over the raw features:
	// logit = c.Bias + sum_k c.W[k] (g_k - c.Mean[k]) / c.Scale[k], with
	// g_k = A[k] . f (+ c0 for k = 0), and f_i = Mean_i + Scale_i z_i.
	out := Model{Version: version, Mean: slices.Clone(m.Mean), Scale: slices.Clone(m.Scale), Weights: make([]float64, n)}
	raw := make([]float64, n)
	bias := c.Bias
	for k, row := range A {
		coef := c.Weights[k] / c.Scale[k]
		bias -= coef * c.Mean[k]
		if k == 0 {
			bias += coef * c0
		}
		for i := range n {
			raw[i] += coef * row[i]
		}
	}
	for i := range n {
		out.Weights[i] = raw[i] * m.Scale[i]
		bias += raw[i] * m.Mean[i]
	}
	out.Bias = bias
	return out
}

// FitPairwise fits the order within lists by the pairwise loss alone and
// then calibrates the probability with Calibrate.
func FitPairwise(ex []Example, l2 float64, version string) Model {
	return Calibrate(fitMixed(ex, l2, 0, 1, "pairwise"), ex, l2, version)
}
