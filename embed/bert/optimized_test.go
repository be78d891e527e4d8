package bert

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// copyTiny copies the tiny cross-encoder's files into a new folder.
func copyTiny(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"model.onnx", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(tinyCross, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func tinyScores(t *testing.T, dir string) []float64 {
	t.Helper()
	return tinyScoresWith(t, dir, false)
}

// tinyScoresWith scores with a session for a few calls when fewCalls is
// set: one that maps the cached graph instead of reading it.
func tinyScoresWith(t *testing.T, dir string, fewCalls bool) []float64 {
	t.Helper()
	c, err := LoadCrossEncoder(CrossConfig{ModelDir: dir, LibraryPath: libraryPath(t), MaxTokens: 64, FewCalls: fewCalls})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.Score(context.Background(), "when is the invoice due", []string{"The invoice is due in thirty days.", "Cats sleep."})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOptimizedGraphCache: the first load saves the optimised graph beside
// the model, later loads read it and score the same; a damaged cache is
// replaced, and a new model file makes a new cache entry, the old one gone.
func TestOptimizedGraphCache(t *testing.T) {
	dir := copyTiny(t)
	first := tinyScores(t, dir)
	cached, err := optimizedPath(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(cached)
	if err != nil || st.Size() == 0 {
		t.Fatalf("no optimised graph cached after the first load: %v", err)
	}
	same := func(label string, got []float64) {
		t.Helper()
		for i := range first {
			if math.Abs(got[i]-first[i]) > 1e-6 {
				t.Errorf("%s: score %d is %.7f, first load %.7f", label, i, got[i], first[i])
			}
		}
	}
	same("from the cache", tinyScores(t, dir))
	// A session for a few calls maps the cache, and unmaps it when closed.
	saved := mapCache
	t.Cleanup(func() { mapCache = saved })
	var maps, unmaps int
	mapCache = func(path string) ([]byte, func() error, error) {
		data, unmap, err := saved(path)
		if err == nil {
			maps++
		}
		return data, func() error { unmaps++; return unmap() }, err
	}
	same("from the cache, mapped", tinyScoresWith(t, dir, true))
	if maps != 1 || unmaps != 1 {
		t.Errorf("a session for a few calls mapped the cache %d times and unmapped it %d, want 1 and 1", maps, unmaps)
	}
	same("from the cache, not mapped", tinyScores(t, dir))
	if maps != 1 {
		t.Errorf("a long-lived session mapped the cache")
	}

	if err := os.WriteFile(cached, []byte("not a graph"), 0o644); err != nil {
		t.Fatal(err)
	}
	same("after a damaged cache, mapped", tinyScoresWith(t, dir, true))
	if st, err := os.Stat(cached); err != nil || st.Size() <= int64(len("not a graph")) {
		t.Errorf("the damaged cache was not replaced: %v", err)
	}

	// Touching the model makes another entry; the old one is removed.
	later := st.ModTime().Add(1e9)
	if err := os.Chtimes(filepath.Join(dir, "model.onnx"), later, later); err != nil {
		t.Fatal(err)
	}
	same("after the model changed", tinyScores(t, dir))
	entries, err := os.ReadDir(filepath.Dir(cached))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || filepath.Join(filepath.Dir(cached), entries[0].Name()) == cached {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("cache folder holds %v; want only the new model's graph", names)
	}
}

// TestOptimizedGraphUnwritable: where the cache cannot be written (here
// a file stands where its folder would be; a read-only model folder is the
// same case) the model loads as before, without a cache.
func TestOptimizedGraphUnwritable(t *testing.T) {
	dir := copyTiny(t)
	blocker := filepath.Join(dir, optimizedDir)
	if err := os.WriteFile(blocker, []byte("a file, not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := tinyScores(t, dir); len(s) != 2 {
		t.Fatalf("scores %v", s)
	}
	if st, err := os.Stat(blocker); err != nil || st.IsDir() {
		t.Errorf("the file in the cache folder's place was touched: %v", err)
	}
}

// TestOptimizedGraphSaveFails: when ONNX Runtime cannot write the graph
// (here a path in a folder that does not exist; a full disk is the same
// case) the model still loads, without a cache.
func TestOptimizedGraphSaveFails(t *testing.T) {
	dir := copyTiny(t)
	saved := cacheFile
	t.Cleanup(func() { cacheFile = saved })
	cacheFile = func(string) string { return filepath.Join(t.TempDir(), "gone", "graph.onnx") }
	if s := tinyScores(t, dir); len(s) != 2 {
		t.Fatalf("scores %v", s)
	}
	cached, err := optimizedPath(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cached); err == nil {
		t.Error("a cache entry exists though the graph could not be saved")
	}
}
