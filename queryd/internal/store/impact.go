package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"
)

// postingSlice is what one query lexeme holds in one layer: the head of
// its posting list (best impact first) and its best postings not packed
// yet (the delta, strata.postings).
type postingSlice struct {
	term    int // the lexeme's index in the query
	layerID int64
	ids     []int64
	impacts []float32
}

// readPostings reads, for each query lexeme in each layer, the first
// perTerm entries of its posting list and its perTerm best unpacked
// postings: a row for each that is not empty.
func readPostings(ctx context.Context, tx pgx.Tx, terms []string, layerIDs []int64, perTerm int) ([]postingSlice, error) {
	rows, err := tx.Query(ctx, `
		SELECT (t.i - 1)::int, l.layer_id, x.ids, x.impacts
		FROM unnest($1::text[]) WITH ORDINALITY t(lexeme, i) CROSS JOIN unnest($2::bigint[]) l(layer_id)
		CROSS JOIN LATERAL (
			SELECT pl.chunk_ids[1:$3] AS ids, pl.impacts[1:$3] AS impacts FROM strata.posting_lists pl
			WHERE pl.lexeme = t.lexeme AND pl.layer_id = l.layer_id
			UNION ALL
			SELECT array_agg(d.chunk_id), array_agg(d.impact) FROM (
				SELECT p.chunk_id, p.impact FROM strata.postings p
				WHERE p.lexeme = t.lexeme AND p.layer_id = l.layer_id ORDER BY p.impact DESC LIMIT $3) d
			HAVING count(*) > 0
		) x
		ORDER BY 1, 2`, terms, layerIDs, perTerm)
	if err != nil {
		return nil, fmt.Errorf("read the posting lists: %w", err)
	}
	var out []postingSlice
	var ps postingSlice
	_, err = pgx.ForEachRow(rows, []any{&ps.term, &ps.layerID, &ps.ids, &ps.impacts}, func() error {
		if len(ps.ids) != len(ps.impacts) {
			return fmt.Errorf("posting list of lexeme %d in layer %d: %d chunks, %d impacts", ps.term, ps.layerID, len(ps.ids), len(ps.impacts))
		}
		out = append(out, ps)
		ps.ids, ps.impacts = nil, nil // the next row's arrays go into new slices
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the posting lists: %w", err)
	}
	return out, nil
}

// posting is one chunk's impact for one lexeme.
type posting struct {
	id     int64
	impact float32
}

// impactCandidates chooses an impact-ordered search's candidates from
// the postings read: each lexeme's perTerm best chunks in each layer
// (its list's head and its delta together, by impact, then chunk id),
// then the n chunks with the highest sum of idf × impact over the
// lexemes, ties by chunk id. It is strata.best_postings and the grouping
// over it done here, where it costs a fraction of the database's time.
func impactCandidates(read []postingSlice, idf []float64, perTerm, n int) []int64 {
	var acc scoreSum
	for i := 0; i < len(read); {
		// The rows of one lexeme in one layer: its list's head, and its
		// delta when it has one.
		j := i + 1
		for j < len(read) && read[j].term == read[i].term && read[j].layerID == read[i].layerID {
			j++
		}
		w := 0.0
		if t := read[i].term; t < len(idf) {
			w = idf[t]
		}
		if j == i+1 && len(read[i].ids) <= perTerm {
			acc.add(read[i].ids, read[i].impacts, w)
		} else {
			var ps []posting
			for _, s := range read[i:j] {
				for k, id := range s.ids {
					ps = append(ps, posting{id, s.impacts[k]})
				}
			}
			slices.SortFunc(ps, func(a, b posting) int {
				return cmp.Or(cmp.Compare(b.impact, a.impact), cmp.Compare(a.id, b.id))
			})
			ps = ps[:min(perTerm, len(ps))]
			ids, imps := make([]int64, len(ps)), make([]float32, len(ps))
			for k, p := range ps {
				ids[k], imps[k] = p.id, p.impact
			}
			acc.add(ids, imps, w)
		}
		i = j
	}
	return acc.top(n)
}

// scoreSum adds up weighted impacts by chunk.
type scoreSum struct {
	ids  [][]int64
	imps [][]float32
	ws   []float64
}

func (a *scoreSum) add(ids []int64, imps []float32, w float64) {
	a.ids, a.imps, a.ws = append(a.ids, ids), append(a.imps, imps), append(a.ws, w)
}

// scoredChunk is a chunk and its sum.
type scoredChunk struct {
	id    int64
	score float64
}

// top returns the n chunks of the highest sums, ties by chunk id. The sums
// are kept in an array indexed by chunk id when the ids span little more
// than their count (a layer's chunks are numbered together), else in a
// map.
func (a *scoreSum) top(n int) []int64 {
	total, lo, hi := 0, int64(math.MaxInt64), int64(math.MinInt64)
	for _, ids := range a.ids {
		total += len(ids)
		for _, id := range ids {
			lo, hi = min(lo, id), max(hi, id)
		}
	}
	if total == 0 || n <= 0 {
		return nil
	}
	var all []scoredChunk
	if span := hi - lo + 1; span <= int64(8*total+1024) {
		sum, seen := make([]float64, span), make([]bool, span)
		all = make([]scoredChunk, 0, min(int64(total), span))
		for g, ids := range a.ids {
			for k, id := range ids {
				x := id - lo
				if !seen[x] {
					seen[x] = true
					all = append(all, scoredChunk{id: id})
				}
				sum[x] += a.ws[g] * float64(a.imps[g][k])
			}
		}
		for i := range all {
			all[i].score = sum[all[i].id-lo]
		}
	} else {
		sum := make(map[int64]float64, total)
		for g, ids := range a.ids {
			for k, id := range ids {
				sum[id] += a.ws[g] * float64(a.imps[g][k])
			}
		}
		all = make([]scoredChunk, 0, len(sum))
		for id, v := range sum {
			all = append(all, scoredChunk{id, v})
		}
	}
	if len(all) > n {
		selectFirst(all, n)
		all = all[:n]
	}
	slices.SortFunc(all, func(x, y scoredChunk) int {
		if x.before(y) {
			return -1
		}
		return 1 // ids are unique: never equal
	})
	out := make([]int64, len(all))
	for i, c := range all {
		out[i] = c.id
	}
	return out
}

// before orders chunks by sum, highest first, then by id.
func (c scoredChunk) before(d scoredChunk) bool {
	return c.score > d.score || c.score == d.score && c.id < d.id
}

// selectFirst reorders xs so that its first n elements are the n first by
// before (in no particular order among themselves): quickselect.
func selectFirst(xs []scoredChunk, n int) {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// The median of three as the pivot, moved to hi.
		mid := lo + (hi-lo)/2
		if xs[mid].before(xs[lo]) {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi].before(xs[lo]) {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[mid].before(xs[hi]) {
			xs[mid], xs[hi] = xs[hi], xs[mid]
		}
		p := xs[hi]
		i := lo
		for j := lo; j < hi; j++ {
			if xs[j].before(p) {
				xs[i], xs[j] = xs[j], xs[i]
				i++
			}
		}
		xs[i], xs[hi] = xs[hi], xs[i]
		switch {
		case i == n || i == n-1:
			return
		case i < n:
			lo = i + 1
		default:
			hi = i - 1
		}
	}
}

// distinctLayers are the searches' layers, each once.
func distinctLayers(qs []BM25Query) []int64 {
	var out []int64
	for _, q := range qs {
		for _, id := range q.LayerIDs {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// manyCandidates chooses each search's candidates (impactCandidates) from
// the postings read once for all of them (lexemes indexes read's terms),
// as the scopes and chunk ids SearchBM25Many's statement takes: search i
// is scope i+1.
func manyCandidates(qs []BM25Query, lexemes []string, read []postingSlice) ([]int32, []int64) {
	lexIndex := make(map[string]int, len(lexemes))
	for i, l := range lexemes {
		lexIndex[l] = i
	}
	type key struct {
		term  int
		layer int64
	}
	byKey := map[key][]postingSlice{}
	for _, r := range read {
		k := key{r.term, r.layerID}
		byKey[k] = append(byKey[k], r)
	}
	var scopes []int32
	var ids []int64
	for i, q := range qs {
		var mine []postingSlice
		for j, l := range q.Terms {
			li, ok := lexIndex[l]
			if !ok {
				continue
			}
			for _, layer := range q.LayerIDs {
				for _, r := range byKey[key{li, layer}] {
					r.term = j
					mine = append(mine, r)
				}
			}
		}
		for _, id := range impactCandidates(mine, q.IDF, q.Impact.PerTerm, q.Impact.Candidates) {
			scopes = append(scopes, int32(i+1))
			ids = append(ids, id)
		}
	}
	return scopes, ids
}
