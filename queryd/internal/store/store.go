// Package store holds queryd's SQL, behind two handles on two pools:
//
//   - Corpus reads what ingestd keeps (layers, documents, sections, chunks,
//     vectors, statistics, search parameters). Its connections default to
//     read-only transactions and it may sit on a read replica.
//   - Ledger writes what queryd itself records (interactions so far), on
//     the primary.
//
// Neither has a method that changes a document, section or chunk; the
// database role queryd runs as (see schema/migrations/0004_queryd_role.sql)
// refuses it anyway. Each handle has its own reconnect gate (see Gate) and
// connects on first use, so a queryd started while the database is down
// comes up and answers what needs no database.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/schema/migrate"
)

// Querier is what a start check (WithCheck) may run its queries on.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Check is a start check: it runs before a handle's first query, and again
// before each later one until it passes once.
type Check func(ctx context.Context, q Querier) error

// Option changes how a handle connects.
type Option func(*openOptions)

type openOptions struct {
	check      Check
	dial       pgconn.DialFunc // tests count dials with it
	receiptKey *ReceiptKey     // signs and checks receipts (a ledger's)
	replica    *replicaOptions // the handle's URL is a read replica's
}

// WithCheck adds a start check after the schema version's (queryd checks
// its database role with it). An error without a qerr kind is reported as
// unavailable.
func WithCheck(c Check) Option { return func(o *openOptions) { o.check = c } }

// WithReceiptKey makes a ledger sign the receipts it issues and check the
// signatures of those it reads.
func WithReceiptKey(k *ReceiptKey) Option { return func(o *openOptions) { o.receiptKey = k } }

// WithReadReplica says that a corpus's URL names a read replica of
// primaryURL (QUERYD_READ_DATABASE_URL differs from QUERYD_DATABASE_URL).
// When the replica cannot be reached, calls fail with MsgReplicaUnreachable;
// with fallback (QUERYD_READ_FALLBACK=primary) they go to primaryURL
// instead, through a pool and a gate of their own, until the replica
// answers again. note, when not nil, is called when reads move to the
// primary (with the replica's error) and when they move back (nil).
func WithReadReplica(primaryURL string, fallback bool, note func(error)) Option {
	return func(o *openOptions) {
		o.replica = &replicaOptions{primaryURL: primaryURL, fallback: fallback, note: note}
	}
}

type replicaOptions struct {
	primaryURL string
	fallback   bool
	note       func(error)
}

// defaultConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout: an address that drops packets must not hold a request
// (and the gate's one probe) until the request timeout.
const defaultConnectTimeout = 5 * time.Second

// ErrSchemaTooOld is returned when the database has not been migrated to the
// version this binary needs.
var ErrSchemaTooOld = errors.New("database schema is older than this queryd: run 'ingestd migrate'")

// handle is what Corpus and Ledger share: a pool and its gate, and for a
// corpus on a read replica that falls back, the primary's.
type handle struct {
	pool     *pgxpool.Pool
	fallback *pgxpool.Pool // nil but with WithReadReplica's fallback
	db       routedDB
}

// newHandle makes the pool without connecting (pgxpool dials on first use)
// and puts it behind a gate of its own. params are extra run-time
// parameters of every connection.
func newHandle(url string, params map[string]string, opts []Option) (*handle, error) {
	o := openOptions{}
	for _, fn := range opts {
		fn(&o)
	}
	main, err := newGatedDB(url, params, o)
	if err != nil {
		return nil, err
	}
	h := &handle{pool: main.pool, db: routedDB{main: main}}
	if o.replica == nil {
		return h, nil
	}
	h.db.replica = true
	if o.replica.fallback {
		fb, err := newGatedDB(o.replica.primaryURL, params, o)
		if err != nil {
			main.pool.Close()
			return nil, fmt.Errorf("fallback: %w", err)
		}
		h.fallback, h.db.fallback = fb.pool, &fb
		h.db.state = &fallbackState{note: o.replica.note}
	}
	return h, nil
}

