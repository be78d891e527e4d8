// Package uselite is the local sentence encoder: Google's Universal Sentence
// Encoder Lite (512-d), ported from its TF.js release to ONNX Runtime.
//
// The tokenizer is a pure-Go unigram sentencepiece tokenizer that matches the
// reference JavaScript implementation id for id. The network is rebuilt as an
// ONNX graph in memory from the TF.js weights (no converted model file is
// stored) and run by ONNX Runtime through github.com/yalue/onnxruntime_go.
//
// The model reads at most 128 sentencepiece pieces. Longer passages are
// embedded as several windows (see EmbedPassages); docs/embeddings.md records
// the measurement behind that choice.
package uselite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/stratakb/stratakb/embed/ortenv"
)

// ModelName is the stable name stored with every vector this package makes.
// Change it whenever a change here alters the vectors (weights, tokenizer,
// clipping, the passage windows of EmbedPassages), so stored vectors are
// re-embedded.
const ModelName = "use-lite-512@1"

// Dims is the length of every vector.
const Dims = 512

// MaxPieces is the number of sentencepiece pieces the model reads; later
// pieces of a text are ignored by Embed.
const MaxPieces = 128

// DefaultBatchSize is the most texts per ONNX Runtime call when
// Config.BatchSize is 0, chosen by measurement (docs/embeddings.md). Long
// texts are batched fewer at a time (at most 2,048 padded pieces per call).
const DefaultBatchSize = 64

// DefaultThreads is ONNX Runtime's thread count per call when
// Config.IntraOpThreads is 0, for a machine with cpus CPUs: one per CPU, at
// most 8. On 2 CPUs, with spinning off, 2 threads gave the most 8-client
// search throughput and 1 thread about 10 % less CPU per query
// (docs/embeddings.md). The cap of 8 is not measured: a query of at most
// 128 pieces has little work to share among more threads.
func DefaultThreads(cpus int) int { return ortenv.DefaultThreads(cpus) }

// Config says where the model and ONNX Runtime are and how to run them.
type Config struct {
	// ModelDir holds model.json, its weight shards and vocab.json.
	ModelDir string
	// LibraryPath is the ONNX Runtime shared library (libonnxruntime.so.1).
	LibraryPath string
	// IntraOpThreads is ONNX Runtime's thread count per call; 0 means
	// DefaultThreads.
	IntraOpThreads int
	// Spin lets ONNX Runtime's worker threads busy-wait for work between
	// and after calls. It is off by default: on a small machine the spinning
	// threads took most of the CPU of a query (docs/embeddings.md) and
	// starved the other requests; benchmarks turn it on to compare.
	Spin bool
	// BatchSize is the most texts per call; 0 means DefaultBatchSize.
	BatchSize int
}

// DefaultConfig returns the configuration for the files that `make setup`
// puts under varDir (the repository's var/ folder).
func DefaultConfig(varDir string) Config {
	return Config{
		ModelDir:    filepath.Join(varDir, "models", "use-lite"),
		LibraryPath: filepath.Join(varDir, "lib", "libonnxruntime.so.1"),
	}
}

// MissingFilesError reports model or library files that do not exist; it
// matches fs.ErrNotExist with errors.Is.
type MissingFilesError = ortenv.MissingFilesError

// Model is the loaded encoder. Its methods are safe for concurrent use; load
// one Model per process and share it.
type Model struct {
	tok       *tokenizer
	batchSize int

	session *ortenv.Session
}

