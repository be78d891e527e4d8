package retrieve

// ConfidenceWindow is how many passages of the fused ranking confidence is
// judged on, whatever top_k: the spec's "three or more results reach the
// medium mark". Judging the returned results instead made the level, and
// so routing's low-confidence fallback, change with top_k (issue 12,
// class 8).
const ConfidenceWindow = 3

// judgeWindow returns the first ConfidenceWindow candidates of the fused
// ranking, before the keyword slots and the top_k cut.
func judgeWindow(cands []*Candidate) []*Candidate {
	return append([]*Candidate(nil), cands[:min(len(cands), ConfidenceWindow)]...)
}
