package lrank

import (
	"math"
	"sort"
)

// Example is one judged candidate: its features, whether it is relevant,
// and the group of its question (questions sharing a relevant document are
// one group, so cross-validation never trains on a document it tests on).
type Example struct {
	F     []float64
	Rel   bool
	Group int
	// Query identifies the question, for ranking metrics.
	Query string
}

// Fit trains a logistic regression with an L2 penalty l2 by gradient
// descent on standardised features (full batch, fixed steps: the result
// depends only on the data).
func Fit(ex []Example, l2 float64, version string) Model {
	n := len(FeatureNames)
	m := Model{Version: version, Mean: make([]float64, n), Scale: make([]float64, n), Weights: make([]float64, n)}
	for _, e := range ex {
		for i, x := range e.F {
			m.Mean[i] += x
		}
	}
	for i := range m.Mean {
		m.Mean[i] /= float64(len(ex))
	}
	for _, e := range ex {
		for i, x := range e.F {
			d := x - m.Mean[i]
			m.Scale[i] += d * d
		}
	}
	for i := range m.Scale {
		m.Scale[i] = math.Sqrt(m.Scale[i] / float64(len(ex)))
		if m.Scale[i] == 0 {
			m.Scale[i] = 1
		}
	}
	z := make([][]float64, len(ex))
	for j, e := range ex {
		z[j] = make([]float64, n)
		for i, x := range e.F {
			z[j][i] = (x - m.Mean[i]) / m.Scale[i]
		}
	}
	const steps, rate = 600, 0.5
	grad := make([]float64, n)
	for range steps {
		for i := range grad {
			grad[i] = l2 * m.Weights[i]
		}
		gb := 0.0
		for j, e := range ex {
			p := 1 / (1 + math.Exp(-(dot(m.Weights, z[j]) + m.Bias)))
			y := 0.0
			if e.Rel {
				y = 1
			}
			d := (p - y) / float64(len(ex))
			for i, x := range z[j] {
				grad[i] += d * x
			}
			gb += d
		}
		for i := range m.Weights {
			m.Weights[i] -= rate * grad[i]
		}
		m.Bias -= rate * gb
	}
	return m
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Folds splits the groups into k folds (group ids sorted, dealt in turn).
func Folds(ex []Example, k int) [][]int {
	var groups []int
	seen := map[int]bool{}
	for _, e := range ex {
		if !seen[e.Group] {
			seen[e.Group] = true
			groups = append(groups, e.Group)
		}
	}
	sort.Ints(groups)
	fold := map[int]int{}
	for i, g := range groups {
		fold[g] = i % k
	}
	out := make([][]int, k)
	for i, e := range ex {
		out[fold[e.Group]] = append(out[fold[e.Group]], i)
	}
	return out
}

// Groups assigns group ids: questions that share a relevant document (or
// are linked through others that do) get the same id.
func Groups(rel map[string][]string) map[string]int {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == "" || parent[x] == x {
			parent[x] = x
			return x
		}
		r := find(parent[x])
		parent[x] = r
		return r
	}
	byDoc := map[string]string{}
	qs := make([]string, 0, len(rel))
	for q := range rel {
		qs = append(qs, q)
	}
	sort.Strings(qs)
	for _, q := range qs {
		find(q)
		for _, d := range rel[q] {
			if o, ok := byDoc[d]; ok {
				parent[find(q)] = find(o)
			} else {
				byDoc[d] = q
			}
		}
	}
	ids := map[string]int{}
	out := map[string]int{}
	for _, q := range qs {
		r := find(q)
		if _, ok := ids[r]; !ok {
			ids[r] = len(ids)
		}
		out[q] = ids[r]
	}
	return out
}