// Load checks that every file exists, builds the ONNX graph from the TF.js
// weights and opens one ONNX Runtime session. Missing files are reported
// together in one *MissingFilesError.
func Load(cfg Config) (*Model, error) {
	if cfg.ModelDir == "" {
		return nil, errors.New("uselite: Config.ModelDir is empty")
	}
	if cfg.LibraryPath == "" {
		return nil, errors.New("uselite: Config.LibraryPath is empty")
	}
	if cfg.IntraOpThreads < 0 {
		return nil, fmt.Errorf("uselite: Config.IntraOpThreads is %d, want 0 (all CPUs) or more", cfg.IntraOpThreads)
	}
	if cfg.BatchSize < 0 {
		return nil, fmt.Errorf("uselite: Config.BatchSize is %d, want 0 (default) or more", cfg.BatchSize)
	}
	if err := requireFiles(filepath.Join(cfg.ModelDir, "model.json"), filepath.Join(cfg.ModelDir, "vocab.json"), cfg.LibraryPath); err != nil {
		return nil, err
	}
	manifest, shards, err := readManifest(cfg.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	if err := requireFiles(shards...); err != nil {
		return nil, err
	}
	tok, err := loadVocab(filepath.Join(cfg.ModelDir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	weights, err := readWeights(cfg.ModelDir, manifest)
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	onnx, err := buildGraph(weights)
	if err != nil {
		return nil, fmt.Errorf("uselite: build graph: %w", err)
	}
	if err := ortenv.Init(cfg.LibraryPath); err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	opts, err := sessionOptions(cfg)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	session, err := ort.NewDynamicAdvancedSessionWithONNXData(onnx, []string{"ids", "mask"}, []string{"embedding"}, opts)
	if err != nil {
		return nil, fmt.Errorf("uselite: create session: %w", err)
	}
	batch := cfg.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	// The weights and the encoded graph (about 90 MB) are garbage now that
	// ONNX Runtime holds its own copy: hand the memory back to the system.
	debug.FreeOSMemory()
	return &Model{tok: tok, batchSize: batch, session: ortenv.NewSession(session)}, nil
}

// sessionOptions are the ONNX Runtime session options for cfg: the thread
// counts, and spinning off unless cfg.Spin.
func sessionOptions(cfg Config) (*ort.SessionOptions, error) {
	opts, err := ortenv.SessionOptions(cfg.IntraOpThreads, cfg.Spin)
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	return opts, nil
}

func requireFiles(paths ...string) error {
	if err := ortenv.RequireFiles(paths...); err != nil {
		return fmt.Errorf("uselite: %w", err)
	}
	return nil
}

// Name returns the model name stored with each vector (ModelName).
func (m *Model) Name() string { return ModelName }

// Dims returns the vector length, 512.
func (m *Model) Dims() int { return Dims }

// Tokenize returns the sentencepiece ids of text, unclipped: Embed reads only
// the first MaxPieces of them.
func (m *Model) Tokenize(text string) []int { return m.tok.encode(text) }

// Embed returns one L2-normalised vector per text, in order. A text longer
// than MaxPieces pieces is represented by its first MaxPieces pieces; use
// EmbedPassages for long text. The empty text has a vector too (the model's
// response to no input).
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	seqs := make([][]int, len(texts))
	for i, t := range texts {
		ids := m.tok.encode(t)
		if len(ids) > maxPieces {
			ids = ids[:maxPieces]
		}
		seqs[i] = ids
	}
	return m.embedIDs(ctx, seqs)
}

// batchPieceBudget caps the padded pieces (texts × longest text) of one ONNX
// Runtime call. Long input gains nothing per CPU second from batches larger
// than this (docs/embeddings.md), and each extra row of 128 pieces costs
// several MiB of ONNX Runtime arena that stays allocated.
const batchPieceBudget = 16 * maxPieces

// embedIDs embeds piece sequences of at most maxPieces each. Sequences are
// sorted by length and cut into batches of at most m.batchSize sequences and
// batchPieceBudget padded pieces, so little padding is computed.
func (m *Model) embedIDs(ctx context.Context, seqs [][]int) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(seqs[a]) - len(seqs[b]) })
	for start := 0; start < len(order); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("uselite: embed: %w", err)
		}
		end := start + 1
		for end < len(order) && end-start < m.batchSize && (end-start+1)*len(seqs[order[end]]) <= batchPieceBudget {
			end++
		}
		batch := make([][]int, 0, end-start)
		for _, i := range order[start:end] {
			batch = append(batch, seqs[i])
		}
		vecs, err := m.run(batch)
		if err != nil {
			return nil, err
		}
		for k, i := range order[start:end] {
			out[i] = vecs[k]
		}
		start = end
	}
	return out, nil
}

// run embeds one batch in one ONNX Runtime call.
func (m *Model) run(batch [][]int) ([][]float32, error) {
	length := 1 // an all-empty batch still needs one (masked) position
	for _, s := range batch {
		length = max(length, len(s))
	}
	n := len(batch)
	ids := make([]int64, n*length)
	mask := make([]float32, n*length)
	for b, s := range batch {
		for p, id := range s {
			ids[b*length+p] = int64(id)
			mask[b*length+p] = 1
		}
	}
	idsT, err := ort.NewTensor(ort.NewShape(int64(n), int64(length)), ids)
	if err != nil {
		return nil, fmt.Errorf("uselite: ids tensor: %w", err)
	}
	defer idsT.Destroy()
	maskT, err := ort.NewTensor(ort.NewShape(int64(n), int64(length)), mask)
	if err != nil {
		return nil, fmt.Errorf("uselite: mask tensor: %w", err)
	}
	defer maskT.Destroy()
	outT, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(n), dims))
	if err != nil {
		return nil, fmt.Errorf("uselite: output tensor: %w", err)
	}
	defer outT.Destroy()

	if err := m.session.Run([]ort.Value{idsT, maskT}, []ort.Value{outT}); err != nil {
		return nil, fmt.Errorf("uselite: run batch of %d × %d pieces: %w", n, length, err)
	}
	data := outT.GetData()
	vecs := make([][]float32, n)
	for b := range vecs {
		vecs[b] = slices.Clone(data[b*dims : (b+1)*dims])
	}
	return vecs, nil
}

// Close releases the ONNX Runtime session. The process-wide ONNX Runtime
// environment stays initialised, so a later Load is cheap. Close is
// idempotent; Embed after Close returns an error.
func (m *Model) Close() error {
	if err := m.session.Close(); err != nil {
		return fmt.Errorf("uselite: %w", err)
	}
	return nil
}
