// Package bert runs BERT-family sentence encoders (all-MiniLM, e5, bge …)
// and cross-encoders exported to ONNX, with ONNX Runtime through
// github.com/yalue/onnxruntime_go.
//
// The tokenizer is a pure-Go port of Hugging Face tokenizers' BERT pipeline
// (BertNormalizer, BertPreTokenizer, WordPiece, the [CLS] … [SEP] template),
// read from a model's tokenizer.json or vocab.txt; testdata/reference.json
// holds what tokenizers and sentence-transformers-style pooling produce for
// the models this package is tested with, and parity_test.go compares.
//
// A text longer than the model's MaxTokens is truncated: only its first
// tokens are embedded.
package bert

import (
	"context"
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"
)

// Pooling says how a text's vector is made from the encoder's last hidden
// state.
type Pooling int

const (
	// Mean averages the hidden states of the text's tokens ([CLS] and [SEP]
	// included, padding not).
	Mean Pooling = iota
	// CLS takes the hidden state of the first token, [CLS].
	CLS
)

func (p Pooling) String() string {
	switch p {
	case Mean:
		return "mean"
	case CLS:
		return "cls"
	}
	return fmt.Sprintf("Pooling(%d)", int(p))
}

// Spec describes a sentence encoder: what is stored with its vectors and how
// to feed and pool it.
type Spec struct {
	// Name is stored with every vector, e.g. "bge-small-en-v1.5@1". Change
	// its version whenever a change alters the vectors.
	Name string
	// Dims is the length of each vector (the hidden size).
	Dims int
	// MaxTokens is the truncation length, [CLS] and [SEP] included.
	MaxTokens int
	// Pooling turns the last hidden state into one vector.
	Pooling Pooling
	// QueryPrefix is put before each text Embed embeds.
	QueryPrefix string
	// PassagePrefix is put before each text EmbedPassages embeds.
	PassagePrefix string
}

// Known holds the specs of the models this package is tested with, keyed by
// the name of their folder under var/models.
var Known = map[string]Spec{
	"all-minilm-l6-v2":    miniLM("all-minilm-l6-v2"),
	"all-minilm-l6-v2-q":  miniLM("all-minilm-l6-v2-q"),
	"e5-small-v2":         e5("e5-small-v2"),
	"e5-small-v2-q":       e5("e5-small-v2-q"),
	"bge-small-en-v1.5":   bge("bge-small-en-v1.5"),
	"bge-small-en-v1.5-q": bge("bge-small-en-v1.5-q"),
}

func miniLM(folder string) Spec {
	return Spec{Name: folder + "@1", Dims: 384, MaxTokens: 256, Pooling: Mean}
}

func e5(folder string) Spec {
	return Spec{Name: folder + "@1", Dims: 384, MaxTokens: 512, Pooling: Mean, QueryPrefix: "query: ", PassagePrefix: "passage: "}
}

func bge(folder string) Spec {
	return Spec{Name: folder + "@1", Dims: 384, MaxTokens: 512, Pooling: CLS,
		QueryPrefix: "Represent this sentence for searching relevant passages: "}
}

// Config says where a sentence encoder and ONNX Runtime are and how to run
// them.
type Config struct {
	// ModelDir holds model.onnx and tokenizer.json (or vocab.txt, with an
	// optional tokenizer_config.json).
	ModelDir string
	// LibraryPath is the ONNX Runtime shared library (libonnxruntime.so.1).
	LibraryPath string
	// IntraOpThreads is ONNX Runtime's thread count per call; 0 means
	// ortenv.DefaultThreads (one per CPU, at most 8).
	IntraOpThreads int
	// BatchSize is the most texts per call; 0 means DefaultBatchSize. A
	// dynamically quantized model always runs one text per call, so that a
	// text's vector does not depend on the texts batched with it.
	BatchSize int
	// Spin lets ONNX Runtime's worker threads busy-wait between calls; off
	// by default (see ortenv.SessionOptions).
	Spin bool
	// FewCalls opens the session for a few calls: ONNX Runtime does not
	// pre-pack the weights (session.disable_prepacking), which saves part
	// of the load and costs a little on each call.
	FewCalls bool
	// Spec describes the model.
	Spec Spec
}

