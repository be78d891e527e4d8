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
	// Query identifies the question, for ranking metrics; List the
	// candidate list it came from (a question may have several), for the
	// pairwise loss, which compares candidates of one list only.
	Query string
	List  int
	// W is the example's weight in the fit (0 counts as 1), so that a set
	// of few questions is not swamped by a large one.
	W float64
}

func (e Example) weight() float64 {
	if e.W <= 0 {
		return 1
	}
	return e.W
}

// Fit trains a logistic regression on standardised features: it minimises
// the examples' weighted mean log loss plus l2/2 times the squared weights
// (the bias is not penalised) by Newton's method, a fixed number of steps
// from zero, so the result depends only on the data.
func Fit(ex []Example, l2 float64, version string) Model {
	return FitMixed(ex, l2, 0, version)
}

// FitMixed is Fit with a pairwise term added: it minimises the pointwise
// weighted log loss plus pair times the pairwise log loss of each list's
// relevant candidates against its other candidates (a list's weight, the
// sum of its candidates', shared by its pairs), plus the L2 penalty. The
// pairwise term rewards only the order within a list, so it gives no
// weight to what is the same for every candidate of a list.
func FitMixed(ex []Example, l2, pair float64, version string) Model {
	return fitMixed(ex, l2, 1, pair, version)
}

func fitMixed(ex []Example, l2, point, pair float64, version string) Model {
	n := len(FeatureNames)
	if len(ex) > 0 {
		n = len(ex[0].F)
	}
	m := Model{Version: version, Mean: make([]float64, n), Scale: make([]float64, n), Weights: make([]float64, n)}
	total := 0.0
	for _, e := range ex {
		w := e.weight()
		total += w
		for i, x := range e.F {
			m.Mean[i] += w * x
		}
	}
	for i := range m.Mean {
		m.Mean[i] /= total
	}
	for _, e := range ex {
		w := e.weight()
		for i, x := range e.F {
			d := x - m.Mean[i]
			m.Scale[i] += w * d * d
		}
	}
	for i := range m.Scale {
		m.Scale[i] = math.Sqrt(m.Scale[i] / total)
		if m.Scale[i] < 1e-9 {
			m.Scale[i] = 1
		}
	}
	// z: standardised features with a last column of ones for the bias.
	d := n + 1
	z := make([][]float64, len(ex))
	for j, e := range ex {
		z[j] = make([]float64, d)
		for i, x := range e.F {
			z[j][i] = (x - m.Mean[i]) / m.Scale[i]
		}
		z[j][n] = 1
	}
	type pr struct {
		diff []float64
		w    float64
	}
	var pairs []pr
	if pair > 0 {
		byList := map[int][]int{}
		var lists []int
		for j, e := range ex {
			if _, ok := byList[e.List]; !ok {
				lists = append(lists, e.List)
			}
			byList[e.List] = append(byList[e.List], j)
		}
		for _, l := range lists {
			var pos, neg []int
			lw := 0.0
			for _, j := range byList[l] {
				lw += ex[j].weight()
				if ex[j].Rel {
					pos = append(pos, j)
				} else {
					neg = append(neg, j)
				}
			}
			if len(pos) == 0 || len(neg) == 0 {
				continue
			}
			pw := pair * lw / total / float64(len(pos)*len(neg))
			for _, a := range pos {
				for _, c := range neg {
					diff := make([]float64, d)
					for i := 0; i < n; i++ {
						diff[i] = z[a][i] - z[c][i]
					}
					pairs = append(pairs, pr{diff, pw})
				}
			}
		}
	}
	beta := make([]float64, d)
	const steps = 30
	for range steps {
		grad := make([]float64, d)
		hess := make([][]float64, d)
		for i := range hess {
			hess[i] = make([]float64, d)
		}
		for i := 0; i < n; i++ {
			grad[i] = l2 * beta[i]
			hess[i][i] = l2
		}
		hess[n][n] += 1e-9
		for j, e := range ex {
			p := sigmoid(dot(beta, z[j]))
			y := 0.0
			if e.Rel {
				y = 1
			}
			w := point * e.weight() / total
			if w == 0 {
				continue
			}
			g, h := w*(p-y), w*p*(1-p)
			for a, xa := range z[j] {
				if xa == 0 {
					continue
				}
				grad[a] += g * xa
				for b := a; b < d; b++ {
					hess[a][b] += h * xa * z[j][b]
				}
			}
		}
		for _, q := range pairs {
			p := sigmoid(dot(beta, q.diff))
			g, h := q.w*(p-1), q.w*p*(1-p)
			for a, xa := range q.diff {
				if xa == 0 {
					continue
				}
				grad[a] += g * xa
				for b := a; b < d; b++ {
					hess[a][b] += h * xa * q.diff[b]
				}
			}
		}
		for a := range d {
			for b := 0; b < a; b++ {
				hess[a][b] = hess[b][a]
			}
		}
		step, ok := solve(hess, grad)
		if !ok {
			break
		}
		done := true
		for i := range beta {
			beta[i] -= step[i]
			if math.Abs(step[i]) > 1e-10 {
				done = false
			}
		}
		if done {
			break
		}
	}
	copy(m.Weights, beta[:n])
	m.Bias = beta[n]
	return m
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// solve solves a x = b by Gaussian elimination with partial pivoting; ok
// is false for a singular a. a and b are left as they were.
func solve(a [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64(nil), a[i]...), b[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-14 {
			return nil, false
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x, true
}

// LogLoss is the examples' weighted mean log loss under m.
func LogLoss(m Model, ex []Example) float64 {
	var sum, total float64
	for _, e := range ex {
		p := math.Min(1-1e-12, math.Max(1e-12, m.Prob(e.F)))
		w := e.weight()
		total += w
		if e.Rel {
			sum -= w * math.Log(p)
		} else {
			sum -= w * math.Log(1-p)
		}
	}
	return sum / math.Max(total, 1e-12)
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
