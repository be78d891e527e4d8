package search

import (
	"context"
	"testing"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestSearchRecordsInteractions: with a Recorder (LEARNING_ENABLED), every
// search is recorded in the ledger, a cached one too, each with its own
// interaction_id, the query scrubbed and the caller kept; without one no
// response carries an id.
func TestSearchRecordsInteractions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "payments"}, payments)
	ledger, err := store.OpenLedger(context.Background(), f.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ledger.Close)
	s := f.searcher(t, func(o *Options) { o.Recorder = ledger })
	ctx := caller.With(context.Background(), "token:abc")
	q := "reason code AC04 for DE89 3704 0044 0532 0130 00"
	a, err := s.Search(ctx, Request{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Search(ctx, Request{Query: q}) // from the cache
	if err != nil {
		t.Fatal(err)
	}
	if a.InteractionID == "" || b.InteractionID == "" || a.InteractionID == b.InteractionID {
		t.Fatalf("interaction ids %q and %q", a.InteractionID, b.InteractionID)
	}
	var n int
	var question, who string
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*), min(question), min(caller) FROM strata.interactions WHERE tool = 'strata_search'`).Scan(&n, &question, &who); err != nil {
		t.Fatal(err)
	}
	if n != 2 || who != "token:abc" || question == q || question == "" {
		t.Errorf("recorded %d, question %q, caller %q", n, question, who)
	}
	plain := f.searcher(t)
	if r, err := plain.Search(ctx, Request{Query: q}); err != nil || r.InteractionID != "" {
		t.Errorf("without a recorder: %q %v", r.InteractionID, err)
	}
}
