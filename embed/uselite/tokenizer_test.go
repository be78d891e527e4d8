package uselite

import (
	"slices"
	"testing"
)

// testVocab is a tiny vocabulary in the model's layout: six reserved pieces,
// then pieces with log-probability scores.
func testVocab(t testing.TB, pieces map[string]float64) *tokenizer {
	t.Helper()
	names := []string{"\ufffd", "<s>", "</s>", "extra_token_id_1", "extra_token_id_2", "extra_token_id_3"}
	scores := make([]float64, len(names))
	keys := make([]string, 0, len(pieces))
	for k := range pieces {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		names = append(names, k)
		scores = append(scores, pieces[k])
	}
	tok, err := newTokenizer(names, scores)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func pieceNames(tok *tokenizer, pieces map[string]float64, ids []int) []string {
	names := []string{"\ufffd", "<s>", "</s>", "extra_token_id_1", "extra_token_id_2", "extra_token_id_3"}
	keys := make([]string, 0, len(pieces))
	for k := range pieces {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	names = append(names, keys...)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = names[id]
	}
	return out
}

func TestTokenizerSegmentation(t *testing.T) {
	pieces := map[string]float64{
		"▁": -2, "▁the": -1, "▁th": -3, "e": -3, "▁cat": -2, "▁c": -4, "a": -4, "t": -4,
		"▁sat": -2, "s": -5, "▁fi": -1, "ne": -1, "▁:": 0, // a null score in the real vocabulary reads as 0
	}
	tok := testVocab(t, pieces)
	for _, tc := range []struct {
		text string
		want []string
	}{
		// The most probable segmentation wins over longer or shorter pieces.
		{"the cat sat", []string{"▁the", "▁cat", "▁sat"}},
		// Pieces absent from the vocabulary fall back to single characters.
		{"cats", []string{"▁cat", "s"}},
		// A run of unknown characters becomes one unknown piece.
		{"the ZZZ cat", []string{"▁the", "▁", "\ufffd", "▁cat"}},
		// NFKC folds the ligature "ﬁ" into "fi" before segmentation.
		{"ﬁne", []string{"▁fi", "ne"}},
		// Runs of spaces are kept, one boundary symbol each.
		{"the  cat", []string{"▁the", "▁", "▁cat"}},
		{"", []string{}},
	} {
		got := pieceNames(tok, pieces, tok.encode(tc.text))
		if !slices.Equal(got, tc.want) {
			t.Errorf("encode(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestTokenizerNonBMP checks that characters outside the Basic Multilingual
// Plane (emoji) are one unknown piece each run, not two halves of a pair.
func TestTokenizerNonBMP(t *testing.T) {
	pieces := map[string]float64{"▁": -2, "▁a": -1, "▁b": -1}
	tok := testVocab(t, pieces)
	got := pieceNames(tok, pieces, tok.encode("a 😀😀 b"))
	want := []string{"▁a", "▁", "\ufffd", "▁b"}
	if !slices.Equal(got, want) {
		t.Errorf("encode = %q, want %q", got, want)
	}
}

func FuzzTokenize(f *testing.F) {
	pieces := map[string]float64{"▁": -2, "▁the": -1, "e": -3, "▁cat": -2, "a": -4, "t": -4}
	tok := testVocab(f, pieces)
	for _, s := range []string{"the cat", "", " ", "😀", "\xff\xfe", "ﬁ ½"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range tok.encode(s) {
			if id < 0 || id >= len(tok.pieceLen) {
				t.Fatalf("encode(%q) produced id %d outside the vocabulary", s, id)
			}
		}
	})
}
