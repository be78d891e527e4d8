package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrUnreachable marks an error of a database that could not be reached: a
// failed connection, or a call the reconnect gate refused because a recent
// attempt failed. errors.Is(err, ErrUnreachable) holds for the gate's
// refusals; IsUnreachable also recognises the connection failures
// themselves.
var ErrUnreachable = errors.New("database unreachable")

// Backoff of the reconnect gate: the first failure closes it for
// gateMinBackoff, each further failure doubles the window up to
// gateMaxBackoff. A probe that has not finished after gateProbeTimeout no
// longer blocks the next one.
const (
	gateMinBackoff   = 250 * time.Millisecond
	gateMaxBackoff   = 4 * time.Second
	gateProbeTimeout = 15 * time.Second
)

// Gate keeps queryd from dialling the database on every request while the
// database is down. After a connection failure it refuses calls at once,
// without dialling, for a backoff window (250 ms, doubling up to 4 s); when
// the window has passed, one call at a time goes through as a probe while
// the others are still refused. A call that reaches the database opens the
// gate again. While the database answers, the gate costs one atomic load per
// call.
//
// Each handle (Corpus, Ledger) has a Gate for its pool; the handle's start
// checks go through it too, so that a server started while the database is
// down does not dial once per request either. A Gate is safe for concurrent
// use.
type Gate struct {
	min, max time.Duration
	now      func() time.Time

	closed atomic.Bool // not known to be reachable: calls go through enter's slow path

	mu         sync.Mutex
	verified   bool      // a call has reached the database
	failures   int       // consecutive failed attempts
	until      time.Time // no attempt before this
	probing    bool
	probeStart time.Time
	last       error // the last connection failure
}

// newGate returns a gate with the default backoff. Until a first call
// reaches the database, it lets one call through at a time, so that a burst
// of requests at start-up against a database that is down dials once.
func newGate() *Gate {
	g := &Gate{min: gateMinBackoff, max: gateMaxBackoff, now: time.Now}
	g.closed.Store(true)
	return g
}

// unreachableError is the gate's refusal: it says when the next attempt
// will be made and what the last one met.
type unreachableError struct {
	wait  time.Duration
	cause error
}

