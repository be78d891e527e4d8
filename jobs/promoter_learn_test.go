package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/learn"
)

// asks records a strata_ask as queryd's recorder does, with its status and
// the searches it ran (the question first).
func asks(t *testing.T, pool *pgxpool.Pool, who, question string, layers []string, status string, variants []string, ago time.Duration) int64 {
	t.Helper()
	if layers == nil {
		layers = []string{}
	}
	if variants == nil {
		variants = []string{question}
	}
	detail, _ := json.Marshal(map[string]any{"variants": variants, "chunk_ids": []int64{}, "confidence": "medium"})
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO strata.interactions (caller, tool, question, layers, status, detail, created_at)
		VALUES ($1, 'strata_ask', $2, $3, $4, $5, now() - $6::interval) RETURNING id`, who, question, layers, status, detail, ago.String()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func rate(t *testing.T, pool *pgxpool.Pool, id int64, who string, helpful bool, correctLayer, betterQuery string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `INSERT INTO strata.feedback (interaction_id, caller, helpful, correct_layer, better_query)
		VALUES ($1, $2, $3, $4, $5)`, id, who, helpful, correctLayer, betterQuery); err != nil {
		t.Fatal(err)
	}
}

func rewrites(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT question_key || ' -> ' || rewrite || ' @' || layer || ' proofs ' || proofs
			|| ' uses ' || use_count || ' ok ' || success_count
		FROM strata.learned_rewrites ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func affinities(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT format('%s@%s %s/%s/%s', term, layer, switches, corrections, helpful)
		FROM strata.learned_affinities ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPromoterLearnsRewritesAndAffinities(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck
	hb, sepa := []string{"handbook"}, []string{"sepa"}

	// A rewording after a not_found that shares a word with it and was
	// found, seen twice (learn.MinRewriteProofs): a proven rewrite, for the
	// layer the rewording searched alone.
	asks(t, pool, "token:alice", "How long may holidays carry over?", hb, "not_found", nil, 9*time.Minute)
	asks(t, pool, "token:alice", "unused holidays carried into the next year", hb, "found", nil, 8*time.Minute)
	asks(t, pool, "token:ann", "How long may holidays carry over?", hb, "not_found", nil, 9*time.Minute)
	asks(t, pool, "token:ann", "unused holidays carried into the next year", hb, "found", nil, 8*time.Minute)
	// Rewordings that prove nothing: weak after weak, found after found
	// (more than learn.RephraseWindow after the last), too late.
	asks(t, pool, "token:bob", "pension scheme", hb, "not_found", nil, 25*time.Minute)
	asks(t, pool, "token:bob", "retirement plan", hb, "not_found", nil, 24*time.Minute)
	asks(t, pool, "token:bob", "bonus rules", hb, "found", nil, 7*time.Minute)
	asks(t, pool, "token:bob", "incentive pay rules", hb, "found", nil, 6*time.Minute)
	asks(t, pool, "token:carl", "parking permit", hb, "not_found", nil, time.Hour)
	asks(t, pool, "token:carl", "car park badge", hb, "found", nil, 30*time.Minute)
	// better_query: the caller rated a weak answer and named the wording
	// that worked, which it asked (not right after) and got found.
	asks(t, pool, "token:dora", "credit transfer reject reason codes", sepa, "found", nil, 9*time.Minute)
	asks(t, pool, "token:dora", "cut-off times", sepa, "found", nil, 8*time.Minute)
	weak := asks(t, pool, "token:dora", "SCT reject codes", sepa, "partly_found", nil, 7*time.Minute)
	rate(t, pool, weak, "token:dora", false, "", "credit transfer reject reason codes")
	asks(t, pool, "token:dan", "credit transfer reject reason codes", sepa, "found", nil, 9*time.Minute)
	weak = asks(t, pool, "token:dan", "SCT reject codes", sepa, "partly_found", nil, 7*time.Minute)
	rate(t, pool, weak, "token:dan", false, "", "credit transfer reject reason codes")
	// A layer switch: the same question in another layer, found there.
	asks(t, pool, "token:emil", "refund period for card payments", hb, "not_found", nil, 5*time.Minute)
	asks(t, pool, "token:emil", "refund period for card payments", sepa, "found", nil, 4*time.Minute)
	// correct_layer and a helpful answer.
	wrong := asks(t, pool, "token:fay", "mandate amendment", hb, "not_found", nil, 3*time.Minute)
	rate(t, pool, wrong, "token:fay", false, "sepa", "")
	good := asks(t, pool, "token:gus", "sick leave notice", hb, "found", nil, 2*time.Minute)
	rate(t, pool, good, "token:gus", true, "", "")

	runPromoter(t, client, events)
	wantRw := []string{
		"carry holiday long -> unused holidays carried into the next year @handbook proofs 2 uses 0 ok 0",
		"code reject sct -> credit transfer reject reason codes @sepa proofs 2 uses 0 ok 0",
	}
	if got := rewrites(t, pool); strings.Join(got, "\n") != strings.Join(wantRw, "\n") {
		t.Errorf("rewrites:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRw, "\n"))
	}
	wantAff := []string{"amendment@sepa 0/1/0", "card@sepa 1/0/0", "leave@handbook 0/0/1", "mandate@sepa 0/1/0",
		"notice@handbook 0/0/1", "payment@sepa 1/0/0", "period@sepa 1/0/0", "refund@sepa 1/0/0", "sick@handbook 0/0/1"}
	if got := affinities(t, pool); strings.Join(got, " ") != strings.Join(wantAff, " ") {
		t.Errorf("affinities %q, want %q", got, wantAff)
	}
	var ratings, rwLearned, affLearned int
	if err := pool.QueryRow(ctx, `SELECT ratings_read, rewrites_learned, affinities_learned FROM strata.promoter_runs ORDER BY id DESC LIMIT 1`).
		Scan(&ratings, &rwLearned, &affLearned); err != nil || ratings != 4 || rwLearned != 2 || affLearned != len(wantAff) {
		t.Errorf("promoter run: ratings %d, rewrites %d, affinities %d, %v", ratings, rwLearned, affLearned, err)
	}

	// Uses: one that found, then failures: a rewrite whose failed uses
	// outnumber its proofs and successes decays away.
	rw := "unused holidays carried into the next year"
	asks(t, pool, "token:hal", "how long may holidays carry over", hb, "found", []string{"how long may holidays carry over", rw}, 100*time.Second)
	runPromoter(t, client, events)
	if got := rewrites(t, pool); len(got) != 2 || !strings.HasSuffix(got[0], "uses 1 ok 1") {
		t.Fatalf("after a successful use: %q", got)
	}
	// Four: the rewrite has two proofs and one success.
	for i := range 4 {
		asks(t, pool, "token:hal", "How long may holidays carry over?", hb, "not_found", []string{"How long may holidays carry over?", rw},
			time.Duration(90-i)*time.Second)
	}
	runPromoter(t, client, events)
	if got := rewrites(t, pool); len(got) != 1 || !strings.HasPrefix(got[0], "code reject sct") {
		t.Errorf("after four failed uses: %q, want the holiday rewrite dropped", got)
	}

	// A stale rewrite (proven longer ago than learn.RewriteStale, never
	// used) is dropped.
	if _, err := pool.Exec(ctx, `UPDATE strata.interactions SET created_at = created_at - interval '15 days' WHERE caller IN ('token:dora', 'token:dan')`); err != nil {
		t.Fatal(err)
	}
	runPromoter(t, client, events)
	if got := rewrites(t, pool); len(got) != 0 {
		t.Errorf("stale rewrites kept: %q", got)
	}

	// A layer reset drops that layer's affinities and keeps the history.
	record(t, pool, "token:admin", ResetTool, "", sepa, 0)
	runPromoter(t, client, events)
	for _, a := range affinities(t, pool) {
		if strings.Contains(a, "@sepa") {
			t.Errorf("after the sepa reset: %s", a)
		}
	}
	if got := affinities(t, pool); len(got) != 3 {
		t.Errorf("the handbook affinities should stay: %q", got)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.interactions WHERE tool = 'strata_ask'`).Scan(&n); err != nil || n != 24 {
		t.Errorf("history: %d asks, %v", n, err)
	}
	// The global reset clears everything learned.
	record(t, pool, "token:admin", ResetTool, "", nil, 0)
	runPromoter(t, client, events)
	if got := fmt.Sprint(affinities(t, pool), rewrites(t, pool)); got != "[] []" {
		t.Errorf("after the global reset: %s", got)
	}
}

