package retrieve

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestRunConcurrentAccess: the channels' goroutines and a fallback's
// searches may ask one run for its parameters and query vector at once;
// each is computed once and every caller gets the same (go test -race
// fails on the unguarded fields).
func TestRunConcurrentAccess(t *testing.T) {
	t.Parallel()
	st, _ := ingestLayers(t, map[string]map[string]string{
		"handbook": {"leave.md": "# Leave\n\nEmployees carry over five unused leave days.\n"},
	}, 0)
	eng := New(st, Options{Embedder: bow{}})
	snap, err := eng.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := snap.Query(Query{Text: "unused leave days", TopK: 3})
	var wg sync.WaitGroup
	params := make([]Params, 8)
	vecs := make([][]float32, 8)
	for i := range params {
		wg.Add(1)
		go func() {
			defer wg.Done()
			params[i] = r.Params(context.Background())
			vecs[i], _ = r.QueryVector(context.Background())
			_ = r.ParamsError()
		}()
	}
	wg.Wait()
	for i := range params {
		if params[i] != params[0] || !slices.Equal(vecs[i], vecs[0]) || len(vecs[i]) == 0 {
			t.Fatalf("caller %d got other parameters or another vector", i)
		}
	}
}
