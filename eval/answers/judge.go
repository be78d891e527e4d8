package answers

import "strings"

// Hit says whether a result (its file relative to the layer root, and its
// text) holds one of the question's gold passages: the file must match and
// the text must contain the quote, or, for a quote longer than the result
// (a long contract clause split over chunks), share with it a run of words
// that covers at least half of the quote or, when the result is shorter
// than half the quote, fills 80 % of the result (the result lies inside the
// quote).
func Hit(q Question, layer, file, text string) bool {
	if layer != q.Layer {
		return false
	}
	for _, g := range q.Gold {
		if g.File == file && covers(text, g.Quote) {
			return true
		}
	}
	return false
}

func covers(text, quote string) bool {
	t, qt := normalise(text), normalise(quote)
	if strings.Contains(t, qt) {
		return true
	}
	tw, qw := strings.Fields(t), strings.Fields(qt)
	run := longestCommonRun(tw, qw)
	return run*2 >= len(qw) || (len(tw)*2 < len(qw) && run*5 >= len(tw)*4)
}

// longestCommonRun is the length of the longest run of words that a and b
// share, in order.
func longestCommonRun(a, b []string) int {
	best := 0
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
				best = max(best, cur[j+1])
			} else {
				cur[j+1] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}
