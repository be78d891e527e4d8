package ask

import (
	"context"
	"math"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// TestSentencesKeepTheRerankScore: given the passages' scores as the same
// model reranked them (a routing fallback's candidates each keep their own
// search's score), the best sentence of each passage keeps exactly that
// score instead of one computed again over the list as a whole.
func TestSentencesKeepTheRerankScore(t *testing.T) {
	t.Parallel()
	cands := []retrieve.Candidate{
		{Text: "The base fee within the same country is 6.90 EUR. Parcels over 30 kg are refused.", Lexical: &retrieve.ChannelHit{Rank: 1, Score: 3}, FusedRank: 1, Similarity: 0.4},
		{Text: "Either party may end this agreement with ninety days' notice.", Lexical: &retrieve.ChannelHit{Rank: 2, Score: 9}, FusedRank: 2, Similarity: 0.5},
	}
	sents := []SentenceInput{
		{Text: "The base fee within the same country is 6.90 EUR.", Passage: 0},
		{Text: "Parcels over 30 kg are refused.", Passage: 0},
		{Text: "Either party may end this agreement with ninety days' notice.", Passage: 1},
	}
	const q = "What does a parcel within the same country cost as a base fee?"
	o := OfflineSentences{Model: lrank.Default}
	computed, err := o.ScoreSentences(context.Background(), q, sents, cands)
	if err != nil {
		t.Fatal(err)
	}
	o.PassageScores = []float64{0.57, 0.05}
	given, err := o.ScoreSentences(context.Background(), q, sents, cands)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(given[0]-0.57) > 1e-9 || given[1] > 0.57 || math.Abs(given[2]-0.05) > 1e-9 {
		t.Errorf("with the passages' scores 0.57 and 0.05: sentences %v", given)
	}
	if math.Abs(computed[0]-0.57) < 1e-6 {
		t.Errorf("the computed score is 0.57 too: the test shows nothing")
	}
	// A length that does not match the candidates is ignored.
	o.PassageScores = []float64{0.57}
	if again, _ := o.ScoreSentences(context.Background(), q, sents, cands); math.Abs(again[0]-computed[0]) > 1e-9 {
		t.Errorf("scores of the wrong length were used: %v, computed %v", again, computed)
	}
}
