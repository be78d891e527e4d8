package retrieve

import (
	"cmp"
	"context"
	"math"
	"sort"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/structure"
)

// docEvidenceDepth is how many chunks of the layers the question's other
// words are scored on when exact sections come from several documents.
const docEvidenceDepth = 200

// orderByDocument orders the exact sections by reference (refIndex maps
// a section's id to the index of the reference that named it, as found
// holds them) and, among the sections of one reference, puts first those
// of the documents the rest of the question points to: when sections the
// question names come from several documents ("Article 5 of the data
// protection regulation" when a contract has an Article 5 too), each
// document scores its best chunk's BM25 score for the question without its
// references, best first; equal scores keep the order of the file paths
// (issue 12, class 4). The order of the references always comes first, as
// the spec reads the named clauses "in the order of the references and then
// by file path": grouping by document would read "clause 9.1 and clause
// 7.2" as 9.1, 7.2, 7.2, 9.1 and, under a small budget, leave out the first
// reference's clause while keeping later ones (issue 27, item 3).
func (r *Run) orderByDocument(ctx context.Context, found []store.Section, refIndex map[int64]int, refs []structure.Reference, ids []int64) ([]store.Section, error) {
	// found is already in the order of the references, then of the paths.
	docs := map[int64]bool{}
	for _, s := range found {
		docs[s.DocumentID] = true
	}
	if len(docs) < 2 {
		return found, nil
	}
	rest := r.q.Text
	for _, ref := range refs {
		rest = strings.Replace(rest, ref.Raw, " ", 1)
	}
	score, err := r.docScores(ctx, rest, ids)
	if err != nil || len(score) == 0 {
		return found, err
	}
	out := append([]store.Section(nil), found...)
	sort.SliceStable(out, func(i, j int) bool {
		if c := cmp.Compare(refIndex[out[i].ID], refIndex[out[j].ID]); c != 0 {
			return c < 0
		}
		return score[out[i].DocumentID] > score[out[j].DocumentID]
	})
	return out, nil
}

// docScores is, per document, the best BM25 score of its chunks for text
// over the layers.
func (r *Run) docScores(ctx context.Context, text string, ids []int64) (map[int64]float64, error) {
	s := r.e.store
	p := r.Params(ctx)
	prep, err := s.PrepareLexical(ctx, text, nil, ids)
	if err != nil || len(prep.Lexemes) == 0 || prep.Stats.Chunks == 0 {
		return nil, err
	}
	n := float64(prep.Stats.Chunks)
	avg := math.Max(float64(prep.Stats.TotalLen)/n, 1)
	q := store.BM25Query{LayerIDs: ids, Filter: r.q.Filter, K1: p.K1, B: p.B, AvgLen: avg, Limit: docEvidenceDepth}
	var lits []string
	for _, l := range prep.Lexemes {
		df := float64(prep.Stats.DF[l])
		if df == 0 {
			continue
		}
		q.Terms = append(q.Terms, l)
		q.IDF = append(q.IDF, math.Log(1+(n-df+0.5)/(df+0.5)))
		lits = append(lits, tsLiteral(l))
	}
	if len(lits) == 0 {
		return nil, nil
	}
	q.Match = strings.Join(lits, " | ")
	hits, err := s.SearchBM25(ctx, q)
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	chunkIDs := make([]int64, len(hits))
	for i, h := range hits {
		chunkIDs[i] = h.ChunkID
	}
	rows, err := s.Chunks(ctx, chunkIDs)
	if err != nil {
		return nil, err
	}
	out := map[int64]float64{}
	for _, h := range hits {
		if c, ok := rows[h.ChunkID]; ok {
			out[c.DocumentID] = math.Max(out[c.DocumentID], h.Score)
		}
	}
	return out, nil
}
