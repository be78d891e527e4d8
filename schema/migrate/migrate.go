// Package migrate applies the product's embedded SQL migrations (package
// schema) to a PostgreSQL database. It is kept apart from schema so that the
// pure packages, which import schema's types, never depend on pgx.
package migrate

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/schema"
)

// migrationLock is the advisory lock key that serialises concurrent migrators.
const migrationLock = 0x5374726174614b42 // "StrataKB"

// Migrate applies the product's migrations that the database does not have
// yet, each in its own transaction, under an advisory lock so that several
// daemons starting at once migrate exactly once. It returns the versions it
// applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	ms, err := schema.Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLock)); err != nil {
		return nil, fmt.Errorf("migrate: take lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrationLock)) //nolint:errcheck

	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema.DBSchema+`;
		CREATE TABLE IF NOT EXISTS `+schema.DBSchema+`.schema_migrations (
			version integer PRIMARY KEY,
			name text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: create migrations table: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT version FROM "+schema.DBSchema+".schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate: read applied versions: %w", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("migrate: read applied versions: %w", err)
	}
	for _, v := range vs {
		applied[v] = true
	}
	var done []int
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+schema.DBSchema+".schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		done = append(done, m.Version)
	}
	return done, nil
}

// CurrentVersion returns the newest migration version applied to the
// database, or 0 when none is.
func CurrentVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+schema.DBSchema+`.schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
