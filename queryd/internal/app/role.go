package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// errWritableRole marks a connection whose role could change documents.
var errWritableRole = errors.New("queryd's database role can change documents")

// roleQuerier is what checkRole needs of a pool or connection.
type roleQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkRole refuses a connection whose role could write what ingestd keeps:
// a superuser, a member of the strata schema's owner, or a role granted any
// write on the document tables. default_transaction_read_only alone does not
// stop such a role (BEGIN READ WRITE lifts it), so queryd runs as the
// read-only queryd role unless QUERYD_ALLOW_OWNER says otherwise.
func checkRole(ctx context.Context, q roleQuerier, allowOwner bool) error {
	var (
		role                   string
		super, owner, canWrite bool
	)
	err := q.QueryRow(ctx, `
		SELECT current_user,
		       r.rolsuper,
		       coalesce((SELECT pg_has_role(current_user, n.nspowner, 'MEMBER')
		                   FROM pg_catalog.pg_namespace n WHERE n.nspname = 'strata'), false),
		       coalesce((SELECT bool_or(has_table_privilege(current_user, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))
		                   FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		                  WHERE n.nspname = 'strata' AND c.relname IN ('layers', 'documents', 'pages', 'sections', 'chunks', 'embeddings')), false)
		  FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`).Scan(&role, &super, &owner, &canWrite)
	if err != nil {
		return fmt.Errorf("check queryd's database role: %w", err)
	}
	var why string
	switch {
	case super:
		why = "is a superuser"
	case owner:
		why = "owns the strata schema"
	case canWrite:
		why = "may write the document tables"
	default:
		return nil
	}
	if allowOwner {
		return nil
	}
	return fmt.Errorf("%w: role %q %s; connect as the read-only queryd role instead: set QUERYD_DATABASE_URL "+
		"to its connection string (`make db-start` writes one to var/db.env), or set QUERYD_ALLOW_OWNER=true to accept this role",
		errWritableRole, role, why)
}
