package route

import (
	"math"
	"sort"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Routing by the layers' own words: when no pattern, learned affinity or
// description routes a question, the layer whose chunks hold the
// question's words far more often than the knowledge base as a whole does
// is chosen, when it clearly leads.
const (
	// ContentMu is the Dirichlet prior, in chunks, that pulls a layer's
	// share of chunks holding a word toward the whole knowledge base's, so
	// a ten-chunk layer is not every word's home.
	ContentMu = 10.0
	// ContentMargin: the best layer is chosen when the next scores at most
	// this share of it.
	ContentMargin = 0.6
	// ContentMinScore is the least score that routes: a layer whose share
	// of the words is barely above the whole's is no home of them.
	ContentMinScore = 1.0
	// ContentMinChunks is the fewest chunks, over all the layers, for
	// which the statistics route at all: over a handful of chunks every
	// word's home is wherever it happens to stand. (The prior and the
	// margins were measured on the answer set's 4,255 chunks.)
	ContentMinChunks = 200
)

// ContentScore is how strongly one layer's own chunks are the home of a
// question's words.
type ContentScore struct {
	// Score is the sum over the question's lexemes of idf · max(0,
	// ln(p_layer / p_all)): p_all the share of all the layers' chunks
	// holding the lexeme, p_layer the layer's share smoothed toward it
	// (ContentMu), idf over all the layers' chunks.
	Score float64
	// Words are the lexemes the layer holds more often than the whole,
	// sorted.
	Words []string
}

// ContentScores scores every layer, in the order of layers.
func ContentScores(w store.LayerWords, layers []store.Layer) []ContentScore {
	out := make([]ContentScore, len(layers))
	var total float64
	for _, l := range layers {
		total += float64(w.Chunks[l.ID])
	}
	if total < ContentMinChunks {
		return out
	}
	for _, lex := range w.Lexemes {
		var df float64
		for _, l := range layers {
			df += float64(w.DF[l.ID][lex])
		}
		if df == 0 {
			continue
		}
		pAll := df / total
		idf := math.Log(1 + (total-df+0.5)/(df+0.5))
		for i, l := range layers {
			n := float64(w.Chunks[l.ID])
			pLayer := (float64(w.DF[l.ID][lex]) + ContentMu*pAll) / (n + ContentMu)
			if lift := math.Log(pLayer / pAll); lift > 0 {
				out[i].Score += idf * lift
				out[i].Words = append(out[i].Words, lex)
			}
		}
	}
	for i := range out {
		sort.Strings(out[i].Words)
	}
	return out
}

// contentLeader returns the layer that clearly leads by its own words.
func contentLeader(scores []ContentScore) (int, bool) {
	v := make([]float64, len(scores))
	for i, c := range scores {
		v[i] = c.Score
	}
	return clearLead(v, ContentMinScore, ContentMargin)
}
