package bert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/stratakb/stratakb/embed/ortenv"
)

// DefaultBatchSize is the most texts per ONNX Runtime call when BatchSize is
// 0. On 800-byte passages (about 170 tokens, 2 shared cores) batches of 8
// or 32 embedded 12–35 % fewer passages per CPU-second than one text per
// call, on each of the four models measured (bge-small and all-MiniLM,
// fp32 and quantized); batches of 2 were within 7 % of it. See
// BenchmarkBatchSize.
const DefaultBatchSize = 1

// batchTokenBudget caps the padded tokens (texts × longest text) of one
// call. The attention scores of a batch grow with texts × length², so a
// batch of 512-token texts is cut to 8 texts, which bounds the ONNX Runtime
// arena (which keeps its largest allocation) to about 100 MiB.
const batchTokenBudget = 4096

// MissingFilesError reports model or library files that do not exist; it
// matches fs.ErrNotExist with errors.Is.
type MissingFilesError = ortenv.MissingFilesError

// engine is a tokenizer and an ONNX Runtime session of a BERT-shaped graph
// (int64 inputs input_ids, attention_mask and token_type_ids [batch, seq];
// one float32 output). Its methods are safe for concurrent use.
type engine struct {
	tok       *tokenizer
	batchSize int
	maxTokens int
	output    string

	session *ortenv.Session
}

// row is one encoded input: token ids and their token type ids (nil: all 0).
type row struct{ ids, types []int }

// load checks cfg, checks that the files exist (all missing ones in one
// *MissingFilesError), reads the tokenizer and opens a session that reads
// the graph's output named output. CrossConfig holds every setting the
// engine needs; Load fills one from a Config.
func load(cfg CrossConfig, output string) (*engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := requireFiles(cfg.ModelDir, cfg.LibraryPath); err != nil {
		return nil, err
	}
	// The tokenizer is read while ONNX Runtime opens the graph: a
	// command-line search waits for both (issue 31).
	type loaded struct {
		tok *tokenizer
		err error
	}
	tokc := make(chan loaded, 1)
	go func() {
		tok, err := loadTokenizer(cfg.ModelDir)
		tokc <- loaded{tok, err}
	}()
	session, err := initAndOpen(cfg, output)
	lt := <-tokc
	if err == nil && lt.err != nil {
		_ = session.Close()
		err = fmt.Errorf("bert: %w", lt.err)
	}
	if err != nil {
		return nil, err
	}
	tok := lt.tok
	model := filepath.Join(cfg.ModelDir, "model.onnx")
	batch := cfg.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	if batch > 1 {
		quantized, err := dynamicQuantized(model)
		if err != nil {
			_ = session.Close()
			return nil, fmt.Errorf("bert: %w", err)
		}
		if quantized {
			batch = 1
		}
	}
	return &engine{tok: tok, batchSize: batch, maxTokens: cfg.MaxTokens, output: output, session: session}, nil
}

// initAndOpen initialises ONNX Runtime and opens the session of cfg's
// graph that reads output.
func initAndOpen(cfg CrossConfig, output string) (*ortenv.Session, error) {
	if err := ortenv.Init(cfg.LibraryPath); err != nil {
		return nil, fmt.Errorf("bert: %w", err)
	}
	model := filepath.Join(cfg.ModelDir, "model.onnx")
	session, err := openSession(model, []string{"input_ids", "attention_mask", "token_type_ids"}, []string{output},
		sessionSettings{threads: cfg.IntraOpThreads, spin: cfg.Spin, fewCalls: cfg.FewCalls})
	if err != nil {
		return nil, fmt.Errorf("bert: open %s: %w", model, err)
	}
	return session, nil
}

func (cfg CrossConfig) validate() error {
	switch {
	case cfg.ModelDir == "":
		return errors.New("bert: ModelDir is empty")
	case cfg.LibraryPath == "":
		return errors.New("bert: LibraryPath is empty")
	case cfg.IntraOpThreads < 0:
		return fmt.Errorf("bert: IntraOpThreads is %d, want 0 (one per CPU) or more", cfg.IntraOpThreads)
	case cfg.BatchSize < 0:
		return fmt.Errorf("bert: BatchSize is %d, want 0 (default) or more", cfg.BatchSize)
	case cfg.MaxTokens < 3:
		return fmt.Errorf("bert: MaxTokens is %d, want at least 3 ([CLS] and two [SEP])", cfg.MaxTokens)
	}
	return nil
}

