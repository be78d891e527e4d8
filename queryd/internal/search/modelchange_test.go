package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
)

// slowEmbedder delays every call, so that a re-embedding takes long enough
// for searches to run while it goes on.
type slowEmbedder struct {
	*bowEmbedder
	delay time.Duration
}

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.bowEmbedder.Embed(ctx, texts)
}

// TestModelChangeReembedsInTheBackground changes the configured model: the
// new model's vectors are made in the background while searches keep
// answering with the old model's vectors, a searcher already on the new
// model answers from full text until the layer is complete (never comparing
// a query of one model with vectors of another), and then uses the new
// vectors.
func TestModelChangeReembedsInTheBackground(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := map[string]string{}
	for i := range 24 {
		files[fmt.Sprintf("unit-%02d.md", i)] = fmt.Sprintf("# Pump station %d\n\nThe pump station %d is inspected "+
			"every spring; valves and seals are replaced when worn.\n", i, i)
	}
	f.ingest(t, jobs.Layer{Name: "plant"}, files) // vectors of model A (bag of words, 64 dims)
	oldModel := f.emb.Model().Name
	oldSearcher := f.searcher(t)

	newEmb := &bowEmbedder{dims: 32}
	newModel := newEmb.Model().Name
	newSearcher := f.searcher(t, func(o *Options) { o.Embedder = newEmb })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := jobs.NewClient(f.pool, jobs.ClientConfig{Workers: 1, EmbedBatch: 2,
		Vectorizer: jobs.SingleVector(slowEmbedder{newEmb, 40 * time.Millisecond}),
		Pipeline:   jobs.StandardPipeline(parsers.Options{NoOCR: true})})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer client.Stop(context.Background()) //nolint:errcheck
	if n, err := jobs.EnqueuePending(ctx, f.pool, client, newModel); err != nil || n != 1 {
		t.Fatalf("EnqueuePending: %d layers, %v; want 1", n, err)
	}

	layer, err := jobs.GetLayer(ctx, f.pool, "plant")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Query: "pump station valves seals", Layers: []string{"plant"}, TopK: 3}
	during := 0
	for {
		pending, err := jobs.PendingVectors(ctx, f.pool, newModel)
		if err != nil {
			t.Fatal(err)
		}
		if pending[layer.ID] == 0 {
			break
		}
		// The old model's vectors keep serving.
		resp := mustSearch(t, oldSearcher, req)
		if resp.Degraded || len(resp.Results) == 0 || resp.Results[0].Similarity <= 0 {
			t.Fatalf("during re-embedding, the old model's search degraded (%q) or lost its similarity: %+v", resp.DegradedReason, resp.Results)
		}
		// Until the layer is complete for the new model, its searcher must
		// not use vectors. (The job may finish between the pending count
		// above and this search: then the layer must be marked complete.)
		resp = mustSearch(t, newSearcher, req)
		if !resp.Degraded {
			var complete bool
			if err := f.pool.QueryRow(ctx, `SELECT complete FROM strata.layer_models WHERE model = $1`, newModel).Scan(&complete); err != nil || !complete {
				t.Fatalf("a search with %s used vectors before the layer was complete: %+v", newModel, resp)
			}
			break
		}
		// A similarity may still show for chunks that already have a vector
		// of the new model: that compares the new model with itself. A
		// comparison across the two models would fail outright, since their
		// vectors differ in length (64 and 32).
		if len(resp.Results) == 0 {
			t.Fatalf("a search with %s during re-embedding found nothing by full text", newModel)
		}
		during++
		if ctx.Err() != nil {
			t.Fatal("re-embedding did not finish in time")
		}
	}
	if during < 2 {
		t.Fatalf("only %d rounds of searches ran while re-embedding; the test did not observe the transition", during)
	}
	// The layer is complete for the new model once the job marks it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var complete bool
		if err := f.pool.QueryRow(ctx, `SELECT complete FROM strata.layer_models WHERE model = $1`, newModel).Scan(&complete); err == nil && complete {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("layer never marked complete for %s", newModel)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var a, b int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE model = $1), count(*) FILTER (WHERE model = $2)
		FROM strata.embeddings`, oldModel, newModel).Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	if a == 0 || a != b {
		t.Errorf("vectors: %d of %s and %d of %s; want both models complete side by side", a, oldModel, b, newModel)
	}
	// A fresh searcher on the new model (the cache keys on model state) now
	// uses its vectors.
	resp := mustSearch(t, f.searcher(t, func(o *Options) { o.Embedder = newEmb }), req)
	if resp.Degraded || len(resp.Results) == 0 || resp.Results[0].Similarity <= 0 {
		t.Errorf("after re-embedding, search with %s: degraded %v (%q), results %+v", newModel, resp.Degraded, resp.DegradedReason, resp.Results)
	}
}

// TestLayerKeepsItsModel: after the configured model changes, a layer whose
// vectors are all of the previous model is still searched by vector, with
// its query embedded by that model (explain names it), instead of falling
// back to full text; without a way to reach the old model the search says
// the layer has no vectors of the new one.
func TestLayerKeepsItsModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := map[string]string{
		"pumps.md":  "# Pumps\n\nThe pump station is inspected every spring.\n",
		"valves.md": "# Valves\n\nValves and seals are replaced when worn.\n",
	}
	f.ingest(t, jobs.Layer{Name: "plant"}, files) // vectors of the old model (64 dims)
	oldEmb, oldModel := f.emb, f.emb.Model().Name
	newEmb := &bowEmbedder{dims: 32}
	req := Request{Query: "pump station inspection", Layers: []string{"plant"}, TopK: 2, Explain: true}

	calls := 0
	withModels := f.searcher(t, func(o *Options) {
		o.Embedder = newEmb
		o.Models = func(name string) (embed.Embedder, error) {
			calls++
			if name != oldModel {
				return nil, fmt.Errorf("unexpected model %s", name)
			}
			return oldEmb, nil
		}
	})
	resp := mustSearch(t, withModels, req)
	if resp.Degraded || len(resp.Results) == 0 || resp.Results[0].Similarity <= 0 {
		t.Fatalf("search after the default changed: degraded %v (%q), results %+v", resp.Degraded, resp.DegradedReason, resp.Results)
	}
	if resp.Explain == nil || resp.Explain.Model != oldModel || calls == 0 {
		t.Errorf("explain %+v, %d model look-ups; want the query embedded by the layer's model %s", resp.Explain, calls, oldModel)
	}

	without := f.searcher(t, func(o *Options) { o.Embedder = newEmb })
	resp = mustSearch(t, without, req)
	if !resp.Degraded || !strings.Contains(resp.DegradedReason, "plant") {
		t.Errorf("without the old model the search should say the layer lacks vectors of %s: degraded %v %q", newEmb.Model().Name, resp.Degraded, resp.DegradedReason)
	}
}
