package retrieve

import (
	"context"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Corpus is what the engine reads: the layers and the data version, the
// sections the query names, the lexical and vector channels' queries, and
// the passages found. *store.Corpus is one.
type Corpus interface {
	Version(ctx context.Context) (string, error)
	Layers(ctx context.Context) ([]store.Layer, error)
	CompleteLayers(ctx context.Context, model string, layerIDs []int64) ([]int64, error)
	LayerModels(ctx context.Context, layerIDs []int64) (map[int64][]string, error)
	ModelParams(ctx context.Context, model string) (store.ModelParams, bool, error)
	SectionsByKeys(ctx context.Context, keys []string, layerIDs []int64, filter map[string]string, limit int) ([]store.Section, error)
	SectionsByKeysIn(ctx context.Context, keys []string, layerIDs, docIDs []int64, filter map[string]string, limit int) ([]store.Section, error)
	DocumentsNamed(ctx context.Context, layerIDs []int64, keys []string, limit int) ([]store.NamedDoc, error)
	NearestInDocuments(ctx context.Context, model string, vec []float32, docIDs []int64, limit int) ([]store.VecHit, error)
	BestWordsInDocuments(ctx context.Context, query string, docIDs []int64, limit int) ([]int64, error)
	DocumentOutlines(ctx context.Context, docIDs []int64) ([]store.OutlineEntry, error)
	HasNumberedSections(ctx context.Context, layerIDs []int64) (bool, error)
	DocumentsHolding(ctx context.Context, layerIDs []int64, names []string, limit int) ([]store.NamedDoc, error)
	NumberKeysOf(ctx context.Context, layerIDs []int64) (store.NumberKeys, error)
	PrepareLexical(ctx context.Context, query string, terms []string, layerIDs []int64) (store.LexicalPrep, error)
	PrepareLexicalLayers(ctx context.Context, query string, terms []string, layerIDs []int64, words []string) (store.LexicalLayersPrep, error)
	LexemeDF(ctx context.Context, words string, layerIDs []int64) (map[string]int64, error)
	LexemesDF(ctx context.Context, lexemes []string, layerIDs []int64) (map[string]int64, error)
	ChunkLayers(ctx context.Context, ids []int64) (map[int64]int64, error)
	LayerWords(ctx context.Context, query string, layerIDs []int64) (store.LayerWords, error)
	SearchBM25(ctx context.Context, q store.BM25Query) ([]store.LexHit, error)
	SearchBM25Many(ctx context.Context, qs []store.BM25Query) ([][]store.LexHit, map[int64]int64, error)
	SearchVectors(ctx context.Context, q store.VectorQuery) ([]store.VecHit, error)
	Chunks(ctx context.Context, ids []int64) (map[int64]store.Hit, error)
	Similarities(ctx context.Context, model string, vec []float32, chunkIDs []int64) (map[int64]float64, error)
	SpanSimilarity(ctx context.Context, model string, vec []float32, docID int64, start, end int) (float64, error)
}

var _ Corpus = (*store.Corpus)(nil)
