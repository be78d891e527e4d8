package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// TestHealthzModelNotLoadedYet: a model loaded on first use that no query
// has needed yet is reported as such, and does not make the server degraded.
func TestHealthzModelNotLoadedYet(t *testing.T) {
	ts := newTestServer(t, func(_ *Config, d *Deps) {
		d.DB = pinger{}
		d.Model = model{fmt.Errorf("lazy: %w", ErrModelNotLoaded)}
	})
	r := do(t, http.MethodGet, ts.url+"/healthz", "", nil, nil)
	var h Health
	_ = json.Unmarshal(r.body, &h)
	if r.status != 200 || h.Status != "ok" || h.EmbeddingModel.Status != "not loaded yet" || h.EmbeddingModel.Name != "use-lite" {
		t.Errorf("model not loaded yet: status %d: %s", r.status, r.body)
	}
}
