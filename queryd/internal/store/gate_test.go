package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/tcpproxy"
)

// withDial replaces the dialer, so that a test counts connection attempts.
func withDial(d pgconn.DialFunc) Option { return func(o *openOptions) { o.dial = d } }

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}

func TestGateBacksOffAndProbesOneAtATime(t *testing.T) {
	now := time.Unix(1000, 0)
	g := newGate()
	g.now = func() time.Time { return now }
	ctx := context.Background()

	// Before anything reached the database, one call at a time.
	if probe, err := g.enter(); err != nil || !probe {
		t.Fatalf("new gate: probe %v err %v", probe, err)
	}
	if _, err := g.enter(); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("new gate: a second call while the first runs went through: %v", err)
	}
	g.done(ctx, true, nil)
	// Open: everything goes through.
	for range 3 {
		if probe, err := g.enter(); err != nil || probe {
			t.Fatalf("open gate: probe %v err %v", probe, err)
		}
	}
	g.done(ctx, false, errRefused)

	// Closed for 250 ms, then one probe; a failed probe doubles the window,
	// up to 4 s.
	for _, window := range []time.Duration{250, 500, 1000, 2000, 4000, 4000} {
		window *= time.Millisecond
		_, err := g.enter()
		var ue *unreachableError
		if !errors.Is(err, ErrUnreachable) || !errors.As(err, &ue) || ue.RetryAfter() != window {
			t.Fatalf("inside the %s window: %v", window, err)
		}
		if !IsUnreachable(err) {
			t.Errorf("IsUnreachable(%v) = false", err)
		}
		now = now.Add(window)
		probe, err := g.enter()
		if err != nil || !probe {
			t.Fatalf("after the %s window: want a probe, got probe %v err %v", window, probe, err)
		}
		if _, err := g.enter(); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("a second call while the probe runs went through: %v", err)
		}
		g.done(ctx, true, errRefused)
	}

	// A probe whose caller gave up proves nothing: the next call probes.
	now = now.Add(4 * time.Second)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	probe, _ := g.enter()
	g.done(cctx, probe, context.Canceled)
	if probe, err := g.enter(); err != nil || !probe {
		t.Fatalf("after a cancelled probe: probe %v err %v", probe, err)
	}
	// A probe that reaches the database, even with an SQL error, opens the
	// gate.
	g.done(ctx, true, &pgconn.PgError{Code: "42P01"})
	for range 3 {
		if probe, err := g.enter(); err != nil || probe {
			t.Fatalf("reopened gate: probe %v err %v", probe, err)
		}
	}
}

func TestConnectionFailuresAreRecognised(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errRefused, true},
		{fmt.Errorf("read data version: %w", io.ErrUnexpectedEOF), true},
		{&pgconn.PgError{Code: "57P03"}, true},
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "42P01"}, false},
		{&pgconn.PgError{Code: "22021"}, false},
		{context.Canceled, false},
		{fmt.Errorf("run the vector search: %w", context.DeadlineExceeded), false},
		{&pgconn.ConnectError{Config: &pgconn.Config{}}, true},
		{nil, false},
	} {
		if got := IsUnreachable(c.err); got != c.want {
			t.Errorf("IsUnreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if !IsBadText(fmt.Errorf("lexical search: %w", &pgconn.PgError{Code: "22021"})) || IsBadText(&pgconn.PgError{Code: "42P01"}) {
		t.Error("IsBadText misjudges SQLSTATE 22021 or 42P01")
	}
}

// dialCounter counts the connection attempts the store makes.
type dialCounter struct{ n atomic.Int64 }

func (d *dialCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// hammer calls fn 1,000 times over about a second from 20 goroutines and
// returns the errors.
func hammer(fn func(ctx context.Context) error) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 50 {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				err := fn(ctx)
				cancel()
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	return errs
}

// The issue: with PostgreSQL down, queryd made a new connection per request
// (about 5,500 a second under a client ignoring Retry-After).
func TestStoreDoesNotDialPerRequestWhileDatabaseIsDown(t *testing.T) {
	pool, dbURL := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := tcpproxy.New(t, u.Host)
	u.Host = p.Addr()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()

	dials := &dialCounter{}
	ctx := context.Background()
	st, err := OpenCorpus(ctx, u.String(), withDial(dials.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Version(ctx); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		mode tcpproxy.Mode
	}{{"accept and close", tcpproxy.AcceptAndClose}, {"connection refused", tcpproxy.Refuse}} {
		p.Set(c.mode)
		dials.n.Store(0)
		began := time.Now()
		errs := hammer(func(ctx context.Context) error { _, err := st.Version(ctx); return err })
		took := time.Since(began)
		for _, err := range errs {
			if !IsUnreachable(err) {
				t.Fatalf("%s: an error that does not say the database is unreachable: %v", c.name, err)
			}
		}
		n := dials.n.Load()
		t.Logf("%s: %d requests in %s made %d connection attempts", c.name, len(errs), took.Round(time.Millisecond), n)
		if n > 10 {
			t.Errorf("%s: %d requests made %d connection attempts, want a handful", c.name, len(errs), n)
		}

		// When the database is back, the store recovers within the
		// backoff's longest window.
		p.Set(tcpproxy.Forward)
		deadline := time.Now().Add(gateMaxBackoff + 2*time.Second)
		for {
			if _, err = st.Version(ctx); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the store did not recover once the database was back: %v", c.name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A handle made while the database is down (as queryd serve makes its
	// own at start) does not dial per call either: its start checks go
	// through its gate too.
	p.Set(tcpproxy.Refuse)
	dials.n.Store(0)
	lazy, err := NewCorpus(u.String(), withDial(dials.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	errs := hammer(func(ctx context.Context) error { _, err := lazy.Version(ctx); return err })
	for _, err := range errs {
		if !IsUnreachable(err) {
			t.Fatalf("a call on a handle made while the database is down: %v, want unreachable", err)
		}
	}
	n := dials.n.Load()
	t.Logf("new handle: %d calls made %d connection attempts", len(errs), n)
	if n > 10 {
		t.Errorf("%d calls on a handle made while the database is down made %d connection attempts, want a handful", len(errs), n)
	}
	// Once the database is back, the handle's start checks pass and it
	// answers.
	p.Set(tcpproxy.Forward)
	deadline := time.Now().Add(gateMaxBackoff + 2*time.Second)
	for {
		if _, err = lazy.Version(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handle made while the database was down did not connect once it was back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
