package ask

import (
	"context"

	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// Offline is the offline reranker: package lrank's logistic regression
// over the candidates' channel features.
type Offline struct{ Model lrank.Model }

// Name is the model's version.
func (o Offline) Name() string { return o.Model.Version }

// Marks are the model's measured status marks (lrank.MeasuredMarks).
func (o Offline) Marks() (high, medium float64, ok bool) {
	m, ok := lrank.MeasuredMarks[o.Model.Version]
	return m.High, m.Medium, ok
}

// Marks are the offline model's measured status marks, which its sentence
// scores are judged on too.
func (o OfflineSentences) Marks() (high, medium float64, ok bool) {
	return Offline{Model: o.Model}.Marks()
}

// Rerank scores the candidates.
func (o Offline) Rerank(_ context.Context, question string, cands []retrieve.Candidate) ([]float64, error) {
	cs := make([]lrank.Candidate, len(cands))
	for i, c := range cands {
		cs[i] = lrank.FromRetrieve(c)
	}
	return o.Model.Score(question, cs), nil
}

// TextReranker is a reranker that reads only the passages' text, such as an
// HTTP cross-encoder.
type TextReranker interface {
	Name() string
	Rerank(ctx context.Context, query string, passages []string) ([]float64, error)
}

// Texts adapts a TextReranker.
type Texts struct{ R TextReranker }

// Name is the wrapped reranker's.
func (t Texts) Name() string { return t.R.Name() }

// Rerank sends the candidates' text.
func (t Texts) Rerank(ctx context.Context, question string, cands []retrieve.Candidate) ([]float64, error) {
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.Text
	}
	return t.R.Rerank(ctx, question, texts)
}
