package retrieve

import (
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
)

// VectorCache keeps the query vectors of recent questions, by the model
// (and the export that embedded them) and the question's text, so that a
// question asked again is not embedded again: strata_search then
// strata_ask with the same question, as the answer_from_documents prompt
// has an assistant do, or a client's retry. A query embedding is most of a
// search's own CPU with bge-small (issue 31). One cache serves every
// engine of a process; it is safe for concurrent use. Vectors are copied
// in and out, so no caller can change another's.
type VectorCache struct {
	c *lru.Cache[vectorKey, []float32]
}

type vectorKey struct{ model, encoder, text string }

// NewVectorCache returns a cache of at most n vectors (about 1.5 KiB each
// at 384 dimensions); n < 1 gives nil, which caches nothing.
func NewVectorCache(n int) *VectorCache {
	if n < 1 {
		return nil
	}
	c, err := lru.New[vectorKey, []float32](n)
	if err != nil {
		return nil
	}
	return &VectorCache{c: c}
}

func (v *VectorCache) get(k vectorKey) ([]float32, bool) {
	if v == nil {
		return nil, false
	}
	vec, ok := v.c.Get(k)
	return slices.Clone(vec), ok
}

func (v *VectorCache) add(k vectorKey, vec []float32) {
	if v != nil {
		v.c.Add(k, slices.Clone(vec))
	}
}

// Len is how many vectors the cache holds.
func (v *VectorCache) Len() int {
	if v == nil {
		return 0
	}
	return v.c.Len()
}
