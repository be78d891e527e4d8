package testenv

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/stratakb/stratakb/embed"
)

// BagOfWords is a deterministic stand-in for an embedding model in tests
// that arrange the vector channel's ranking: each lower-cased word adds one
// to a hashed dimension of dims, and the vector is normalised, so two texts
// are close when they share words. A text without words gets the first unit
// vector. Tests of retrieval quality use the real model instead.
func BagOfWords(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dims)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for j := range v {
		v[j] = float32(float64(v[j]) / math.Sqrt(n))
	}
	return v
}

// Bow is a deterministic bag-of-words embedder of 64 dimensions
// (BagOfWords), so the vector channel finds passages that share the
// query's words without a model's start-up cost. Quality is measured with
// the real model.
type Bow struct{}

// Model names the embedder.
func (Bow) Model() embed.ModelInfo { return embed.ModelInfo{Name: "test-bow-64@1", Dims: 64} }

// Embed returns each text's bag-of-words vector.
func (Bow) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = BagOfWords(t, 64)
	}
	return out, nil
}