// Model is a loaded sentence encoder. Its methods are safe for concurrent
// use; load one Model per model and process and share it.
type Model struct {
	spec Spec
	eng  *engine
}

// Load checks cfg, checks that every file exists (all missing ones are
// reported together in one *MissingFilesError), reads the tokenizer and
// opens one ONNX Runtime session.
func Load(cfg Config) (*Model, error) {
	s := cfg.Spec
	if s.Name == "" || s.Dims <= 0 || (s.Pooling != Mean && s.Pooling != CLS) {
		return nil, fmt.Errorf("bert: Spec %+v needs a Name, Dims > 0 and Mean or CLS pooling", s)
	}
	eng, err := load(CrossConfig{
		ModelDir: cfg.ModelDir, LibraryPath: cfg.LibraryPath, IntraOpThreads: cfg.IntraOpThreads,
		BatchSize: cfg.BatchSize, Spin: cfg.Spin, MaxTokens: s.MaxTokens, FewCalls: cfg.FewCalls,
	}, "last_hidden_state")
	if err != nil {
		return nil, err
	}
	return &Model{spec: s, eng: eng}, nil
}

// Name returns the name stored with each vector (Spec.Name).
func (m *Model) Name() string { return m.spec.Name }

// Dims returns the vector length (Spec.Dims).
func (m *Model) Dims() int { return m.spec.Dims }

// Tokenize returns text's token ids, [CLS] first and [SEP] last, truncated
// to MaxTokens. No prefix is added.
func (m *Model) Tokenize(text string) []int { return m.eng.tok.encode(text, m.spec.MaxTokens) }

// Embed embeds texts as queries (QueryPrefix + text) and returns one
// L2-normalised vector per text, in order.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.embed(ctx, m.spec.QueryPrefix, texts)
}

// EmbedPassages embeds texts as passages (PassagePrefix + text) and returns
// one L2-normalised vector per text, in order.
func (m *Model) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	return m.embed(ctx, m.spec.PassagePrefix, texts)
}

func (m *Model) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	rows := make([]row, len(texts))
	for i, t := range texts {
		rows[i].ids = m.Tokenize(prefix + t)
	}
	out := make([][]float32, len(texts))
	err := m.eng.forEachBatch(ctx, rows, func(idx []int, hidden []float32, shape ort.Shape) error {
		if len(shape) != 3 || shape[0] != int64(len(idx)) || shape[2] != int64(m.spec.Dims) {
			return fmt.Errorf("bert: %s returned last_hidden_state of shape %v, want [%d, length, %d]", m.spec.Name, shape, len(idx), m.spec.Dims)
		}
		for b, i := range idx {
			out[i] = m.pool(hidden, b, int(shape[1]), len(rows[i].ids))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pool returns the L2-normalised vector of row b of hidden ([batch, length,
// Dims]), whose first n positions are the text's tokens.
func (m *Model) pool(hidden []float32, b, length, n int) []float32 {
	d := m.spec.Dims
	row := hidden[b*length*d : (b+1)*length*d]
	if m.spec.Pooling == CLS {
		n = 1
	}
	sum := make([]float64, d)
	for p := range n {
		for j, x := range row[p*d : (p+1)*d] {
			sum[j] += float64(x)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	// Dividing by n before normalising changes nothing but the rounding.
	norm = max(math.Sqrt(norm), 1e-12)
	v := make([]float32, d)
	for j, x := range sum {
		v[j] = float32(x / norm)
	}
	return v
}

// Close releases the ONNX Runtime session. The process-wide ONNX Runtime
// environment stays initialised, so a later Load is cheap. Close is
// idempotent; Embed after Close returns an error.
func (m *Model) Close() error { return m.eng.close() }
