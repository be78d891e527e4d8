// Package embed turns text into vectors. It holds the Embedder interface the
// rest of StrataKB uses, the provider configuration read from the environment
// (EMBEDDING_PROVIDER and friends, STRATA_LOCAL_ONLY), an OpenAI-compatible
// HTTP provider with batching and retries, and helpers to embed long lists in
// batches. The local model lives in a subpackage and is plugged in through a
// LocalLoader, so this package needs neither ONNX Runtime nor a database.
package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
)

// ModelInfo names the model that made a vector. Name is stored with every
// vector, so that vectors of different models never mix; Dims is the length
// of every vector the model returns, or 0 while it is not known yet (a remote
// model without EMBEDDING_DIMENSIONS, before its first answer; see
// ResolveModel).
type ModelInfo struct {
	Name string
	Dims int
}

// Embedder turns texts into vectors, one per text and in the same order. The
// vectors are L2-normalised, so a dot product is their cosine similarity.
type Embedder interface {
	// Model returns the name and dimensions of the vectors Embed returns.
	Model() ModelInfo
	// Embed returns one vector per text, in the order of texts.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// LocalLoader builds the local embedder (the model under STRATA_MODEL_DIR run
// through the ONNX Runtime library at ONNXRUNTIME_LIB). The daemons pass one
// that wraps the uselite package; New calls it only when the provider is
// "local".
type LocalLoader func(cfg Config) (Embedder, error)

// ErrPermanent is matched (with errors.Is) by failures that repeating the same
// request will not fix: a 4xx answer other than 429, a response with the
// wrong number or size of vectors, a configuration the endpoint rejects. A job
// that gets one should fail rather than retry; other errors are transient.
var ErrPermanent = errors.New("permanent embedding failure")

// New builds the embedder cfg asks for. It validates cfg first, so a bad
// configuration (or a remote URL under STRATA_LOCAL_ONLY) stops the daemon at
// start-up. logger may be nil. local is called for the "local" provider and
// may be nil when only remote providers are wanted.
func New(cfg Config, logger *slog.Logger, local LocalLoader) (Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case ProviderLocal:
		if local == nil {
			return nil, fmt.Errorf("embedding provider %q: no local model is linked into this program", ProviderLocal)
		}
		e, err := local(cfg)
		if err != nil {
			name, dir := cfg.LocalModel()
			return nil, fmt.Errorf("load local embedding model %s (STRATA_MODEL_DIR=%s, ONNXRUNTIME_LIB=%s): %w", name, dir, cfg.LibraryPath, err)
		}
		return e, nil
	case ProviderOpenAI:
		return NewOpenAI(cfg, logger)
	}
	// Validate has already refused any other provider.
	return nil, fmt.Errorf("EMBEDDING_PROVIDER: unknown provider %q", cfg.Provider)
}

// Close releases what e holds (the local model's ONNX Runtime session) when e
// has a Close method, and does nothing otherwise.
func Close(e Embedder) error {
	if c, ok := e.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ResolveModel returns e's model, embedding one short probe text when the
// dimensions are not known yet (a remote model without EMBEDDING_DIMENSIONS).
// Call it at start-up when the vector size is needed before any real text is
// embedded.
func ResolveModel(ctx context.Context, e Embedder) (ModelInfo, error) {
	if m := e.Model(); m.Dims > 0 {
		return m, nil
	}
	v, err := e.Embed(ctx, []string{"dimension probe"})
	if err != nil {
		return ModelInfo{}, fmt.Errorf("probe embedding dimensions of %s: %w", e.Model().Name, err)
	}
	m := e.Model()
	if m.Dims == 0 && len(v) == 1 {
		m.Dims = len(v[0])
	}
	if m.Dims == 0 {
		return ModelInfo{}, fmt.Errorf("probe embedding dimensions of %s: empty vector", m.Name)
	}
	return m, nil
}

// EmbedAll embeds texts in batches of at most batch texts (all at once when
// batch <= 0), calling progress, when it is not nil, with the number of texts
// done after each batch. It checks that every batch comes back with one
// vector per text, and stops at the first error.
func EmbedAll(ctx context.Context, e Embedder, texts []string, batch int, progress func(done int)) ([][]float32, error) {
	if batch <= 0 || batch > len(texts) {
		batch = len(texts)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+batch, len(texts))
		vecs, err := e.Embed(ctx, texts[start:end])
		if err != nil {
			return nil, fmt.Errorf("embed texts %d-%d of %d: %w", start+1, end, len(texts), err)
		}
		if len(vecs) != end-start {
			return nil, fmt.Errorf("embed texts %d-%d of %d: got %d vectors for %d texts: %w", start+1, end, len(texts), len(vecs), end-start, ErrPermanent)
		}
		out = append(out, vecs...)
		if progress != nil {
			progress(end)
		}
	}
	return out, nil
}

// Normalize scales v in place to unit L2 length and reports whether it could:
// a zero vector has no direction and is left as it is.
func Normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// Model is what a local model offers; the uselite package's *Model has these
// methods. Adapt turns one into an Embedder.
type Model interface {
	Name() string
	Dims() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Adapt wraps m as an Embedder that checks each answer has one vector of
// m.Dims() values per text. The result has a Close method that closes m when
// m has one, so Close(e) releases the model.
func Adapt(m Model) Embedder { return adapted{m} }

type adapted struct{ m Model }

var (
	_ Embedder  = adapted{}
	_ io.Closer = adapted{}
)

func (a adapted) Model() ModelInfo { return ModelInfo{Name: a.m.Name(), Dims: a.m.Dims()} }

func (a adapted) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := a.m.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", a.m.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed with %s: got %d vectors for %d texts: %w", a.m.Name(), len(vecs), len(texts), ErrPermanent)
	}
	dims := a.m.Dims()
	for i, v := range vecs {
		if len(v) != dims {
			return nil, fmt.Errorf("embed with %s: vector %d has %d dimensions, want %d: %w", a.m.Name(), i, len(v), dims, ErrPermanent)
		}
	}
	return vecs, nil
}

func (a adapted) Close() error {
	if c, ok := a.m.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
