package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// errWritableRole marks a connection whose role could change documents.
var errWritableRole = errors.New("queryd's database role can change documents")

// roleCheck is the start check of queryd's database handles (store.WithCheck):
// checkRole, its refusal logged when log is set and reported to callers as
// unavailable.
func roleCheck(allowOwner bool, log *slog.Logger) store.Check {
	return func(ctx context.Context, q store.Querier) error {
		err := checkRole(ctx, q, allowOwner)
		if errors.Is(err, errWritableRole) {
			if log != nil {
				log.Error("refusing to run as this database role", slog.String("error", err.Error()))
			}
			return qerr.Unavailablef(err, "queryd's database role is refused (the server log says why)")
		}
		return err
	}
}

// checkRole refuses a connection whose role could write what ingestd keeps:
// a superuser, a member of the strata schema's owner, or a role granted any
// write on a strata table other than INSERT on the ledger tables
// (store.LedgerTables), where queryd records its interactions.
// default_transaction_read_only alone does not stop such a role (BEGIN READ
// WRITE lifts it), so queryd runs as the queryd role unless
// QUERYD_ALLOW_OWNER says otherwise.
func checkRole(ctx context.Context, q store.Querier, allowOwner bool) error {
	var (
		role, writable string
		super, owner   bool
	)
	// writable is the first strata table the role may write beyond that.
	err := q.QueryRow(ctx, `
		SELECT current_user,
		       r.rolsuper,
		       coalesce((SELECT pg_has_role(current_user, n.nspowner, 'MEMBER')
		                   FROM pg_catalog.pg_namespace n WHERE n.nspname = 'strata'), false),
		       coalesce((SELECT c.relname::text
		                   FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		                  WHERE n.nspname = 'strata' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		                    AND has_table_privilege(current_user, c.oid,
		                        CASE WHEN c.relname = ANY($1) THEN 'UPDATE, DELETE, TRUNCATE'
		                             ELSE 'INSERT, UPDATE, DELETE, TRUNCATE' END)
		                  ORDER BY c.relname LIMIT 1), '')
		  FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`, store.LedgerTables()).Scan(&role, &super, &owner, &writable)
	if err != nil {
		return fmt.Errorf("check queryd's database role: %w", err)
	}
	var why string
	switch {
	case super:
		why = "is a superuser"
	case owner:
		why = "owns the strata schema"
	case writable != "":
		why = fmt.Sprintf("may write strata.%s", writable)
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
