package ask

import (
	"context"

	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// DocNames fills, for the reranker, each candidate's QuestionNames (how
// many names the question gives, by Names) and DocNames (the share of them
// its document holds: in its file path, in the text of a candidate of the
// same document, or in one of the document's first chunks). Names select
// the document and the rest of the question the passage: a contract
// question that names the parties is about their agreement, however often
// another agreement's clause repeats the question's other words. The
// chunks are read for the first namesDocs documents of the list (all of
// them at the default top_k); the others are judged by their candidates
// and file path. It returns the chunks read (nil when the question gives
// no names).
func DocNames(ctx context.Context, d Documents, question string, cands []retrieve.Candidate) ([]store.Hit, error) {
	names := Names(question)
	for i := range cands {
		cands[i].QuestionNames, cands[i].DocNames = len(names), 0
	}
	if len(names) == 0 || len(cands) == 0 {
		return nil, nil
	}
	held := map[int64]map[string]bool{}
	var docs []int64
	mark := func(doc int64, text string) {
		for _, n := range namesIn(text, names) {
			held[doc][n.key] = true
		}
	}
	for _, c := range cands {
		if held[c.DocumentID] == nil {
			held[c.DocumentID] = map[string]bool{}
			docs = append(docs, c.DocumentID)
			mark(c.DocumentID, c.File)
		}
		mark(c.DocumentID, c.Text)
	}
	var hits []store.Hit
	if d != nil {
		var err error
		if hits, err = namesChunks(ctx, d, docs, names); err != nil {
			return nil, err
		}
		for _, h := range hits {
			if held[h.DocumentID] != nil {
				mark(h.DocumentID, h.Text)
			}
		}
	}
	for i, c := range cands {
		cands[i].DocNames = float64(len(held[c.DocumentID])) / float64(len(names))
	}
	if hits == nil {
		hits = []store.Hit{}
	}
	return hits, nil
}
