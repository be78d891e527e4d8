package replicatest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/internal/dbtest"
)

// Replay is what WaitReplayed measured.
type Replay struct {
	// BehindBytes is how far the standby's replay was behind the
	// primary's current WAL position when WaitReplayed began.
	BehindBytes int64
	// Wait is how long until the standby had replayed that position.
	Wait time.Duration
}

// WaitReplayed waits until the standby has replayed everything the primary
// had written when it was called (pg_current_wal_insert_lsn on the primary
// against pg_last_wal_replay_lsn on the standby), for at most timeout.
func (s *Standby) WaitReplayed(t testing.TB, timeout time.Duration) Replay {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	var target string
	s.exec(ctx, t, dbtest.URL(t), "SELECT pg_current_wal_insert_lsn()::text", &target)
	conn := s.connect(ctx, t)
	defer conn.Close(context.Background())
	var r Replay
	first := true
	for {
		var behind int64
		err := conn.QueryRow(ctx, "SELECT coalesce(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint",
			target).Scan(&behind)
		if err != nil {
			t.Fatalf("replicatest: replay position: %v", err)
		}
		if first {
			r.BehindBytes, first = max(behind, 0), false
		}
		if behind <= 0 {
			r.Wait = time.Since(start)
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replicatest: the standby has not replayed %s after %s (still %d bytes behind)", target, timeout, behind)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// PauseReplay stops the standby applying WAL (it still receives it):
// the standby lags the primary until ResumeReplay.
func (s *Standby) PauseReplay(t testing.TB) {
	t.Helper()
	s.replayCall(t, "SELECT pg_wal_replay_pause()")
}

// ResumeReplay lets the standby apply WAL again.
func (s *Standby) ResumeReplay(t testing.TB) {
	t.Helper()
	s.replayCall(t, "SELECT pg_wal_replay_resume()")
}

func (s *Standby) replayCall(t testing.TB, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := s.connect(ctx, t)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("replicatest: %s: %v", sql, err)
	}
}

// connect opens a connection to the standby as the primary URL's user.
func (s *Standby) connect(ctx context.Context, t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, s.URL(t, dbtest.URL(t)))
	if err != nil {
		t.Fatalf("replicatest: connect to the standby: %v", err)
	}
	return conn
}

// exec runs a one-row query on u.
func (s *Standby) exec(ctx context.Context, t testing.TB, u, sql string, dest ...any) {
	t.Helper()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("replicatest: connect: %v", err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		t.Fatalf("replicatest: %s: %v", sql, err)
	}
}

// String names the standby for logs.
func (s *Standby) String() string { return fmt.Sprintf("standby on 127.0.0.1:%d (%s)", s.Port, s.Dir) }
