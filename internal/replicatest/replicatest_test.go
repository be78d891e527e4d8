package replicatest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/internal/dbtest"
)

// TestStandbyReplaysAndRefusesWrites: a table made on the primary shows on
// the standby once replayed; the standby refuses writes; a paused replay
// holds new rows back until resumed; the standby's folder is gone after
// the test's cleanup.
func TestStandbyReplaysAndRefusesWrites(t *testing.T) {
	var dir string
	t.Run("standby", func(t *testing.T) {
		primary := dbtest.NewDatabase(t)
		s := Start(t)
		dir = s.Dir
		ctx := context.Background()
		p, err := pgx.Connect(ctx, primary)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(ctx)
		if _, err := p.Exec(ctx, "CREATE TABLE r (v int); INSERT INTO r VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		r := s.WaitReplayed(t, 30*time.Second)
		t.Logf("replayed %d bytes in %s", r.BehindBytes, r.Wait)
		st, err := pgx.Connect(ctx, s.URL(t, primary))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close(ctx)
		if n := count(t, st); n != 1 {
			t.Fatalf("standby has %d rows, want 1", n)
		}
		if _, err := st.Exec(ctx, "INSERT INTO r VALUES (2)"); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("a write on the standby: %v, want a read-only refusal", err)
		}
		s.PauseReplay(t)
		if _, err := p.Exec(ctx, "INSERT INTO r VALUES (3)"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if n := count(t, st); n != 1 {
			t.Fatalf("paused standby has %d rows, want 1", n)
		}
		s.ResumeReplay(t)
		s.WaitReplayed(t, 30*time.Second)
		if n := count(t, st); n != 2 {
			t.Fatalf("resumed standby has %d rows, want 2", n)
		}
	})
	if dir == "" {
		return // skipped
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Fatalf("the standby's folder %s is still there after the test: %v", dir, err)
	}
}

func count(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM r").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
