package bert

import (
	"context"
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"
)

// CrossConfig says where a cross-encoder and ONNX Runtime are and how to run
// them. The model is a sequence-classification export: inputs input_ids,
// attention_mask and token_type_ids, output logits [batch, 1].
type CrossConfig struct {
	// ModelDir holds model.onnx and tokenizer.json (or vocab.txt).
	ModelDir string
	// LibraryPath is the ONNX Runtime shared library (libonnxruntime.so.1).
	LibraryPath string
	// IntraOpThreads is ONNX Runtime's thread count per call; 0 means
	// ortenv.DefaultThreads (one per CPU, at most 8).
	IntraOpThreads int
	// BatchSize is the most pairs per call; 0 means DefaultBatchSize. A
	// dynamically quantized model always runs one pair per call.
	BatchSize int
	// Spin lets ONNX Runtime's worker threads busy-wait between calls.
	Spin bool
	// MaxTokens is the truncation length of a query and passage pair,
	// [CLS] and both [SEP] included.
	MaxTokens int
	// FewCalls opens the session for a few calls (Config.FewCalls).
	FewCalls bool
}

// CrossEncoder scores how well passages answer a query, reading both
// together. Its methods are safe for concurrent use.
type CrossEncoder struct {
	eng *engine
}

// LoadCrossEncoder checks cfg, checks that every file exists (all missing
// ones in one *MissingFilesError), reads the tokenizer and opens one ONNX
// Runtime session.
func LoadCrossEncoder(cfg CrossConfig) (*CrossEncoder, error) {
	eng, err := load(cfg, "logits")
	if err != nil {
		return nil, err
	}
	return &CrossEncoder{eng: eng}, nil
}

// Score returns, for each passage in order, sigmoid of the model's logit
// for the pair [CLS] query [SEP] passage [SEP]: a relevance in (0, 1). A
// pair longer than MaxTokens is truncated longest first.
func (c *CrossEncoder) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	rows := make([]row, len(passages))
	for i, p := range passages {
		rows[i].ids, rows[i].types = c.eng.tok.encodePair(query, p, c.eng.maxTokens)
	}
	out := make([]float64, len(passages))
	err := c.eng.forEachBatch(ctx, rows, func(idx []int, logits []float32, shape ort.Shape) error {
		if len(shape) != 2 || shape[0] != int64(len(idx)) || shape[1] != 1 {
			return fmt.Errorf("bert: cross-encoder returned logits of shape %v, want [%d, 1]", shape, len(idx))
		}
		for b, i := range idx {
			out[i] = 1 / (1 + math.Exp(-float64(logits[b])))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Close releases the ONNX Runtime session; it is idempotent, and Score after
// Close returns an error.
func (c *CrossEncoder) Close() error { return c.eng.close() }
