package lrank

import (
	"context"
	"fmt"
	"math"
)

// Model is a fitted logistic regression over standardised features.
type Model struct {
	// Version names the model and its training run; RERANKING_MODEL's
	// default names it.
	Version string
	// Mean and Scale standardise each feature; Weights and Bias are the
	// coefficients over the standardised features.
	Mean, Scale, Weights []float64
	Bias                 float64
}

// Check reports a model whose sizes do not match the features.
func (m Model) Check() error {
	n := len(FeatureNames)
	if len(m.Mean) != n || len(m.Scale) != n || len(m.Weights) != n {
		return fmt.Errorf("lrank: model %s has %d/%d/%d coefficients for %d features", m.Version, len(m.Mean), len(m.Scale), len(m.Weights), n)
	}
	return nil
}

// Prob is the model's probability that a feature row is relevant.
func (m Model) Prob(f []float64) float64 {
	z := m.Bias
	for i, x := range f {
		s := m.Scale[i]
		if s == 0 {
			s = 1
		}
		z += m.Weights[i] * (x - m.Mean[i]) / s
	}
	return 1 / (1 + math.Exp(-z))
}

// Score returns each candidate's probability of being relevant to the
// question.
func (m Model) Score(question string, cands []Candidate) []float64 {
	fs := Features(question, cands)
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = m.Prob(f)
	}
	return out
}

// Reranker serves a Model; the context is unused (it runs in process).
type Reranker struct{ M Model }

// Name is the model's version.
func (r Reranker) Name() string { return r.M.Version }

// RerankCandidates scores candidates against the question.
func (r Reranker) RerankCandidates(_ context.Context, question string, cands []Candidate) ([]float64, error) {
	return r.M.Score(question, cands), nil
}
