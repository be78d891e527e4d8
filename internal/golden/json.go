package golden

import (
	"encoding/json"
	"math"
)

// JSONClose reports whether want and got are the same JSON value, numbers
// allowed to differ by at most tol. Scores that rest on floating-point
// sums (a model's vectors, pgvector's distances) differ in the last digit
// between CPUs with other vector instructions; the goldens pin everything
// else exactly.
func JSONClose(want, got []byte, tol float64) bool {
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return false
	}
	return near(w, g, tol)
}

func near(w, g any, tol float64) bool {
	switch w := w.(type) {
	case float64:
		g, ok := g.(float64)
		return ok && math.Abs(w-g) <= tol
	case []any:
		g, ok := g.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !near(w[i], g[i], tol) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := g.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !near(wv, gv, tol) {
				return false
			}
		}
		return true
	default:
		return w == g
	}
}
