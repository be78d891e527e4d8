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
}

// WithCheck adds a start check after the schema version's (queryd checks
// its database role with it). An error without a qerr kind is reported as
// unavailable.
func WithCheck(c Check) Option { return func(o *openOptions) { o.check = c } }

// WithReceiptKey makes a ledger sign the receipts it issues and check the
// signatures of those it reads.
func WithReceiptKey(k *ReceiptKey) Option { return func(o *openOptions) { o.receiptKey = k } }

// defaultConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout: an address that drops packets must not hold a request
// (and the gate's one probe) until the request timeout.
const defaultConnectTimeout = 5 * time.Second

// ErrSchemaTooOld is returned when the database has not been migrated to the
// version this binary needs.
var ErrSchemaTooOld = errors.New("database schema is older than this queryd: run 'ingestd migrate'")

// handle is what Corpus and Ledger share: a pool and its gate.
type handle struct {
	pool *pgxpool.Pool
	db   gatedDB
}

// newHandle makes the pool without connecting (pgxpool dials on first use)
// and puts it behind a gate of its own. params are extra run-time
// parameters of every connection.
func newHandle(url string, params map[string]string, opts []Option) (*handle, error) {
	o := openOptions{}
	for _, fn := range opts {
		fn(&o)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
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
		return nil, fmt.Errorf("database: %w", err)
	}
	r := &readiness{check: o.check}
	return &handle{pool: pool, db: gatedDB{pool: pool, gate: gate, ready: r}}, nil
}

// Ping checks that the database answers (and that the start checks pass),
// through the gate.
func (h *handle) Ping(ctx context.Context) error { return h.db.Ping(ctx) }

// Close closes the pool.
func (h *handle) Close() { h.pool.Close() }

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
