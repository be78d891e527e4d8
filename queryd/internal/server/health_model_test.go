package server

import (
	"context"
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

// replicaPinger answers pings through the primary while its read replica
// is down (QUERYD_READ_FALLBACK=primary).
type replicaPinger struct{ onPrimary bool }

func (replicaPinger) Ping(context.Context) error { return nil }
func (p replicaPinger) ReadingFromPrimary() bool { return p.onPrimary }

// TestHealthzReadReplicaDown: reads that fell back to the primary leave the
// server answering, degraded, and /healthz names the read replica.
func TestHealthzReadReplicaDown(t *testing.T) {
	for _, down := range []bool{false, true} {
		ts := newTestServer(t, func(_ *Config, d *Deps) { d.DB = replicaPinger{down} })
		r := do(t, http.MethodGet, ts.url+"/healthz", "", nil, nil)
		var h Health
		_ = json.Unmarshal(r.body, &h)
		switch {
		case r.status != 200:
			t.Errorf("replica down %v: status %d: %s", down, r.status, r.body)
		case down && (h.Status != "degraded" || h.ReadReplica == nil || h.ReadReplica.Status != "unavailable"):
			t.Errorf("replica down: %s", r.body)
		case !down && (h.Status != "ok" || h.ReadReplica != nil):
			t.Errorf("replica up: %s", r.body)
		}
	}
}
