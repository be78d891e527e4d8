package retrieve

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/testenv"
)

// countingBow is the bag-of-words embedder, counting the texts it embeds.
type countingBow struct {
	testenv.Bow
	texts *atomic.Int64
	name  string
}

func (c countingBow) Model() embed.ModelInfo {
	m := c.Bow.Model()
	if c.name != "" {
		m.Name = c.name
	}
	return m
}

func (c countingBow) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Bow.Embed(ctx, texts)
}

// TestVectorCache: engines sharing a cache embed a question once; another
// question, or another model's vectors, is embedded again; what a caller
// does to its vector does not reach the next caller.
func TestVectorCache(t *testing.T) {
	ctx := context.Background()
	var n atomic.Int64
	cache := NewVectorCache(8)
	search := New(nil, Options{Embedder: countingBow{texts: &n}, Vectors: cache})
	ask := New(nil, Options{Embedder: countingBow{texts: &n}, Vectors: cache, DocEvidenceEverywhere: true})
	first, err := search.Query(Query{Text: "unused leave days"}).QueryVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(first)
	first[0] += 42 // a caller's change stays its own
	again, err := ask.Query(Query{Text: "unused leave days"}).QueryVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 || !slices.Equal(again, want) {
		t.Fatalf("the second engine embedded %d texts in all (want 1), vector equal to the first's: %t", n.Load(), slices.Equal(again, want))
	}
	if _, err := ask.Query(Query{Text: "travel expenses"}).QueryVector(ctx); err != nil || n.Load() != 2 {
		t.Fatalf("another question: %v, %d texts embedded, want 2", err, n.Load())
	}
	other := New(nil, Options{Embedder: countingBow{texts: &n, name: "other-model@1"}, Vectors: cache})
	if _, err := other.Query(Query{Text: "unused leave days"}).QueryVector(ctx); err != nil || n.Load() != 3 {
		t.Fatalf("another model: %v, %d texts embedded, want 3", err, n.Load())
	}
	uncached := New(nil, Options{Embedder: countingBow{texts: &n}})
	if _, err := uncached.Query(Query{Text: "unused leave days"}).QueryVector(ctx); err != nil || n.Load() != 4 {
		t.Fatalf("no cache: %v, %d texts embedded, want 4", err, n.Load())
	}
	if cache.Len() != 3 {
		t.Errorf("cache holds %d vectors, want 3", cache.Len())
	}
	if NewVectorCache(0) != nil || (*VectorCache)(nil).Len() != 0 {
		t.Error("a zero-sized cache is not nil, or nil has vectors")
	}
}
