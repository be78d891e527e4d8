package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
)

// slowVectorizer is countingVectorizer taking delay per batch.
type slowVectorizer struct {
	countingVectorizer
	delay   time.Duration
	batches atomic.Int64
}

func (v *slowVectorizer) EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error) {
	time.Sleep(v.delay)
	v.batches.Add(1)
	return v.countingVectorizer.EmbedChunks(ctx, texts)
}

// TestStoppingClientHandsEmbeddingBack: a client told it is stopping
// (ClientConfig.Stopping) ends a layer's sweep after the batch in flight and
// leaves it queued for another process, so River's soft stop returns at
// once instead of after the whole layer. `add --wait` of a small layer
// relies on it: the large layer's sweep it picked up must not hold it.
func TestStoppingClientHandsEmbeddingBack(t *testing.T) {
	ctx := context.Background()
	pool, _ := dbtest.NewPool(t)
	dir := t.TempDir()
	for i := range 20 {
		var b strings.Builder
		for p := range 4 {
			b.WriteString("Paragraph " + string(rune('A'+p)) + " of note " + string(rune('a'+i)) +
				": the operator checks the valve, writes the pressure in the log and waits for the second operator.\n\n")
		}
		if err := os.WriteFile(filepath.Join(dir, "note-"+string(rune('a'+i))+".md"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Chunks without vectors: the ingest runs without a model.
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "big", Root: dir, ChunkSize: 200}, ingesttest.Options{})
	l, err := jobs.GetLayer(ctx, pool, "big")
	if err != nil {
		t.Fatal(err)
	}
	vec := &slowVectorizer{delay: 100 * time.Millisecond}
	pending := func() int {
		t.Helper()
		p, err := jobs.PendingVectors(ctx, pool, vec.Model().Name)
		if err != nil {
			t.Fatal(err)
		}
		return p[l.ID]
	}
	if n := pending(); n < 20 {
		t.Fatalf("%d chunks pending, want a layer of many batches", n)
	}

	stopping := make(chan struct{})
	client, err := jobs.NewClient(pool, jobs.ClientConfig{Workers: 1, Vectorizer: vec, EmbedBatch: 2, Stopping: stopping})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Insert(ctx, jobs.EmbedArgs{LayerID: l.ID, Model: vec.Model().Name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for vec.batches.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the sweep embedded nothing within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stopping)
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := client.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if n := pending(); n == 0 {
		t.Fatalf("the stopping client embedded the whole layer (%d batches) before it stopped", vec.batches.Load())
	}
	var state string
	if err := pool.QueryRow(ctx, `SELECT state FROM `+jobs.RiverSchema+`.river_job WHERE id = $1`, res.Job.ID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "available" && state != "scheduled" {
		t.Errorf("the handed-back sweep is %s, want it queued for another process", state)
	}
}
