package lrank

// Marks are a model's status marks for strata_ask: an answer whose best
// returned passage scores High or more is found, Medium or more
// partly_found, less not_found.
type Marks struct{ High, Medium float64 }

// MeasuredMarks are the marks measured for each model version, by
// TestEvalAskAnswers on the answer set's train split (docs/ask.md,
// "Measured"): the lowest medium mark, in steps of 0.05, that keeps the
// unanswerable questions not_found at 0.85 or more with the layer named
// and routed alike (run for real, since the medium mark also starts a
// routing fallback), and the spec's high mark 0.8 unless more than one in
// fifty answerable train questions would then be found without a gold
// passage. A version without an entry gets strata_ask's defaults.
var MeasuredMarks = map[string]Marks{
	"lrank-scifact-answers-l2-0.001@3":       {High: 0.8, Medium: 0.4},
	"lrank-scifact-answers-pair1-l2-0.003@4": {High: 0.8, Medium: 0.35},
	// 0.35 until short codes after words like "zone" ("tariff zone Z9")
	// counted as names, which keeps two more train unanswerable questions
	// not_found: then 0.3 kept them at 0.875 both ways. With bge-small-en-v1.5
	// as the default embedding model (its cosine and rank features differ
	// from USE-lite's) 0.3 kept 0.79 / 0.75; 0.4 0.83 / 0.79; 0.45 keeps
	// 0.92 named and 0.88 routed (docs/embeddings.md).
	//
	// On the 503-question set (issue 26: near misses, sections that do
	// not exist, documents named), chosen leaving one corpus out
	// (TestEvalAskAnswers, chooseMarks; docs/ask.md, "Measured: honest
	// statuses"): the lowest high mark at which found answers hold a gold
	// passage at least 95 % of the time on every training layer, with the
	// original answerable questions still answered at 0.80 or more: 0.92
	// in seven folds of eight (0.80 in the eighth); the medium mark, the
	// median of the folds' choices (0.30 to 0.50), 0.45.
	"lrank-scifact-answers-pair1-l2-0.003@5": {High: 0.92, Medium: 0.45},
	// @5 with no_number stacked on (TestStackNoNumber; docs/ask.md, "Near
	// misses: no_number"): by the same rule, leaving one corpus out, 0.85
	// in seven folds of eight (0.80 in the eighth, isocodes); the medium
	// mark, the median of the folds' choices (0.25 to 0.40), 0.35. The
	// rule on all of train gives the same pair.
	"lrank-at5-no-number@8": {High: 0.85, Medium: 0.35},
}
