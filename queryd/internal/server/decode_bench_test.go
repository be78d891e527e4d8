package server

import (
	"encoding/json"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
)

// BenchmarkDecodeSearch measures decoding strata_search's arguments, the
// per-call cost of the generic decoder.
func BenchmarkDecodeSearch(b *testing.B) {
	raw := json.RawMessage(`{"query":"carry over of unused leave days","layers":["handbook","policies"],"top_k":8,"metadata_filter":{"page":"3","team":"payments"},"explain":true}`)
	for b.Loop() {
		if _, err := toolargs.Decode[search.Request](raw); err != nil {
			b.Fatal(err)
		}
	}
}
