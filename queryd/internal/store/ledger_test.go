package store

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
)

// TestLedgerRecordsInteractionsAsQuerydRole writes through the Ledger as the
// queryd role and reads the rows back as the owner; the role may add
// interactions but not change or remove them.
func TestLedgerRecordsInteractionsAsQuerydRole(t *testing.T) {
	ctx := context.Background()
	owner, ownerURL := dbtest.NewPool(t)
	ingesttest.Migrate(t, owner)
	qurl := dbtest.QuerydURL(t, ownerURL)

	l, err := OpenLedger(ctx, qurl)
	if err != nil {
		t.Fatalf("open the ledger as queryd: %v", err)
	}
	defer l.Close()
	first, err := l.RecordInteraction(ctx, Interaction{Caller: "alice", Tool: "strata_search", Question: "how much leave carries over?",
		Layers: []string{"handbook", "policies"}, Status: "ok", Detail: []byte(`{"results": 3}`)})
	if err != nil {
		t.Fatalf("record as queryd: %v", err)
	}
	second, err := l.RecordInteraction(ctx, Interaction{Tool: "strata_search", Status: "unavailable"})
	if err != nil {
		t.Fatalf("record with defaults: %v", err)
	}
	if second == first {
		t.Fatalf("two interactions got the same id %d", first)
	}

	type row struct {
		Caller, Tool, Question, Status string
		Layers                         []string
		Detail                         map[string]any
		Recent                         bool
	}
	read := func(id int64) row {
		var r row
		if err := owner.QueryRow(ctx, `SELECT caller, tool, question, status, layers, detail,
			created_at > now() - interval '1 minute' FROM strata.interactions WHERE id = $1`, id).Scan(
			&r.Caller, &r.Tool, &r.Question, &r.Status, &r.Layers, &r.Detail, &r.Recent); err != nil {
			t.Fatalf("read interaction %d: %v", id, err)
		}
		return r
	}
	got := read(first)
	if got.Caller != "alice" || got.Tool != "strata_search" || got.Question != "how much leave carries over?" ||
		got.Status != "ok" || !slices.Equal(got.Layers, []string{"handbook", "policies"}) || got.Detail["results"] != 3.0 || !got.Recent {
		t.Errorf("first interaction read back as %+v", got)
	}
	if got := read(second); got.Caller != "" || got.Question != "" || len(got.Layers) != 0 || len(got.Detail) != 0 || got.Status != "unavailable" {
		t.Errorf("second interaction read back as %+v", got)
	}

	// Refused before the database: no tool or status. Refused by it: a
	// detail that is not a JSON object.
	if _, err := l.RecordInteraction(ctx, Interaction{Tool: "strata_search"}); err == nil {
		t.Error("an interaction without a status was recorded")
	}
	if _, err := l.RecordInteraction(ctx, Interaction{Tool: "strata_search", Status: "ok", Detail: []byte(`[1]`)}); err == nil {
		t.Error("an interaction whose detail is an array was recorded")
	}

	// The role appends: it cannot change or remove an interaction.
	conn, err := pgx.Connect(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`UPDATE strata.interactions SET status = 'forged'`,
		`DELETE FROM strata.interactions`,
		`TRUNCATE strata.interactions`,
	} {
		_, err := conn.Exec(ctx, stmt)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as queryd: %v, want permission denied (42501)", stmt, err)
		}
	}
	var n int
	if err := owner.QueryRow(ctx, `SELECT count(*) FROM strata.interactions WHERE status <> 'forged'`).Scan(&n); err != nil || n != 2 {
		t.Errorf("interactions after the refused writes: %d %v, want 2", n, err)
	}
	// The table belongs to the schema's owner.
	var same bool
	if err := owner.QueryRow(ctx, `SELECT c.relowner = n.nspowner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'strata' AND c.relname = 'interactions'`).Scan(&same); err != nil || !same {
		t.Errorf("strata.interactions is not owned by the schema's owner: %v %v", same, err)
	}
}
