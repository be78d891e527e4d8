package learning

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// env is a migrated database with queryd's ledger and corpus handles.
type env struct {
	owner  *pgxpool.Pool
	ledger *store.Ledger
	corpus *store.Corpus
	svc    *Service
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	owner, ownerURL := dbtest.NewPool(t)
	ingesttest.Migrate(t, owner)
	if _, err := owner.Exec(ctx, `INSERT INTO strata.layers (name, root) VALUES ('sepa', '/sepa'), ('handbook', '/hb')`); err != nil {
		t.Fatal(err)
	}
	qurl := dbtest.QuerydURL(t, ownerURL)
	l, err := store.OpenLedger(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	c, err := store.OpenCorpus(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &env{owner: owner, ledger: l, corpus: c, svc: New(Options{Ledger: l, Layers: c, Learned: l})}
}

// askedBy records a strata_ask interaction as the app's recorder writes it:
// S1 an exact clause, S2 chunk 501, S3 chunk 502.
func (e *env) askedBy(t *testing.T, who, question string, layers []string, status string) string {
	t.Helper()
	detail, _ := json.Marshal(map[string]any{"variants": []string{question}, "chunk_ids": []int64{501, 502},
		"confidence": "medium", "passage_chunks": map[string]int64{"S2": 501, "S3": 502}, "exact_passages": []string{"S1"}})
	id, err := e.ledger.RecordInteraction(context.Background(), store.Interaction{Caller: who, Tool: "strata_ask",
		Question: question, Layers: layers, Status: status, Detail: detail})
	if err != nil {
		t.Fatal(err)
	}
	return itoa(id)
}

func (e *env) feedbackRows(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.owner.QueryRow(context.Background(), `SELECT count(*) FROM strata.feedback`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFeedback(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := caller.With(ctx, "token:alice")
	id := e.askedBy(t, "token:alice", "SCT reject codes", []string{"sepa"}, "not_found")

	// A full rating: passage ids resolve to chunk ids, a chunk id is kept
	// as it is, the layer exists.
	resp, err := e.svc.Feedback(alice, FeedbackRequest{InteractionID: id, Helpful: false, CorrectLayer: "sepa",
		BetterQuery:   "SCT Inst reject codes for DE89370400440532013000",
		ChunkFeedback: map[string]string{"S2": "useful", "502": "outdated"}})
	if err != nil || resp.Status != "ok" || resp.FeedbackID == "" || len(resp.NotStored) != 0 || resp.Warning != "" {
		t.Fatalf("full rating: %+v %v", resp, err)
	}
	var helpful bool
	var layer, better string
	var ratings map[string]string
	if err := e.owner.QueryRow(ctx, `SELECT helpful, correct_layer, better_query, chunk_ratings FROM strata.feedback WHERE id = $1`,
		resp.FeedbackID).Scan(&helpful, &layer, &better, &ratings); err != nil {
		t.Fatal(err)
	}
	if helpful || layer != "sepa" || ratings["501"] != "useful" || ratings["502"] != "outdated" || len(ratings) != 2 {
		t.Errorf("stored %v %q %v", helpful, layer, ratings)
	}
	if strings.Contains(better, "DE89370400440532013000") || !strings.Contains(better, "SCT Inst reject codes") {
		t.Errorf("better_query stored unscrubbed or lost: %q", better)
	}

	// Extras that cannot be stored: the rating is, they are named.
	resp, err = e.svc.Feedback(alice, FeedbackRequest{InteractionID: id, Helpful: true, CorrectLayer: "nope",
		ChunkFeedback: map[string]string{"999": "wrong", "S3": "wrong", "S9": "useful"}})
	if err != nil || resp.Status != "ok" {
		t.Fatalf("rating with bad extras: %+v %v", resp, err)
	}
	if strings.Join(resp.NotStored, ",") != "chunk_feedback.999,chunk_feedback.S9,correct_layer" ||
		!strings.Contains(resp.Warning, `"nope"`) || !strings.Contains(resp.Warning, "chunk 999") {
		t.Errorf("not stored %q, warning %q", resp.NotStored, resp.Warning)
	}
	if err := e.owner.QueryRow(ctx, `SELECT correct_layer, chunk_ratings FROM strata.feedback WHERE id = $1`,
		resp.FeedbackID).Scan(&layer, &ratings); err != nil || layer != "" || len(ratings) != 1 || ratings["502"] != "wrong" {
		t.Errorf("second rating stored %q %v %v", layer, ratings, err)
	}
	// A named clause's passage (S1) cannot be rated yet: it is an extra
	// that is not stored, and the rest of the call is (issue 27, item 10).
	resp, err = e.svc.Feedback(alice, FeedbackRequest{InteractionID: id, Helpful: true,
		ChunkFeedback: map[string]string{"S1": "useful", "S2": "wrong"}})
	if err != nil || resp.Status != "ok" {
		t.Fatalf("rating an exact clause: %+v %v", resp, err)
	}
	if strings.Join(resp.NotStored, ",") != "chunk_feedback.S1" || !strings.Contains(resp.Warning, "named clause") {
		t.Errorf("rating an exact clause: not stored %q, warning %q", resp.NotStored, resp.Warning)
	}
	if err := e.owner.QueryRow(ctx, `SELECT helpful, chunk_ratings FROM strata.feedback WHERE id = $1`,
		resp.FeedbackID).Scan(&helpful, &ratings); err != nil || !helpful || len(ratings) != 1 || ratings["501"] != "wrong" {
		t.Errorf("rating with an exact clause stored %v %v %v", helpful, ratings, err)
	}
	before := e.feedbackRows(t)

	// Refused calls store nothing.
	refused := []struct {
		name string
		ctx  context.Context
		req  FeedbackRequest
		kind qerr.Kind
		msg  string
	}{
		{"bad rating", alice, FeedbackRequest{InteractionID: id, ChunkFeedback: map[string]string{"S2": "useful", "S3": "great"}},
			qerr.Invalid, "must be one of useful, wrong, outdated"},
		{"bad key", alice, FeedbackRequest{InteractionID: id, ChunkFeedback: map[string]string{"first": "useful"}},
			qerr.Invalid, "neither a passage id"},
		{"other caller", caller.With(ctx, "token:bob"), FeedbackRequest{InteractionID: id, Helpful: true},
			qerr.Forbidden, "only the caller who asked"},
		{"no caller", ctx, FeedbackRequest{InteractionID: id, Helpful: true}, qerr.Forbidden, "only the caller who asked"},
		{"unknown interaction", alice, FeedbackRequest{InteractionID: "987654", Helpful: true}, qerr.NotFound, "no interaction"},
		{"not an id", alice, FeedbackRequest{InteractionID: "S1", Helpful: true}, qerr.Invalid, "digits"},
	}
	for _, c := range refused {
		_, err := e.svc.Feedback(c.ctx, c.req)
		if qerr.KindOf(err) != c.kind || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want kind %v with %q", c.name, err, c.kind, c.msg)
		}
	}

	// Too late: an interaction older than the window.
	old := e.askedBy(t, "token:alice", "old question", nil, "found")
	if _, err := e.owner.Exec(ctx, `UPDATE strata.interactions SET created_at = now() - interval '25 hours' WHERE id = $1`, old); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Feedback(alice, FeedbackRequest{InteractionID: old, Helpful: true}); qerr.KindOf(err) != qerr.Invalid ||
		!strings.Contains(err.Error(), "24h0m0s") {
		t.Errorf("rating after the window: %v", err)
	}
	if n := e.feedbackRows(t); n != before {
		t.Errorf("refused calls stored %d rows", n-before)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestFeedbackAgainReplaces: rating an interaction again replaces the
// earlier rating: the stats count one rating of that interaction, with the
// later verdict and passage ratings (issue 27, item 10).
func TestFeedbackAgainReplaces(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := caller.With(ctx, "token:alice")
	id := e.askedBy(t, "token:alice", "SCT reject codes", []string{"sepa"}, "found")
	other := e.askedBy(t, "token:alice", "SEPA cut-off times", []string{"sepa"}, "found")
	for _, req := range []FeedbackRequest{
		{InteractionID: id, Helpful: false, ChunkFeedback: map[string]string{"S2": "wrong", "S3": "outdated"}},
		{InteractionID: other, Helpful: true},
		{InteractionID: id, Helpful: true, ChunkFeedback: map[string]string{"S2": "useful"}},
	} {
		if _, err := e.svc.Feedback(alice, req); err != nil {
			t.Fatal(err)
		}
	}
	st, err := e.svc.Stats(ctx, StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := store.FeedbackCounts{Ratings: 2, Helpful: 2, ChunksUseful: 1}
	if st.Feedback != want {
		t.Errorf("feedback counts %+v, want %+v: the second rating of %s replaces the first", st.Feedback, want, id)
	}
}
