// Package store is queryd's read access to the documents ingestd keeps. It
// has no method that changes a document, section or chunk, and its
// connections default to read-only transactions.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/schema/migrate"
)

// Store reads documents, sections and chunks. Its queries go through a
// reconnect gate (see Gate), so that while the database is down a burst of
// requests is refused at once instead of dialling once each.
type Store struct {
	pool *pgxpool.Pool
	db   gatedDB
}

// Option changes how Open connects.
type Option func(*openOptions)

type openOptions struct {
	gate *Gate
	dial pgconn.DialFunc // tests count dials with it
}

// WithGate makes Open and the store it opens share g: a caller that opens
// the store lazily, retrying on every request until the database answers,
// passes the same gate each time, so that those attempts back off too.
func WithGate(g *Gate) Option { return func(o *openOptions) { o.gate = g } }

// defaultConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout: an address that drops packets must not hold a request
// (and the gate's one probe) until the request timeout.
const defaultConnectTimeout = 5 * time.Second

// ErrSchemaTooOld is returned when the database has not been migrated to the
// version this binary needs.
var ErrSchemaTooOld = errors.New("database schema is older than this queryd: run 'ingestd migrate'")

// Open connects with read-only transactions by default and checks the schema
// version. While the gate (WithGate, else a gate of the store's own) is
// closed after a recent failure, it fails at once with an error matching
// ErrUnreachable, without dialling.
func Open(ctx context.Context, url string, opts ...Option) (st *Store, err error) {
	o := openOptions{}
	for _, fn := range opts {
		fn(&o)
	}
	if o.gate == nil {
		o.gate = NewGate()
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
	cfg.BeforeConnect = o.gate.beforeConnect
	probe, err := o.gate.enter()
	if err != nil {
		return nil, err
	}
	defer func() { o.gate.done(ctx, probe, err) }()
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	// Search statements are prepared once and run with new values; a
	// generic plan cannot see the query vector's LIMIT or the tsquery, and
	// picks a sequential scan and a sort instead of the HNSW or GIN index.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	v, err := migrate.CurrentVersion(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("database unreachable or not migrated (run 'make db-start' and 'ingestd migrate'): %w", err)
	}
	if v < schema.LatestVersion() {
		pool.Close()
		return nil, fmt.Errorf("database at version %d, queryd needs %d: %w", v, schema.LatestVersion(), ErrSchemaTooOld)
	}
	return &Store{pool: pool, db: gatedDB{pool: pool, gate: o.gate}}, nil
}

// Ping checks that the database answers, through the gate.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool exposes the pool to tests that check the read-only guarantee.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

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

// Ref is the hit's span as a ref string.
func (h Hit) Ref() string {
	return schema.Ref{DocumentID: h.DocumentID, Start: h.Start, End: h.End}.String()
}

// LayerNames returns the names of every layer.
func (s *Store) LayerNames(ctx context.Context) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT name FROM strata.layers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	return names, nil
}

// SearchText runs PostgreSQL full-text search over the chunks of the given
// layers (all when empty), best first. A chunk matches when it holds any of
// the query's words; ts_rank_cd ranks those holding more of them, closer
// together, first.
func (s *Store) SearchText(ctx context.Context, query string, layers []string, limit int) ([]Hit, error) {
	rows, err := s.db.Query(ctx, `
		SELECT c.id, c.document_id, l.name, d.path, c.start_off, c.end_off, c.line_start, c.line_end,
			c.page, c.clause_path, c.text, ts_rank_cd(c.tsv, query.q, 32) AS score
		FROM strata.chunks c
		JOIN strata.documents d ON d.id = c.document_id
		JOIN strata.layers l ON l.id = c.layer_id,
			(SELECT replace(plainto_tsquery('english', $1)::text, ' & ', ' | ')::tsquery AS q) query
		WHERE c.tsv @@ query.q AND (coalesce(cardinality($2::text[]), 0) = 0 OR l.name = ANY($2))
		ORDER BY score DESC, c.id
		LIMIT $3`, query, layers, limit)
	if err != nil {
		return nil, fmt.Errorf("full-text search: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.ChunkID, &h.DocumentID, &h.Layer, &h.File, &h.Start, &h.End, &h.LineStart,
			&h.LineEnd, &h.Page, &h.ClausePath, &h.Text, &h.Score); err != nil {
			return nil, fmt.Errorf("full-text search: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
