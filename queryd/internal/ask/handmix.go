package ask

import "math"

// HandMixScores are the scores of the hand-set sentence scorer the
// sentence model replaced, kept as the evaluations' baseline (package ask's
// TestTrainSentences and package search's TestEvalExtractiveAnswers): each
// sentence gets its passage's probability (pp, by passages[i]) times 0.5
// to 1, by a mix of 0.6 BM25 and 0.4 cosine, each relative to the best
// among all the sentences and then to the best of the same passage. rows
// are SentenceFeatures rows (column 1 the BM25 logarithm, 4 the cosine);
// withCos says which rows have a cosine.
func HandMixScores(rows [][]float64, withCos []bool, passages []int, pp []float64) []float64 {
	cmax, bmax := 0.0, 0.0
	for i, f := range rows {
		if withCos[i] {
			cmax = math.Max(cmax, math.Max(0, f[4]))
		}
		bmax = math.Max(bmax, math.Expm1(f[1]))
	}
	mix := make([]float64, len(rows))
	for i, f := range rows {
		if bmax > 0 {
			mix[i] = math.Expm1(f[1]) / bmax
		}
		if cmax > 0 {
			mix[i] = 0.6*mix[i] + 0.4*math.Max(0, f[4])/cmax
		}
	}
	best := map[int]float64{}
	for i, p := range passages {
		best[p] = math.Max(best[p], mix[i])
	}
	out := make([]float64, len(rows))
	for i, p := range passages {
		share := 0.5
		if b := best[p]; b > 0 {
			share += 0.5 * mix[i] / b
		}
		if p >= 0 {
			out[i] = pp[p] * share
		}
	}
	return out
}
