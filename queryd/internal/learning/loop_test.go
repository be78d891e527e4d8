package learning

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestLearningLoop drives the loop across the daemons: queryd records two
// callers' rephrasings (the ledger, as the queryd role), the promoter runs as
// the real River job in an ingestd client, and strata_ask's rewriter then
// appends the learned synonym for the question's layer; a reset request
// queryd records hides the pair at once. Only this test imports jobs:
// queryd's own packages never do (deps_test.go checks non-test imports).
func TestLearningLoop(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	client, err := jobs.NewClient(e.owner, jobs.ClientConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck
	promote := func() {
		t.Helper()
		if _, err := client.Insert(ctx, jobs.PromoteArgs{Force: true}, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-events:
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("promoter job %s: %v", ev.Kind, ev.Job.Errors)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the promoter did not finish")
		}
	}
	rewriter := WithLearned(nil, e.corpus, nil)
	sepa := []store.Layer{{Name: "sepa"}}
	variants := func() []string {
		vs, kind := rewriter(ctx, "SCT reject codes", sepa)
		if kind != "" {
			t.Fatalf("rewriter failed: %s", kind)
		}
		return vs
	}
	if vs := variants(); !slices.Equal(vs, []string{"SCT reject codes"}) {
		t.Fatalf("before learning: %q", vs)
	}

	for _, who := range []string{"token:alice", "token:bob"} {
		e.askedBy(t, who, "SCT reject codes", []string{"sepa"}, "not_found")
		e.askedBy(t, who, "credit transfer reject codes", []string{"sepa"}, "found")
	}
	promote()
	// The rewording was found after a not_found: a proven rewrite too,
	// before the synonym variant.
	want := []string{"SCT reject codes", "credit transfer reject codes", "SCT reject codes credit transfer"}
	if vs := variants(); !slices.Equal(vs, want) {
		t.Fatalf("after the promoter: %q, want %q", vs, want)
	}
	// Another layer does not get the sepa pair.
	if vs, _ := rewriter(ctx, "SCT reject codes", []store.Layer{{Name: "handbook"}}); len(vs) != 1 {
		t.Errorf("the handbook layer got %q", vs)
	}

	// The stats show the pair with its layer and usage count, and the run.
	st, err := e.svc.Stats(ctx, StatsRequest{})
	if err != nil || len(st.Synonyms) != 1 || st.LastRun == nil || st.PendingResets != 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if s := st.Synonyms[0]; s.Term != "sct" || s.Synonym != "credit transfer" || s.Layer != "sepa" || s.UsageCount != 2 || s.Callers != 2 {
		t.Errorf("stats synonym %+v", s)
	}
	if st, _ := e.svc.Stats(ctx, StatsRequest{Layer: "handbook"}); len(st.Synonyms) != 0 {
		t.Errorf("handbook stats show %+v", st.Synonyms)
	}

	// A reset of a layer that does not exist records nothing.
	admin := caller.With(ctx, "token:admin")
	if _, err := e.svc.Reset(admin, ResetRequest{Layer: "nope"}); qerr.KindOf(err) != qerr.Invalid {
		t.Errorf("reset of an unknown layer: %v", err)
	}
	// A layer reset, recorded by queryd as an interaction (INSERT only):
	// the pair is no longer applied, before the promoter deletes it.
	r, err := e.svc.Reset(admin, ResetRequest{Layer: "sepa"})
	if err != nil || r.Scope != "layer" || r.ResetID == "" {
		t.Fatalf("layer reset: %+v %v", r, err)
	}
	if vs := variants(); len(vs) != 1 {
		t.Errorf("after the reset request: %q", vs)
	}
	if st, _ := e.svc.Stats(ctx, StatsRequest{}); len(st.Synonyms) != 0 || st.PendingResets != 1 {
		t.Errorf("stats after the reset request: %+v", st)
	}
	promote()
	// The history is kept: the rephrasings are still recorded.
	var asked int
	if err := e.owner.QueryRow(ctx, `SELECT count(*) FROM strata.interactions WHERE tool = 'strata_ask'`).Scan(&asked); err != nil || asked != 4 {
		t.Errorf("history after the layer reset: %d, %v", asked, err)
	}
	var n int
	if err := e.owner.QueryRow(ctx, `SELECT count(*) FROM strata.learned_synonyms`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after the promoter applied the reset: %d pairs, %v", n, err)
	}
}
