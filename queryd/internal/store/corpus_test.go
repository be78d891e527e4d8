package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

// TestStartChecks: a handle on a database that is not migrated, or whose
// check refuses the role, answers unavailable on every call until the
// checks pass, and then for good.
func TestStartChecks(t *testing.T) {
	ctx := context.Background()
	pool, url := dbtest.NewPool(t)

	c, err := NewCorpus(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Layers(ctx); qerr.KindOf(err) != qerr.Unavailable || IsUnreachable(err) {
		t.Fatalf("layers on a database not migrated: %v, want unavailable (not unreachable)", err)
	}
	ingesttest.Migrate(t, pool)
	if _, err := c.Layers(ctx); err != nil {
		t.Fatalf("layers once migrated: %v", err)
	}

	refuse := true
	checks := 0
	check := func(ctx context.Context, q Querier) error {
		checks++
		var role string
		if err := q.QueryRow(ctx, `SELECT current_user`).Scan(&role); err != nil {
			return err
		}
		if refuse {
			return errors.New("refused role " + role)
		}
		return nil
	}
	c2, err := NewCorpus(url, WithCheck(check))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for range 2 {
		if err := c2.Ping(ctx); qerr.KindOf(err) != qerr.Unavailable {
			t.Fatalf("ping with a refusing check: %v, want unavailable", err)
		}
	}
	refuse = false
	for range 3 {
		if _, err := c2.Version(ctx); err != nil {
			t.Fatalf("version once the check passes: %v", err)
		}
	}
	if checks != 3 {
		t.Errorf("the check ran %d times, want 3 (twice refused, once passed, then never again)", checks)
	}
}