// newGatedDB makes one pool behind a gate and start checks of its own.
func newGatedDB(url string, params map[string]string, o openOptions) (gatedDB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return gatedDB{}, fmt.Errorf("database url: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if o.dial != nil {
		cfg.ConnConfig.DialFunc = o.dial
	}
	gate := newGate()
	cfg.BeforeConnect = gate.beforeConnect
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return gatedDB{}, fmt.Errorf("database: %w", err)
	}
	return gatedDB{pool: pool, gate: gate, ready: &readiness{check: o.check}}, nil
}

// Ping checks that the database answers (and that the start checks pass),
// through the gate.
func (h *handle) Ping(ctx context.Context) error { return h.db.Ping(ctx) }

// ReadingFromPrimary reports whether the read replica was unreachable at
// the last call and reads went to the primary (QUERYD_READ_FALLBACK
// primary): /healthz says so.
func (h *handle) ReadingFromPrimary() bool { return h.db.state != nil && h.db.state.on.Load() }

// Close closes the pools.
func (h *handle) Close() {
	h.pool.Close()
	if h.fallback != nil {
		h.fallback.Close()
	}
}

// readiness runs a handle's start checks until they pass once: the schema
// is at this binary's version, then the caller's check. Calls that find it
// not yet passed run it themselves, concurrently if need be (it only reads);
// its queries go through the gate like any other.
type readiness struct {
	ok    atomic.Bool
	check Check
}

func (r *readiness) ensure(ctx context.Context, db gatedDB) error {
	if r == nil || r.ok.Load() {
		return nil
	}
	v, err := migrate.CurrentVersion(ctx, db)
	switch {
	case IsUnreachable(err) || (err != nil && ctx.Err() != nil):
		return err
	case err != nil:
		return qerr.Unavailablef(err, "the database is not migrated for this queryd, or refused queryd's role ('ingestd migrate' applies the migrations; the server log has the error)")
	case v < schema.LatestVersion():
		return qerr.Unavailablef(fmt.Errorf("database at version %d, queryd needs %d: %w", v, schema.LatestVersion(), ErrSchemaTooOld),
			"the database is not migrated for this queryd ('ingestd migrate' applies the migrations)")
	}
	if r.check != nil {
		if err := r.check(ctx, db); err != nil {
			if IsUnreachable(err) || qerr.KindOf(err) != qerr.Internal || ctx.Err() != nil {
				return err
			}
			return qerr.Unavailablef(err, "the database refused queryd's start checks (the server log has the error)")
		}
	}
	r.ok.Store(true)
	return nil
}

// Hit is one chunk a search found, with what a citation needs.
type Hit struct {
	ChunkID    int64
	DocumentID int64
	Layer      string
	File       string
	Start, End int
	LineStart  int
	LineEnd    int
	Page       *int
	ClausePath string
	Text       string
	Score      float64
}

// Ref is the hit's span as a ref string, with the hash of its text.
func (h Hit) Ref() string {
	return schema.Ref{DocumentID: h.DocumentID, Start: h.Start, End: h.End}.WithText(h.Text).String()
}

// MsgReplicaUnreachable is what a caller is told when the read replica
// cannot be reached and reads do not fall back to the primary.
const MsgReplicaUnreachable = "the read replica (QUERYD_READ_DATABASE_URL) is unreachable: check that the standby is running, " +
	"or set QUERYD_READ_FALLBACK=primary to read from the primary meanwhile; retry in a moment"

// routedDB is a handle's database. Most handles have one pool (main), and
// routedDB passes their calls through. For a corpus on a read replica,
// a replica that cannot be reached fails with MsgReplicaUnreachable, or,
// with a fallback, the call goes to the primary instead: main's gate
// refuses at once while the replica is down and lets a probe through now
// and then, so the replica takes the reads back when it answers again.
type routedDB struct {
	main     gatedDB
	replica  bool
	fallback *gatedDB
	state    *fallbackState
}

// fallbackState tracks whether reads are on the primary, for note.
type fallbackState struct {
	on   atomic.Bool
	note func(error)
}

