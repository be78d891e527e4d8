package ask

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestAskStages: OnStage hears each stage once, in order, for an answer
// over a named layer; a slow rewriter's time lands in "rewrite", and the
// stages add up to no more than the whole answer (nothing counted twice).
func TestAskStages(t *testing.T) {
	t.Parallel()
	pool, url := dbtest.NewPool(t)
	root := writeFolder(t, "rules", rules)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "rules", Root: root, ChunkSize: 400},
		ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	st, err := store.OpenCorpus(context.Background(), dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)

	var mu sync.Mutex
	var names []string
	took := map[string]time.Duration{}
	const slow = 30 * time.Millisecond
	a := New(Options{
		Engine:   retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1}),
		Docs:     st,
		Reranker: Texts{overlap{}},
		Rewriter: func(_ context.Context, q string, _ []store.Layer) ([]string, string) {
			time.Sleep(slow)
			return []string{q, "indentation spaces"}, ""
		},
		OnStage: func(stage string, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			names = append(names, stage)
			took[stage] += d
		},
	})
	began := time.Now()
	resp, err := a.Ask(context.Background(), Request{Question: "How many spaces per indentation level?", Layers: []string{"rules"}})
	total := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Passages) == 0 {
		t.Fatal("no passages")
	}
	if want := []string{"route", "rewrite", "search", "merge", "rerank", "pack"}; !slices.Equal(names, want) {
		t.Fatalf("stages %q, want %q", names, want)
	}
	if took["rewrite"] < slow {
		t.Errorf("rewrite took %s, the rewriter sleeps %s", took["rewrite"], slow)
	}
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	if sum > total {
		t.Errorf("the stages add up to %s, more than the whole answer (%s)", sum, total)
	}
}
