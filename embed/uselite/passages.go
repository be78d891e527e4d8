package uselite

import (
	"context"
	"math"
)

// PassageWindow and PassageStride say how EmbedPassages cuts a passage: into
// windows of PassageWindow pieces, one starting every PassageStride pieces.
// They were chosen on SciFact (docs/embeddings.md); changing them changes the
// vectors, so ModelName must change with them.
const (
	PassageWindow = 64
	PassageStride = 64
)

// EmbedPassages returns one L2-normalised vector per passage: the normalised
// mean of the vectors of its PassageWindow-piece windows. A passage of at
// most PassageWindow pieces has one window, so its vector is the one Embed
// returns. Use it for chunks, and for queries too when both sides should be
// embedded the same way.
func (m *Model) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	var seqs [][]int
	owner := make([]int, 0, len(texts))
	for i, t := range texts {
		ids := m.tok.encode(t)
		for _, w := range windows(len(ids), PassageWindow, PassageStride) {
			seqs = append(seqs, ids[w.start:w.end])
			owner = append(owner, i)
		}
	}
	vecs, err := m.embedIDs(ctx, seqs)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for k, v := range vecs {
		i := owner[k]
		if out[i] == nil {
			out[i] = make([]float32, dims)
		}
		for j, x := range v {
			out[i][j] += x
		}
	}
	for _, v := range out {
		normalize(v)
	}
	return out, nil
}

// normalize scales v to unit length in place (a zero vector stays zero).
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}

// window is a span [start, end) of a passage's piece ids.
type window struct{ start, end int }

// windows cuts n pieces into windows of size pieces, starting every stride
// pieces. The last window ends at the last piece (and starts size pieces
// before it), so no window is a short tail fragment unless the whole passage
// is shorter than size.
func windows(n, size, stride int) []window {
	if n <= size {
		return []window{{0, n}}
	}
	var out []window
	for start := 0; start+size < n; start += stride {
		out = append(out, window{start, start + size})
	}
	return append(out, window{n - size, n})
}