// failover reports whether a call that met err on the replica goes to the
// fallback.
func (d routedDB) failover(err error) bool {
	if d.fallback == nil || !IsUnreachable(err) {
		if d.state != nil && err == nil && d.state.on.CompareAndSwap(true, false) && d.state.note != nil {
			d.state.note(nil)
		}
		return false
	}
	if d.state.on.CompareAndSwap(false, true) && d.state.note != nil {
		d.state.note(err)
	}
	return true
}

// named gives an unreachable replica's error its own message.
func (d routedDB) named(err error) error {
	if !d.replica || d.fallback != nil || !IsUnreachable(err) || qerr.KindOf(err) != qerr.Internal {
		return err
	}
	e := &qerr.Error{Kind: qerr.Unavailable, Msg: MsgReplicaUnreachable, Err: err}
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		e.RetryAfter = ra.RetryAfter()
	}
	return e
}

func (d routedDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := d.main.Query(ctx, sql, args...)
	if d.replica && d.failover(err) {
		return d.fallback.Query(ctx, sql, args...)
	}
	return rows, d.named(err)
}

func (d routedDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	row := d.main.QueryRow(ctx, sql, args...)
	if !d.replica {
		return row
	}
	return rowFunc(func(dest ...any) error {
		err := row.Scan(dest...)
		if d.failover(err) {
			return d.fallback.QueryRow(ctx, sql, args...).Scan(dest...)
		}
		return d.named(err)
	})
}

func (d routedDB) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	tx, err := d.main.BeginTx(ctx, opts)
	if d.replica && d.failover(err) {
		return d.fallback.BeginTx(ctx, opts)
	}
	return tx, d.named(err)
}

func (d routedDB) Ping(ctx context.Context) error {
	err := d.main.Ping(ctx)
	if d.replica && d.failover(err) {
		return d.fallback.Ping(ctx)
	}
	return d.named(err)
}

func (d routedDB) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	br := d.main.SendBatch(ctx, b)
	if !d.replica {
		return br
	}
	return &routedBatch{BatchResults: br, d: d, ctx: ctx, b: b}
}

type rowFunc func(dest ...any) error

func (f rowFunc) Scan(dest ...any) error { return f(dest...) }

// routedBatch sends a batch again to the fallback when its first result
// shows that the replica could not be reached. Once a result has been
// read, the batch stays where it is.
type routedBatch struct {
	pgx.BatchResults
	d       routedDB
	ctx     context.Context
	b       *pgx.Batch
	started bool
}

// retry moves the batch to the fallback when err, met before anything was
// read, says that the replica was not reached.
func (r *routedBatch) retry(err error) bool {
	first := !r.started
	r.started = true
	if !first || !neverReached(err) || !r.d.failover(err) {
		return false
	}
	_ = r.BatchResults.Close()
	r.BatchResults = r.d.fallback.SendBatch(r.ctx, r.b)
	return true
}

// neverReached: the replica was not reached at all (the gate refused, or
// the connection was not made), so no result of the batch was read.
func neverReached(err error) bool {
	var ce *pgconn.ConnectError
	return errors.Is(err, ErrUnreachable) || errors.As(err, &ce)
}

func (r *routedBatch) Exec() (pgconn.CommandTag, error) {
	t, err := r.BatchResults.Exec()
	if r.retry(err) {
		t, err = r.BatchResults.Exec()
	}
	return t, r.d.named(err)
}

func (r *routedBatch) Query() (pgx.Rows, error) {
	rows, err := r.BatchResults.Query()
	if r.retry(err) {
		rows, err = r.BatchResults.Query()
	}
	return rows, r.d.named(err)
}

func (r *routedBatch) QueryRow() pgx.Row {
	return rowFunc(func(dest ...any) error {
		err := r.BatchResults.QueryRow().Scan(dest...)
		if r.retry(err) {
			err = r.BatchResults.QueryRow().Scan(dest...)
		}
		return r.d.named(err)
	})
}

func (r *routedBatch) Close() error {
	err := r.BatchResults.Close()
	if r.retry(err) {
		err = r.BatchResults.Close()
	}
	return r.d.named(err)
}
