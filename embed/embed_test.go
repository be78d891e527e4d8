package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

// fakeModel is a local model stand-in with the uselite method set.
type fakeModel struct {
	dims   int
	calls  [][]string
	short  bool // return one vector too few
	closed bool
}

func (m *fakeModel) Name() string { return "fake@1" }
func (m *fakeModel) Dims() int    { return m.dims }
func (m *fakeModel) Close() error { m.closed = true; return nil }
func (m *fakeModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	m.calls = append(m.calls, texts)
	var out [][]float32
	for _, t := range texts {
		out = append(out, unit(fakeVec(t, m.dims)))
	}
	if m.short {
		out = out[:len(out)-1]
	}
	return out, nil
}

func TestNewLocalUsesLoader(t *testing.T) {
	m := &fakeModel{dims: 5}
	var got Config
	e, err := New(DefaultConfig(), nil, func(cfg Config) (Embedder, error) {
		got = cfg
		return Adapt(m), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.ModelDir != "" || got.LibraryPath != DefaultLibraryPath || got.BatchSize != DefaultLocalBatchSize {
		t.Errorf("loader got %s, want the default model paths and batch", got)
	}
	if mi := e.Model(); mi != (ModelInfo{Name: "fake@1", Dims: 5}) {
		t.Errorf("Model() = %+v", mi)
	}
	if err := Close(e); err != nil || !m.closed {
		t.Errorf("Close did not reach the model: %v, closed=%t", err, m.closed)
	}
}

func TestNewLocalErrors(t *testing.T) {
	if _, err := New(DefaultConfig(), nil, nil); err == nil || !strings.Contains(err.Error(), "local") {
		t.Errorf("New with no local loader = %v, want an error about the local model", err)
	}
	_, err := New(DefaultConfig(), nil, func(Config) (Embedder, error) { return nil, errors.New("model.json: no such file") })
	if err == nil || !strings.Contains(err.Error(), "model "+DefaultLocalModel+" (STRATA_MODEL_DIR=var/models/"+DefaultLocalModel) || !strings.Contains(err.Error(), "model.json: no such file") {
		t.Errorf("loader failure = %v, want it to name STRATA_MODEL_DIR and keep the cause", err)
	}
	called := false
	bad := DefaultConfig()
	bad.BatchSize = 0
	if _, err := New(bad, nil, func(Config) (Embedder, error) { called = true; return nil, nil }); err == nil || called {
		t.Errorf("New with an invalid config = %v (loader called: %t), want a validation error first", err, called)
	}
}

func TestNewOpenAICompatible(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Provider, cfg.BaseURL, cfg.ModelName, cfg.BatchSize = ProviderOpenAI, "http://127.0.0.1:9/v1", "text-embedding-3-small", 64
	e, err := New(cfg, nil, func(Config) (Embedder, error) {
		t.Fatal("the local loader was called for a remote provider")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, isOpenAI := e.(*OpenAI); !isOpenAI || e.Model().Name != "openai_compatible:text-embedding-3-small" {
		t.Errorf("New = %T named %q", e, e.Model().Name)
	}
	if err := Close(e); err != nil {
		t.Errorf("Close on a provider without resources: %v", err)
	}
}

func TestAdaptChecksCountAndDims(t *testing.T) {
	e := Adapt(&fakeModel{dims: 4, short: true})
	if _, err := e.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "got 1 vectors for 2 texts") {
		t.Errorf("short answer: err = %v", err)
	}
	e = Adapt(wrongDims{})
	if _, err := e.Embed(context.Background(), []string{"a"}); !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "want 4") {
		t.Errorf("wrong size: err = %v", err)
	}
}

type wrongDims struct{}

func (wrongDims) Name() string { return "w" }
func (wrongDims) Dims() int    { return 4 }
func (wrongDims) Embed(context.Context, []string) ([][]float32, error) {
	return [][]float32{{1, 0, 0}}, nil
}

func TestEmbedAllBatchesAndReportsProgress(t *testing.T) {
	m := &fakeModel{dims: 3}
	texts := []string{"a", "b", "c", "d", "e", "f", "g"}
	var done []int
	vecs, err := EmbedAll(context.Background(), Adapt(m), texts, 3, func(n int) { done = append(done, n) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(done) != "[3 6 7]" || len(m.calls) != 3 {
		t.Errorf("progress = %v over %d calls, want [3 6 7] over 3", done, len(m.calls))
	}
	for i, text := range texts {
		if want := unit(fakeVec(text, 3)); vecs[i][0] != want[0] {
			t.Fatalf("vector %d is not %q's", i, text)
		}
	}
	if v, err := EmbedAll(context.Background(), Adapt(m), nil, 3, nil); err != nil || len(v) != 0 {
		t.Errorf("EmbedAll(nil) = %v, %v", v, err)
	}
}

func TestEmbedAllStopsOnError(t *testing.T) {
	m := &fakeModel{dims: 3, short: true}
	_, err := EmbedAll(context.Background(), m, []string{"a", "b", "c", "d"}, 2, nil)
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "texts 1-2 of 4") {
		t.Errorf("err = %v, want a permanent error naming texts 1-2", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := EmbedAll(ctx, Adapt(&fakeModel{dims: 3}), []string{"a"}, 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
}

// Model makes fakeModel usable as an Embedder directly, without Adapt's
// checks, for TestEmbedAllStopsOnError.
func (m *fakeModel) Model() ModelInfo { return ModelInfo{Name: m.Name(), Dims: m.dims} }

func TestResolveModelProbesUnknownDims(t *testing.T) {
	h := newHarness(t, ok(7), nil)
	mi, err := ResolveModel(context.Background(), h.o)
	if err != nil || mi.Dims != 7 {
		t.Fatalf("ResolveModel = %+v, %v; want 7 dims", mi, err)
	}
	if _, err := ResolveModel(context.Background(), h.o); err != nil || len(h.fake.requests()) != 1 {
		t.Errorf("a second ResolveModel probed again (%d requests), err %v", len(h.fake.requests()), err)
	}
	bad := newHarness(t, func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) {
		writeError(w, http.StatusNotFound, "model not found")
	}, nil)
	if _, err := ResolveModel(context.Background(), bad.o); err == nil || !strings.Contains(err.Error(), "model not found") {
		t.Errorf("ResolveModel against a failing endpoint = %v", err)
	}
}

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	if !Normalize(v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("Normalize([3 4]) = %v", v)
	}
	z := []float32{0, 0}
	if Normalize(z) || z[0] != 0 {
		t.Errorf("Normalize(zero) = %v, want false and unchanged", z)
	}
	if Normalize([]float32{float32(math.Inf(1)), 1}) {
		t.Error("Normalize accepted an infinite vector")
	}
}
