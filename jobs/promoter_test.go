package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/learn"
)

// record writes an interaction as queryd's recorder does.
func record(t *testing.T, pool *pgxpool.Pool, who, tool, question string, layers []string, ago time.Duration) int64 {
	t.Helper()
	if layers == nil {
		layers = []string{}
	}
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO strata.interactions (caller, tool, question, layers, status, created_at)
		VALUES ($1, $2, $3, $4, 'ok', now() - $5::interval) RETURNING id`, who, tool, question, layers, ago.String()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

type synonymRow struct {
	Term, Synonym, Layer string
	Rule, Usage, Callers int
}

func synonyms(t *testing.T, pool *pgxpool.Pool) []synonymRow {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT term, synonym, layer, rule_version, usage_count, callers
		FROM strata.learned_synonyms ORDER BY term, synonym, layer`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []synonymRow
	for rows.Next() {
		var r synonymRow
		if err := rows.Scan(&r.Term, &r.Synonym, &r.Layer, &r.Rule, &r.Usage, &r.Callers); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// runPromoter runs the promoter as the River job and waits for it.
func runPromoter(t *testing.T, client *river.Client[pgx.Tx], events <-chan *river.Event) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.Insert(ctx, PromoteArgs{Force: true}, nil); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.Kind != (PromoteArgs{}).Kind() {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("promoter job ended %s: %v", ev.Kind, ev.Job.Errors)
			}
			return
		case <-timeout:
			t.Fatal("the promoter job did not finish in 30 s")
		}
	}
}

func TestPromoterLearnsSynonyms(t *testing.T) {
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

	// One caller rephrases once: seen once, not learned.
	record(t, pool, "token:a", "strata_ask", "holiday carry-over rules", []string{"handbook"}, 3*time.Minute)
	record(t, pool, "token:a", "strata_ask", "leave carry-over rules", []string{"handbook"}, 2*time.Minute)
	// Rewordings that teach nothing: no shared word; two words missing;
	// too late after the first; another caller's question in between.
	record(t, pool, "token:c", "strata_ask", "holiday", nil, 5*time.Minute)
	record(t, pool, "token:c", "strata_ask", "leave", nil, 4*time.Minute)
	record(t, pool, "token:d", "strata_ask", "holiday carry rules", nil, 5*time.Minute)
	record(t, pool, "token:d", "strata_ask", "leave transfer rules", nil, 4*time.Minute)
	record(t, pool, "token:e", "strata_ask", "holiday carry-over rules", nil, time.Hour)
	record(t, pool, "token:e", "strata_ask", "leave carry-over rules", nil, time.Hour-learn.RephraseWindow-time.Minute)
	// A pair learned under an older rule.
	if _, err := pool.Exec(ctx, `INSERT INTO strata.learned_synonyms (term, synonym, layer, rule_version, usage_count, callers)
		VALUES ('contract', 'agreement', '', 1, 9, 3)`); err != nil {
		t.Fatal(err)
	}
	runPromoter(t, client, events)
	if got := synonyms(t, pool); len(got) != 0 {
		t.Fatalf("after one caller's rephrasing: %+v, want nothing learned (and the old-rule pair deleted)", got)
	}

	// The same caller again: twice, but from one caller.
	record(t, pool, "token:a", "strata_ask", "holiday carry-over limit", []string{"handbook"}, time.Minute)
	record(t, pool, "token:a", "strata_ask", "leave carry-over limit", []string{"handbook"}, 30*time.Second)
	runPromoter(t, client, events)
	if got := synonyms(t, pool); len(got) != 0 {
		t.Fatalf("after one caller's two rephrasings: %+v, want nothing learned", got)
	}

	// A second caller: learned, with its layer and the rule version.
	record(t, pool, "token:b", "strata_search", "holiday carry-over", []string{"handbook"}, 20*time.Second)
	record(t, pool, "token:b", "strata_search", "leave carry-over", []string{"handbook"}, 10*time.Second)
	runPromoter(t, client, events)
	want := synonymRow{Term: "holiday", Synonym: "leave", Layer: "handbook", Rule: learn.SynonymRule, Usage: 3, Callers: 2}
	if got := synonyms(t, pool); len(got) != 1 || got[0] != want {
		t.Fatalf("learned %+v, want %+v", got, want)
	}
	var runs, lastPairs int
	if err := pool.QueryRow(ctx, `SELECT count(*), (SELECT pairs_seen FROM strata.promoter_runs ORDER BY id DESC LIMIT 1)
		FROM strata.promoter_runs`).Scan(&runs, &lastPairs); err != nil || runs != 3 || lastPairs != 3 {
		t.Errorf("promoter runs %d, last pairs %d, %v", runs, lastPairs, err)
	}

	// A layer reset (recorded by queryd as an interaction) removes the
	// layer's pair and keeps the history; evidence before it no longer
	// teaches that layer.
	record(t, pool, "token:admin", ResetTool, "", []string{"handbook"}, 0)
	runPromoter(t, client, events)
	if got := synonyms(t, pool); len(got) != 0 {
		t.Errorf("after the layer reset: %+v", got)
	}
	var kept int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM strata.interactions WHERE tool <> $1`, ResetTool).Scan(&kept); err != nil || kept != 12 {
		t.Errorf("history after a layer reset: %d interactions, %v", kept, err)
	}
}

func TestPromoterIsDueAfterFiftyInteractions(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	run, err := Promote(ctx, pool, true)
	if err != nil || !run.Ran {
		t.Fatalf("forced first run: %+v %v", run, err)
	}
	for i := range PromoteAfter - 1 {
		record(t, pool, "token:a", "strata_ask", "question", nil, time.Duration(i)*time.Second)
	}
	if run, err := Promote(ctx, pool, false); err != nil || run.Ran {
		t.Fatalf("with %d new interactions: %+v %v, want not due", PromoteAfter-1, run, err)
	}
	record(t, pool, "token:a", "strata_ask", "question", nil, 0)
	if run, err := Promote(ctx, pool, false); err != nil || !run.Ran || run.Interactions != PromoteAfter {
		t.Fatalf("with %d new interactions: %+v %v, want a run", PromoteAfter, run, err)
	}
	if run, err := Promote(ctx, pool, false); err != nil || run.Ran {
		t.Fatalf("right after a run: %+v %v, want not due", run, err)
	}
}
