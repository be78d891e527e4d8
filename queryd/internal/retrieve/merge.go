package retrieve

import "sort"

// Merge fuses the candidate lists of several searches of one question (the
// query variants strata_ask searches) by reciprocal rank fusion: a
// candidate scores the sum of 1/(k + its place in each list that holds it),
// and comes back once, with the attribution of the list where it placed
// best. Ties keep the order of first appearance, list by list. Fused and
// FusedRank are replaced by the merged score and place.
func Merge(k int, lists ...[]Candidate) []Candidate {
	type entry struct {
		c     Candidate
		score float64
		best  int // best place in any list
		first int // order of first appearance
	}
	byID := map[int64]*entry{}
	var order []*entry
	for _, list := range lists {
		for i, c := range list {
			e, ok := byID[c.ChunkID]
			if !ok {
				e = &entry{c: c, best: i + 1, first: len(order)}
				byID[c.ChunkID] = e
				order = append(order, e)
			} else if i+1 < e.best {
				e.c, e.best = c, i+1
			}
			e.score += 1 / float64(k+i+1)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].score != order[j].score {
			return order[i].score > order[j].score
		}
		return order[i].first < order[j].first
	})
	out := make([]Candidate, len(order))
	for i, e := range order {
		out[i] = e.c
		out[i].Fused, out[i].FusedRank = e.score, i+1
	}
	return out
}
