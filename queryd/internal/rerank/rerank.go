// Package rerank scores passages against a query with a reranking model, as
// probabilities of relevance from 0 to 1.
//
// A Reranker is anything with Rerank(ctx, query, passages) and a Name; this
// package holds two:
//
//   - HTTP, a client of a rerank endpoint (RERANKING_PROVIDER=http) speaking
//     either the TEI /rerank wire format or the Cohere/Jina-compatible
//     /v1/rerank one (Infinity, Jina, Cohere, vLLM), chosen by
//     RERANKING_FORMAT. Passages go in batches of at most
//     Config.BatchSize; retries, timeouts, STRATA_LOCAL_ONLY and the
//     redaction of the key are internal/provider's.
//   - Passthrough, which keeps the order it is given and scores by rank,
//     for RERANKING_ENABLED=false or when the configured reranker fails.
//
// The offline reranker, which needs features the index holds (BM25, the
// fused rank, the local model's cosine), lives elsewhere: it implements the
// optional CandidateReranker interface too, and ApplyCandidates hands it the
// features the caller computed.
//
// Scores: an endpoint may return probabilities or raw logits. With
// Config.RawScores every score is taken as a logit and mapped through the
// sigmoid 1/(1+e^-x) (TEI is asked for raw scores then, so that nothing is
// mapped twice). Otherwise the scores of one call are taken as they are when
// they all lie in [0, 1], and all mapped through the sigmoid when any lies
// outside: logits that happen all to fall in [0, 1] would be misread, so set
// RawScores for a model known to return logits.
//
// A reranker failure must not fail the caller's request: Apply falls back to
// Passthrough and says why in Outcome.Degraded.
package rerank

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Reranker scores passages for a query. The result has one score per
// passage, in the passages' order, each a probability of relevance in
// [0, 1]. Implementations are safe for concurrent use.
type Reranker interface {
	Rerank(ctx context.Context, query string, passages []string) ([]float64, error)
	// Name identifies the model, such as "http:tei:BAAI/bge-reranker-base";
	// measured score marks are stored under it.
	Name() string
}

// Candidate is a passage with what the index knows of it.
type Candidate struct {
	Text string
	// Features are named values the caller computed for the passage (BM25,
	// cosine, fused rank...), for rerankers that read them; the names are
	// the reranker's to define.
	Features map[string]float64
}

// CandidateReranker is a Reranker that also reads features of each
// candidate, such as the offline logistic-regression one. ApplyCandidates
// uses it when the Reranker has it.
type CandidateReranker interface {
	Reranker
	RerankCandidates(ctx context.Context, query string, candidates []Candidate) ([]float64, error)
}

// Sigmoid maps a logit to a probability.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Outcome is what Apply did.
type Outcome struct {
	// Scores has one score per passage, in their order.
	Scores []float64
	// Reranker is the Name of whatever produced Scores.
	Reranker string
	// Reranked is true when a reranking model produced Scores; false means
	// they are Passthrough's rank scores, and confidence must be judged on
	// the similarity basis.
	Reranked bool
	// Degraded says why the passages were not reranked; "" when they were.
	Degraded string
	// Err is the reranker's failure, when Apply fell back because of one.
	Err error
}

// Apply reranks passages with r, falling back to Passthrough when r is nil
// or a Passthrough, or fails, or answers scores that are not one
// probability per passage.
func Apply(ctx context.Context, r Reranker, query string, passages []string) Outcome {
	return apply(r, passages, func() ([]float64, error) {
		return r.Rerank(ctx, query, passages)
	})
}

// ApplyCandidates is Apply for candidates: a CandidateReranker gets them
// whole, any other Reranker their texts.
func ApplyCandidates(ctx context.Context, r Reranker, query string, candidates []Candidate) Outcome {
	texts := make([]string, len(candidates))
	for i, c := range candidates {
		texts[i] = c.Text
	}
	cr, ok := r.(CandidateReranker)
	if !ok {
		return Apply(ctx, r, query, texts)
	}
	return apply(r, texts, func() ([]float64, error) {
		return cr.RerankCandidates(ctx, query, candidates)
	})
}

func apply(r Reranker, passages []string, run func() ([]float64, error)) Outcome {
	fallback := func(reason string, err error) Outcome {
		p := Passthrough{Reason: reason}
		s, _ := p.Rerank(context.Background(), "", passages)
		return Outcome{Scores: s, Reranker: p.Name(), Degraded: reason, Err: err}
	}
	switch p := r.(type) {
	case nil:
		return fallback("no reranker is configured", nil)
	case Passthrough:
		return fallback(p.Degraded(), nil)
	case *Passthrough:
		return fallback(p.Degraded(), nil)
	}
	if len(passages) == 0 {
		return Outcome{Scores: []float64{}, Reranker: r.Name(), Reranked: true}
	}
	scores, err := run()
	if err == nil {
		err = checkScores(scores, len(passages))
	}
	if err != nil {
		return fallback(fmt.Sprintf("the reranker %s failed: %v", r.Name(), err), err)
	}
	return Outcome{Scores: scores, Reranker: r.Name(), Reranked: true}
}

func checkScores(scores []float64, n int) error {
	if len(scores) != n {
		return fmt.Errorf("%d scores for %d passages", len(scores), n)
	}
	for i, s := range scores {
		if !(s >= 0 && s <= 1) {
			return fmt.Errorf("score %d is %v, not a probability", i, s)
		}
	}
	return nil
}

// Passthrough keeps the order it is given: the first passage scores 1, and
// each later one a step less, down to 1/n for the last. The scores only
// restate the order; they are no probabilities of relevance.
type Passthrough struct {
	// Reason says why there is no reranking, such as
	// "RERANKING_ENABLED=false".
	Reason string
}

var _ Reranker = Passthrough{}

// DisabledReason is Passthrough's Reason when reranking is turned off.
const DisabledReason = "RERANKING_ENABLED=false"

// Name is "passthrough".
func (Passthrough) Name() string { return "passthrough" }

// Degraded is why the answer is not reranked.
func (p Passthrough) Degraded() string {
	if p.Reason == "" {
		return "reranking is off"
	}
	return p.Reason
}

// Rerank scores by rank.
func (Passthrough) Rerank(_ context.Context, _ string, passages []string) ([]float64, error) {
	n := len(passages)
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(n-i) / float64(n)
	}
	return out, nil
}

// ResponseError is a 2xx answer from a rerank endpoint that is not what was
// asked for: not its wire format, an index out of range, twice or missing,
// or a score that is not a number.
type ResponseError struct {
	Reason string
}

// Error describes what was wrong with the answer.
func (e *ResponseError) Error() string { return "bad rerank response: " + e.Reason }

// IsResponseError reports whether err is, or wraps, a *ResponseError.
func IsResponseError(err error) bool {
	var re *ResponseError
	return errors.As(err, &re)
}