func (e *unreachableError) Error() string {
	msg := "database unreachable"
	if e.wait > 0 {
		msg += fmt.Sprintf(" (next connection attempt in %s)", e.wait.Round(time.Millisecond))
	} else if e.cause != nil {
		msg += " (a connection attempt is under way)"
	} else {
		msg += " so far (a first connection attempt is under way)"
	}
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

func (e *unreachableError) Unwrap() error { return e.cause }

// RetryAfter is how long until the gate lets the next attempt through.
func (e *unreachableError) RetryAfter() time.Duration { return e.wait }

// enter admits or refuses one call. probe is true when the call is the one
// attempt the gate lets through after a failure; it must be followed by
// done.
func (g *Gate) enter() (probe bool, err error) {
	if !g.closed.Load() {
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failures == 0 && g.verified {
		return false, nil
	}
	now := g.now()
	if g.failures > 0 && now.Before(g.until) {
		return false, &unreachableError{wait: g.until.Sub(now), cause: g.last}
	}
	if g.probing && now.Sub(g.probeStart) < gateProbeTimeout {
		return false, &unreachableError{cause: g.last}
	}
	g.probing, g.probeStart = true, now
	return true, nil
}

// beforeConnect runs before the pool opens a connection. Calls admitted
// while the database still answered may be waiting for a connection when it
// goes away; once the gate has closed, their connection attempts are refused
// here without dialling, and only the gate's probe may connect.
func (g *Gate) beforeConnect(context.Context, *pgx.ConnConfig) error {
	if !g.closed.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.probing || (g.failures == 0 && g.verified) {
		return nil
	}
	return &unreachableError{wait: max(0, g.until.Sub(g.now())), cause: g.last}
}

// done records the outcome of a call that enter admitted. A connection
// failure closes the gate (or widens the window, for a probe); a call that
// reached the database, even with an SQL error, opens it. A call whose
// caller gave up (ctx ended) proves nothing either way.
func (g *Gate) done(ctx context.Context, probe bool, err error) {
	failed := isConnFailure(err)
	if !failed && !probe && !g.closed.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if probe {
		g.probing = false
	}
	switch {
	case !failed && ctx.Err() != nil && err != nil:
		// The caller went away: no verdict on the database.
	case !failed:
		g.failures, g.last, g.verified = 0, nil, true
		g.closed.Store(false)
	case ctx.Err() != nil:
		// A dial cut short by the caller's deadline says little.
	default:
		now := g.now()
		if !probe && g.failures > 0 && now.Before(g.until) {
			// A call admitted before the gate closed failed too: the
			// window already covers it.
			g.last = err
			return
		}
		g.failures++
		d := g.min
		for i := 1; i < g.failures && d < g.max; i++ {
			d *= 2
		}
		g.until, g.last = now.Add(min(d, g.max)), err
		g.closed.Store(true)
	}
}

// IsUnreachable reports whether err says the database could not be reached:
// a failed connection, a connection lost, the server shutting down or not
// accepting connections yet, or a refusal of the reconnect gate.
func IsUnreachable(err error) bool {
	return errors.Is(err, ErrUnreachable) || isConnFailure(err)
}

// isConnFailure reports whether err is a failure to reach the database, as
// opposed to an answer from it.
func isConnFailure(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	// A query cut short by its context is not a connection failure (and
	// context.DeadlineExceeded would pass for a net.Error below).
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 is connection exceptions; 57P01-57P03 are the server
		// shutting down, crashed, or not yet accepting connections.
		return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03")
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// IsBadText reports whether err is PostgreSQL refusing a value's characters:
// a NUL byte or a byte sequence that is not valid in the database's encoding
// (SQLSTATE 22021), or a character the encoding cannot represent (22P05).
// Such an error comes from the caller's input, not from the database.
func IsBadText(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "22021" || pe.Code == "22P05")
}

// gatedDB is the pool behind the gate: every call runs the handle's start
// checks until they have passed (ready), then asks the gate and reports its
// outcome. It has the methods the store uses, so that the store's queries
// read as pool calls.
type gatedDB struct {
	pool  *pgxpool.Pool
	gate  *Gate
	ready *readiness // nil inside the checks themselves
}

// enter runs the start checks, then asks the gate.
func (d gatedDB) enter(ctx context.Context) (probe bool, err error) {
	if err := d.ready.ensure(ctx, gatedDB{pool: d.pool, gate: d.gate}); err != nil {
		return false, err
	}
	return d.gate.enter()
}

func (d gatedDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	probe, err := d.enter(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := d.pool.Query(ctx, sql, args...)
	d.gate.done(ctx, probe, err)
	return rows, err
}

func (d gatedDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	probe, err := d.enter(ctx)
	if err != nil {
		return errRow{err}
	}
	return gatedRow{row: d.pool.QueryRow(ctx, sql, args...), done: func(err error) { d.gate.done(ctx, probe, err) }}
}

func (d gatedDB) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	probe, err := d.enter(ctx)
	if err != nil {
		return errBatch{err}
	}
	return &gatedBatch{BatchResults: d.pool.SendBatch(ctx, b), done: func(err error) { d.gate.done(ctx, probe, err) }}
}

// BeginTx makes gatedDB usable with pgx.BeginTxFunc.
func (d gatedDB) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	probe, err := d.enter(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.pool.BeginTx(ctx, opts)
	d.gate.done(ctx, probe, err)
	return tx, err
}

func (d gatedDB) Ping(ctx context.Context) error {
	probe, err := d.enter(ctx)
	if err != nil {
		return err
	}
	err = d.pool.Ping(ctx)
	d.gate.done(ctx, probe, err)
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type gatedRow struct {
	row  pgx.Row
	done func(error)
}

func (r gatedRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	r.done(err)
	return err
}

type errBatch struct{ err error }

func (b errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b errBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b errBatch) QueryRow() pgx.Row                { return errRow(b) }
func (b errBatch) Close() error                     { return b.err }
func (b errBatch) Tx() pgx.Tx                       { return nil }

// gatedBatch reports the batch's outcome when it is closed: a connection
// failure shows in Close's error.
type gatedBatch struct {
	pgx.BatchResults
	once sync.Once
	done func(error)
}

func (b *gatedBatch) Close() error {
	err := b.BatchResults.Close()
	b.once.Do(func() { b.done(err) })
	return err
}