// TestPromoterRewritesNeedEvidence: a rewrite is learned only from a
// rewording that shares a word with the weak question, was answered and
// settled (rated helpful, or not reworded again within
// learn.RephraseWindow), seen learn.MinRewriteProofs times (issue 27,
// item 2). Before, one unrelated follow-up after a miss was a proven
// rewrite.
func TestPromoterRewritesNeedEvidence(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck
	hb, rules := []string{"handbook"}, []string{"rules"}

	// An unrelated follow-up after a miss, by two callers: no shared word,
	// no proof.
	for _, who := range []string{"token:a1", "token:a2"} {
		asks(t, pool, who, "What does PEP 8 say about indentation?", rules, "not_found", nil, 9*time.Minute)
		asks(t, pool, who, "When are travel expenses refunded?", rules, "found", nil, 8*time.Minute)
	}
	// A rewording that shares words, found and settled, but seen once.
	asks(t, pool, "token:b1", "sick pay rules", hb, "not_found", nil, 9*time.Minute)
	asks(t, pool, "token:b1", "statutory sick pay", hb, "found", nil, 8*time.Minute)
	// Found, but reworded again right after: it did not work for the
	// caller, by two callers.
	for _, who := range []string{"token:c1", "token:c2"} {
		asks(t, pool, who, "notice period staff leaving", hb, "not_found", nil, 5*time.Minute)
		asks(t, pool, who, "staff notice period rules", hb, "found", nil, 4*time.Minute)
		asks(t, pool, who, "notice period after resignation", hb, "found", nil, 3*time.Minute)
	}
	// Rated helpful: settled even though the caller asked on; two callers.
	for _, who := range []string{"token:d1", "token:d2"} {
		asks(t, pool, who, "pension payout age", hb, "not_found", nil, 9*time.Minute)
		good := asks(t, pool, who, "retirement pension age", hb, "found", nil, 8*time.Minute)
		rate(t, pool, good, who, true, "", "")
		asks(t, pool, who, "pension age for part-time staff", hb, "found", nil, 7*time.Minute)
	}
	// One caller (a stdio install, say) proves it in two sessions; an
	// unrelated question after the rewording is no further rewording.
	for _, ago := range []time.Duration{time.Hour, 30 * time.Minute} {
		asks(t, pool, "stdio:uid:1000", "expense claim deadline", hb, "not_found", nil, ago)
		asks(t, pool, "stdio:uid:1000", "deadline to submit travel expense claims", hb, "found", nil, ago-time.Minute)
		asks(t, pool, "stdio:uid:1000", "hotel approval", hb, "found", nil, ago-2*time.Minute)
	}

	runPromoter(t, client, events)
	want := []string{
		"age payout pension -> retirement pension age @handbook proofs 2 uses 0 ok 0",
		"claim deadline expense -> deadline to submit travel expense claims @handbook proofs 2 uses 0 ok 0",
	}
	if got := rewrites(t, pool); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rewrites:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPromoterLearnsSynonymsFromOneCallersSessions: a pair seen twice by
// one caller in two sessions (learn.RephraseWindow or more apart) is
// learned, so a stdio or single-token install learns; twice in one burst
// is still one session (issue 27, item 2).
func TestPromoterLearnsSynonymsFromOneCallersSessions(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	client, err := NewClient(pool, ClientConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	me := "stdio:uid:1000"
	record(t, pool, me, "strata_ask", "holiday carry-over rules", []string{"handbook"}, 40*time.Minute)
	record(t, pool, me, "strata_ask", "leave carry-over rules", []string{"handbook"}, 39*time.Minute)
	record(t, pool, me, "strata_ask", "holiday carry-over limit", []string{"handbook"}, 20*time.Minute)
	record(t, pool, me, "strata_ask", "leave carry-over limit", []string{"handbook"}, 19*time.Minute)
	// Another caller, twice in one burst: one session.
	burst := "token:burst"
	record(t, pool, burst, "strata_ask", "SCT reject codes", []string{"sepa"}, 5*time.Minute)
	record(t, pool, burst, "strata_ask", "SEPA reject codes", []string{"sepa"}, 4*time.Minute)
	record(t, pool, burst, "strata_ask", "SCT cut-off times", []string{"sepa"}, 3*time.Minute)
	record(t, pool, burst, "strata_ask", "SEPA cut-off times", []string{"sepa"}, 2*time.Minute)
	runPromoter(t, client, events)
	want := synonymRow{Term: "holiday", Synonym: "leave", Layer: "handbook", Rule: learn.SynonymRule, Usage: 2, Callers: 1}
	if got := synonyms(t, pool); len(got) != 1 || got[0] != want {
		t.Errorf("learned %+v, want only %+v", got, want)
	}
}