// requireFiles reports, in one *MissingFilesError, each of model.onnx, the
// tokenizer (tokenizer.json, else vocab.txt) and the library that is absent.
func requireFiles(modelDir, libraryPath string) error {
	tokenizer := filepath.Join(modelDir, "tokenizer.json")
	if vocab := filepath.Join(modelDir, "vocab.txt"); !exists(tokenizer) && exists(vocab) {
		tokenizer = vocab
	}
	if err := ortenv.RequireFiles(filepath.Join(modelDir, "model.onnx"), tokenizer, libraryPath); err != nil {
		return fmt.Errorf("bert: %w", err)
	}
	return nil
}

// dynamicQuantized reports whether the ONNX graph at path quantizes its
// activations at run time (DynamicQuantizeLinear). Such a graph takes one
// scale for the whole batch, so a text's vector would depend on the texts
// batched with it (cosine 0.996 to the text embedded alone, measured on the
// -q models): such a model runs one text per call. The operator's name is
// looked for in the file's bytes, which holds it as a plain string.
func dynamicQuantized(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	op := []byte("DynamicQuantizeLinear")
	buf := make([]byte, 1<<20)
	kept := 0 // bytes carried over from the previous read, so a name across reads is found
	for {
		n, err := io.ReadFull(f, buf[kept:])
		if bytes.Contains(buf[:kept+n], op) {
			return true, nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", path, err)
		}
		kept = copy(buf, buf[kept+n-len(op)+1:kept+n])
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// forEachBatch sorts rows by length, cuts them into batches of at most
// e.batchSize rows and batchTokenBudget padded tokens, so that little
// padding is computed, runs each and calls use with the indices (into rows)
// of the batch and the graph's output for it, whose first dimension follows
// those indices.
func (e *engine) forEachBatch(ctx context.Context, rows []row, use func(idx []int, out []float32, shape ort.Shape) error) error {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(rows[a].ids) - len(rows[b].ids) })
	for start := 0; start < len(order); {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bert: %w", err)
		}
		end := start + 1
		for end < len(order) && end-start < e.batchSize && (end-start+1)*len(rows[order[end]].ids) <= batchTokenBudget {
			end++
		}
		idx := order[start:end]
		out, shape, err := e.run(rows, idx)
		if err != nil {
			return err
		}
		if err := use(idx, out, shape); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// run runs rows[idx] in one ONNX Runtime call, padded to the longest, and
// returns the output and its shape.
func (e *engine) run(rows []row, idx []int) ([]float32, ort.Shape, error) {
	n, length := len(idx), 1 // an empty batch still needs one position
	for _, i := range idx {
		length = max(length, len(rows[i].ids))
	}
	ids, mask, types := make([]int64, n*length), make([]int64, n*length), make([]int64, n*length)
	for b, i := range idx {
		r, at := rows[i], b*length
		for p := range length {
			ids[at+p] = int64(e.tok.pad)
			if p < len(r.ids) {
				ids[at+p], mask[at+p] = int64(r.ids[p]), 1
			}
			if p < len(r.types) {
				types[at+p] = int64(r.types[p])
			}
		}
	}
	inputs := make([]ort.Value, 0, 3)
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, data := range [][]int64{ids, mask, types} {
		t, err := ort.NewTensor(ort.NewShape(int64(n), int64(length)), data)
		if err != nil {
			return nil, nil, fmt.Errorf("bert: input tensor: %w", err)
		}
		inputs = append(inputs, t)
	}
	return e.call(inputs, n, length)
}

// call runs the session on inputs and returns its one output.
func (e *engine) call(inputs []ort.Value, n, length int) ([]float32, ort.Shape, error) {
	outputs := []ort.Value{nil} // ONNX Runtime allocates it
	if err := e.session.Run(inputs, outputs); err != nil {
		return nil, nil, fmt.Errorf("bert: run batch of %d × %d tokens: %w", n, length, err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, nil, fmt.Errorf("bert: output %q is a %T, want a float32 tensor", e.output, outputs[0])
	}
	// The tensor's data is a Go copy of ONNX Runtime's, so it outlives Destroy.
	return t.GetData(), t.GetShape(), nil
}

// close releases the session; it is idempotent.
func (e *engine) close() error {
	if err := e.session.Close(); err != nil {
		return fmt.Errorf("bert: %w", err)
	}
	return nil
}
