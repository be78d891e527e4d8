package lrank

// shippedAt5 is lrank-scifact-answers-pair1-l2-0.003@5, the offline
// reranker shipped before no_number (weights.go until 6 December 2026),
// written by make train-reranker on the lists of SciFact's train claims and
// the original answer set's train questions (before the near misses).
// lrank-at5-no-number@8 (weights.go) is built from it by
// TestStackNoNumber: its logit rescaled, no_number added.
var shippedAt5 = Model{
	Version: "lrank-scifact-answers-pair1-l2-0.003@5",
	Mean:    []float64{0.715083, 0.309532, 0.525209, -0.104428, 0.0645311, 0.310067, 0.428687, 0.334859, 0.365743, 0.266276, 0.0994868, 0.417632, 0.221235, 0.309011, -0.255229, 0.162827, 0.0250278, 0.0490588, 0.260249},
	Scale:   []float64{0.271116, 0.274333, 0.17886, 0.0892653, 0.195638, 0.273905, 0.19607, 0.192945, 0.20382, 0.29801, 0.170608, 0.392585, 0.415078, 0.206808, 0.212101, 0.369208, 0.0658163, 0.157804, 0.160634},
	Weights: []float64{0.270135, 0.445102, 0.216613, 0.46316, 0.136232, 0.434314, -0.838473, -0.55837, 1.07031, -0.0158026, -0.291067, 0.115309, 0.105468, 0.21409, 0.234127, 0.096087, -0.330745, 0.486777, 0.578952},
	Bias:    -3.52132,
}
