package search

import (
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/jobs"
)

// TestMetricHooks checks what queryd's metrics are fed: each channel's time
// and the query's embedding on a search, and a cache hit on the identical
// search that follows.
func TestMetricHooks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "hooks"}, map[string]string{
		"boiler.md": "# Boiler\n\nThe boiler is serviced every October by the facilities team.\n",
	})
	var mu sync.Mutex
	hits := 0
	channels := map[string]int{}
	s := f.searcher(t, func(o *Options) {
		o.OnCacheHit = func() { mu.Lock(); hits++; mu.Unlock() }
		o.OnChannel = func(c string, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if d <= 0 {
				t.Errorf("channel %s reported %s", c, d)
			}
			channels[c]++
		}
	})
	req := Request{Query: "when is the boiler serviced", Layers: []string{"hooks"}}
	mustSearch(t, s, req)
	mu.Lock()
	if channels["lexical"] != 1 || channels["vector"] != 1 || channels["query_embedding"] != 1 || hits != 0 {
		t.Errorf("after one search: channels %v, cache hits %d; want lexical, vector and query_embedding once, no hit", channels, hits)
	}
	mu.Unlock()
	mustSearch(t, s, req)
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 || channels["lexical"] != 1 {
		t.Errorf("after the same search again: cache hits %d, channels %v; want one hit and no new channel run", hits, channels)
	}
}
