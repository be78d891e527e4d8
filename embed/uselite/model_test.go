package uselite

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadNamesMissingFiles(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib", "libonnxruntime.so.1")
	_, err := Load(Config{ModelDir: dir, LibraryPath: lib})
	var missing *MissingFilesError
	if !errors.As(err, &missing) {
		t.Fatalf("Load with no files: err = %v, want *MissingFilesError", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}
	for _, p := range []string{filepath.Join(dir, "model.json"), filepath.Join(dir, "vocab.json"), lib} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name %s", err, p)
		}
	}

	// With the manifest present, a weight shard it names is reported.
	manifest := `{"weightsManifest":[{"paths":["group1-shard1of1"],"weights":[]}]}`
	if err := os.WriteFile(filepath.Join(dir, "model.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(Config{ModelDir: dir, LibraryPath: filepath.Join(dir, "model.json")})
	shard := filepath.Join(dir, "group1-shard1of1")
	if !errors.As(err, &missing) || len(missing.Paths) != 1 || missing.Paths[0] != shard {
		t.Fatalf("Load without the shard: err = %v, want one missing path %s", err, shard)
	}
}

func TestLoadRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{LibraryPath: "x"},
		{ModelDir: "x"},
		{ModelDir: "x", LibraryPath: "x", BatchSize: -1},
		{ModelDir: "x", LibraryPath: "x", IntraOpThreads: -2},
	} {
		if _, err := Load(cfg); err == nil || !strings.Contains(err.Error(), "Config.") {
			t.Errorf("Load(%+v) = %v, want an error naming the Config field", cfg, err)
		}
	}
}

func TestEmbedEmptyInput(t *testing.T) {
	m := testModel(t)
	ctx := context.Background()
	vecs, err := m.Embed(ctx, nil)
	if err != nil || len(vecs) != 0 {
		t.Fatalf("Embed(nil) = %d vectors, %v; want none, no error", len(vecs), err)
	}
	// The empty text maps to the normalised tanh of the last layer's bias,
	// alone or batched with other texts.
	w, err := readBias(t)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(w))
	for i, b := range w {
		want[i] = float32(math.Tanh(float64(b)))
	}
	for _, texts := range [][]string{{""}, {"a long sentence that pads the empty one in its batch", ""}} {
		vecs, err := m.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		got := vecs[len(vecs)-1]
		if len(got) != Dims {
			t.Fatalf("empty text: %d dims, want %d", len(got), Dims)
		}
		if c := cosine(got, want); c < 0.99999 {
			t.Errorf("empty text in %q: cosine %.6f with tanh(bias), want ≈ 1", texts, c)
		}
	}
}

func readBias(t *testing.T) ([]float32, error) {
	dir := DefaultConfig(varDir(t)).ModelDir
	man, _, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	w, err := readWeights(dir, man)
	if err != nil {
		return nil, err
	}
	return weightSet(w).get(wTanhBias, 512)
}

func TestEmbedVectors(t *testing.T) {
	m := testModel(t)
	vecs, err := m.Embed(context.Background(), []string{
		"How do I reset my password?",
		"Steps to recover a forgotten account password",
		"The stock market fell sharply today.",
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-5 {
			t.Errorf("vector %d has norm %.6f, want 1", i, math.Sqrt(n))
		}
	}
	// Paraphrases are closer to each other than to an unrelated sentence.
	if para, other := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2]); para <= other {
		t.Errorf("paraphrase cosine %.3f not above unrelated %.3f", para, other)
	}
}

// TestEmbedClipsAt128Pieces: pieces after the 128th do not change the vector.
func TestEmbedClipsAt128Pieces(t *testing.T) {
	m := testModel(t)
	long := strings.Repeat("The supplier shall deliver the goods on time. ", 20)
	if n := len(m.Tokenize(long)); n <= MaxPieces {
		t.Fatalf("test text has only %d pieces", n)
	}
	vecs, err := m.Embed(context.Background(), []string{long, long + " Unrelated closing words about weather."})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(vecs[0], vecs[1]); c < 0.99999 {
		t.Errorf("text past the 128th piece changed the vector: cosine %.6f", c)
	}
}

// TestEmbedConcurrent: goroutines embedding at once get the vectors a
// sequential caller gets.
func TestEmbedConcurrent(t *testing.T) {
	m := testModel(t)
	ctx := context.Background()
	sets := [][]string{
		benchSentences(40)[:13],
		{"The tenant must give three months' notice.", "Backups run nightly at two."},
		benchSentences(70)[40:],
		{strings.Repeat("Clause seven governs termination for convenience. ", 12)},
	}
	want := make([][][]float32, len(sets))
	for i, s := range sets {
		v, err := m.Embed(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(sets))
	for round := 0; round < 4; round++ {
		for i, s := range sets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := m.Embed(ctx, s)
				if err != nil {
					errs <- err
					return
				}
				for k := range got {
					if c := cosine(got[k], want[i][k]); c < 0.99999 {
						t.Errorf("set %d text %d: concurrent vector differs (cosine %.6f)", i, k, c)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEmbedCancelled(t *testing.T) {
	m := testModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"anything"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestClose(t *testing.T) {
	testModel(t) // skips or fails when files are missing
	m, err := Load(DefaultConfig(varDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Embed(context.Background(), []string{"before close"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := m.Embed(context.Background(), []string{"after close"}); err == nil {
		t.Error("Embed after Close succeeded, want an error")
	}
}

// TestSessionOptionsTurnSpinningOff: ONNX Runtime's threads must not
// busy-wait between calls unless Config.Spin asks for it.
func TestSessionOptionsTurnSpinningOff(t *testing.T) {
	testModel(t) // initialises ONNX Runtime, or skips without it
	for _, spin := range []bool{false, true} {
		opts, err := sessionOptions(Config{IntraOpThreads: 1, Spin: spin})
		if err != nil {
			t.Fatal(err)
		}
		want := "0"
		if spin {
			want = "1"
		}
		for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
			got, err := opts.GetSessionConfigEntry(key)
			if err != nil || got != want {
				t.Errorf("Spin=%t: %s = %q (%v), want %q", spin, key, got, err, want)
			}
		}
		_ = opts.Destroy()
	}
}
