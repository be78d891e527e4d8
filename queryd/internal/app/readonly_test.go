package app

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/jobs"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// asQuerydRole returns a migrated database and its URL rewritten to connect
// as the read-only queryd role.
func asQuerydRole(t *testing.T) (owner *pgxpool.Pool, querydURL string) {
	t.Helper()
	owner, ownerURL := dbtest.NewPool(t)
	if err := jobs.Migrate(context.Background(), owner); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return owner, dbtest.QuerydURL(t, ownerURL)
}

// TestQuerydRoleCannotWrite proves that queryd's database role, not just its
// read-only transactions, keeps it from changing documents: a transaction
// that asks for READ WRITE is refused by PostgreSQL's privileges.
func TestQuerydRoleCannotWrite(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	var layer, doc int64
	if err := owner.QueryRow(ctx, `INSERT INTO strata.layers (name, root) VALUES ('handbook', '/docs') RETURNING id`).Scan(&layer); err != nil {
		t.Fatal(err)
	}
	if err := owner.QueryRow(ctx, `INSERT INTO strata.documents (layer_id, path, status, body) VALUES ($1, 'a.md', 'ok', 'Leave carries over.') RETURNING id`, layer).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec(ctx, `INSERT INTO strata.chunks (document_id, layer_id, ord, start_off, end_off, line_start, line_end, text, content_hash)
		VALUES ($1, $2, 0, 0, 19, 1, 1, 'Leave carries over.', '\x00')`, doc, layer); err != nil {
		t.Fatal(err)
	}

	st, err := store.OpenCorpus(ctx, qurl)
	if err != nil {
		t.Fatalf("queryd's corpus as the queryd role: %v", err)
	}
	defer st.Close()
	// Reading works.
	if layers, err := st.Layers(ctx); err != nil || len(layers) != 1 {
		t.Fatalf("read layers as queryd: %v %v", layers, err)
	}
	if _, err := searchpkg.New(st).Search(ctx, searchpkg.Request{Query: "leave carries over"}); err != nil {
		t.Fatalf("search as queryd: %v", err)
	}
	// So does the one write queryd has: its ledger.
	ledger, err := store.OpenLedger(ctx, qurl)
	if err != nil {
		t.Fatalf("queryd's ledger as the queryd role: %v", err)
	}
	defer ledger.Close()
	if _, err := ledger.RecordInteraction(ctx, store.Interaction{Tool: "strata_search", Status: "ok"}); err != nil {
		t.Fatalf("record an interaction as queryd: %v", err)
	}
	// Writing anything else does not, even in a transaction that asks to
	// write, on a plain connection as the role (no store in between).
	conn, err := pgx.Connect(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`UPDATE strata.chunks SET text = 'Leave never carries over.'`,
		`DELETE FROM strata.chunks`,
		`INSERT INTO strata.layers (name, root) VALUES ('evil', '/')`,
		`UPDATE strata.documents SET body = ''`,
		`TRUNCATE strata.sections`,
		`INSERT INTO strata.embeddings SELECT * FROM strata.embeddings`,
		`UPDATE strata.model_search_params SET rrf_k = 1`,
		`DELETE FROM strata.schema_migrations`,
		`UPDATE strata.interactions SET status = 'forged'`,
		`DELETE FROM strata.interactions`,
		`INSERT INTO strata.learned_synonyms (term, synonym, rule_version, usage_count, callers) VALUES ('a', 'b', 2, 2, 2)`,
		`DELETE FROM strata.learned_synonyms`,
		`INSERT INTO strata.learned_rewrites (terms, question_key, question, rewrite, rule_version, proofs, callers)
			VALUES ('{a}', 'a', 'a', 'b', 1, 1, 1)`,
		`UPDATE strata.learned_rewrites SET use_count = 0`,
		`INSERT INTO strata.learned_affinities (term, layer, rule_version, evidence) VALUES ('a', 'handbook', 1, 9)`,
		`DELETE FROM strata.learned_affinities`,
		`UPDATE strata.promoter_runs SET interactions = 0`,
		`UPDATE strata.feedback SET helpful = true`,
		`UPDATE strata.receipts SET checks = '[]'`,
		`DELETE FROM strata.receipts`,
		`CREATE TABLE strata.evil (x int)`,
		`CREATE TABLE public.evil (x int)`,
		`CREATE TEMP TABLE evil (x int)`,
		`CREATE TEMPORARY TABLE evil AS SELECT * FROM strata.chunks`,
		`SELECT lo_create(0)`,
		`SELECT lo_creat(-1)`,
		`SELECT lo_from_bytea(0, 'evil')`,
		`SELECT lo_import('/etc/passwd')`,
	} {
		err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadWrite}, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, stmt)
			return err
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as queryd: %v, want permission denied (42501)", stmt, err)
		}
	}
	// The role's writes are INSERT on the ledger tables and nothing else.
	rows, err := owner.Query(ctx, `SELECT c.relname || ' ' || p.priv
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p(priv)
		WHERE n.nspname = 'strata' AND c.relkind IN ('r', 'p') AND has_table_privilege('queryd', c.oid, p.priv)
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	writes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tbl := range store.LedgerTables() {
		want = append(want, tbl+" INSERT")
	}
	if strings.Join(writes, ", ") != strings.Join(want, ", ") {
		t.Errorf("queryd may write %q, want only %q", writes, want)
	}
	var text string
	if err := owner.QueryRow(ctx, `SELECT text FROM strata.chunks`).Scan(&text); err != nil || text != "Leave carries over." {
		t.Errorf("the chunk changed: %q %v", text, err)
	}
}

// TestQuerydRoleReadsLaterTables checks the default privileges: a table a
// later migration adds is readable by queryd, and only readable.
func TestQuerydRoleReadsLaterTables(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	if _, err := owner.Exec(ctx, `CREATE TABLE strata.later_table (x int); INSERT INTO strata.later_table VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var x int
	if err := conn.QueryRow(ctx, `SELECT x FROM strata.later_table`).Scan(&x); err != nil || x != 1 {
		t.Errorf("select a later table as queryd: %v", err)
	}
	_, err = conn.Exec(ctx, `INSERT INTO strata.later_table VALUES (2)`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("insert into a later table as queryd: %v, want permission denied", err)
	}
}

func TestQuerydDatabaseURLWins(t *testing.T) {
	env := map[string]string{"QUERYD_DATABASE_URL": "postgres://queryd@db/x", "DATABASE_URL": "postgres://owner@db/x"}
	c, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil || c.DatabaseURL != env["QUERYD_DATABASE_URL"] {
		t.Errorf("QUERYD_DATABASE_URL set: %q %v", c.DatabaseURL, err)
	}
	delete(env, "QUERYD_DATABASE_URL")
	if c, err := LoadConfig(func(k string) string { return env[k] }); err != nil || c.DatabaseURL != env["DATABASE_URL"] {
		t.Errorf("fallback to DATABASE_URL: %q %v", c.DatabaseURL, err)
	}
}

// TestQuerydRefusesWritableRole checks the start-up guard: connected as a
// superuser or as a role that may write documents, `queryd search` and
// `queryd serve` stop with an error that says how to fix it, unless
// QUERYD_ALLOW_OWNER=true; as the queryd role they run.
func TestQuerydRefusesWritableRole(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	ownerURL := owner.Config().ConnString()
	// A role that is neither superuser nor owner but was granted a write.
	if _, err := owner.Exec(ctx, `DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'strata_writer_test') THEN
			CREATE ROLE strata_writer_test LOGIN;
		END IF; END $$;
		GRANT USAGE ON SCHEMA strata TO strata_writer_test;
		GRANT SELECT ON ALL TABLES IN SCHEMA strata TO strata_writer_test;
		GRANT UPDATE ON strata.chunks TO strata_writer_test;
		DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'strata_ledger_editor_test') THEN
			CREATE ROLE strata_ledger_editor_test LOGIN;
		END IF; END $$;
		GRANT USAGE ON SCHEMA strata TO strata_ledger_editor_test;
		GRANT SELECT ON ALL TABLES IN SCHEMA strata TO strata_ledger_editor_test;
		GRANT INSERT, UPDATE ON strata.interactions TO strata_ledger_editor_test`); err != nil {
		t.Fatal(err)
	}
	as := func(role string) string {
		u, err := url.Parse(ownerURL)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role)
		return u.String()
	}
	writerURL := as("strata_writer_test")

	run := func(dbURL string, extra map[string]string, args ...string) (string, error) {
		env := map[string]string{"QUERYD_DATABASE_URL": dbURL, "STRATA_MODEL_DIR": t.TempDir(), "QUERYD_ADDR": "127.0.0.1:0"}
		for k, v := range extra {
			env[k] = v
		}
		var out, errOut strings.Builder
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		err := Run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	for _, tc := range []struct {
		name, url, why string
	}{
		{"superuser", ownerURL, "is a superuser"},
		{"writer", writerURL, "may write strata.chunks"},
		// INSERT on the ledger is queryd's; changing what it recorded is not.
		{"ledger editor", as("strata_ledger_editor_test"), "may write strata.interactions"},
	} {
		_, err := run(tc.url, nil, "search", "leave")
		if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "QUERYD_ALLOW_OWNER=true") ||
			!strings.Contains(err.Error(), "QUERYD_DATABASE_URL") {
			t.Errorf("search as %s: %v, want a refusal saying it %s and how to fix it", tc.name, err, tc.why)
		}
		if _, err := run(tc.url, nil, "serve"); !errors.Is(err, errWritableRole) {
			t.Errorf("serve as %s: %v, want a refusal at start", tc.name, err)
		}
		if out, err := run(tc.url, map[string]string{"QUERYD_ALLOW_OWNER": "true"}, "search", "leave"); err != nil {
			t.Errorf("search as %s with QUERYD_ALLOW_OWNER=true: %v\n%s", tc.name, err, out)
		}
	}
	if out, err := run(qurl, nil, "search", "leave"); err != nil {
		t.Errorf("search as the queryd role: %v\n%s", err, out)
	}
}

// TestReadDatabaseURLServesReads: with QUERYD_READ_DATABASE_URL set, the
// searches read there (a replica, here another database holding the
// documents), not from QUERYD_DATABASE_URL.
func TestReadDatabaseURLServesReads(t *testing.T) {
	ctx := context.Background()
	replica, replicaURL := asQuerydRole(t)
	_, primaryURL := asQuerydRole(t)
	var layer, doc int64
	if err := replica.QueryRow(ctx, `INSERT INTO strata.layers (name, root) VALUES ('handbook', '/docs') RETURNING id`).Scan(&layer); err != nil {
		t.Fatal(err)
	}
	if err := replica.QueryRow(ctx, `INSERT INTO strata.documents (layer_id, path, status, body) VALUES ($1, 'a.md', 'ok', 'Leave carries over.') RETURNING id`, layer).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if _, err := replica.Exec(ctx, `INSERT INTO strata.chunks (document_id, layer_id, ord, start_off, end_off, line_start, line_end, text, content_hash)
		VALUES ($1, $2, 0, 0, 19, 1, 1, 'Leave carries over.', '\x00')`, doc, layer); err != nil {
		t.Fatal(err)
	}
	search := func(env map[string]string) string {
		env["STRATA_MODEL_DIR"] = t.TempDir()
		var out, errOut strings.Builder
		if err := Run(ctx, []string{"search", "leave"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut); err != nil {
			t.Fatalf("search with %v: %v\n%s", env, err, errOut.String())
		}
		return out.String()
	}
	if out := search(map[string]string{"QUERYD_DATABASE_URL": primaryURL, "QUERYD_READ_DATABASE_URL": replicaURL}); !strings.Contains(out, "a.md") {
		t.Errorf("search with a read database: the replica's document is not found:\n%s", out)
	}
	if out := search(map[string]string{"QUERYD_DATABASE_URL": primaryURL}); strings.Contains(out, "a.md") {
		t.Errorf("search without a read database found the other database's document:\n%s", out)
	}
}

// TestQuerydRoleCannotTakeIngestdLocks: the queryd role could take
// ingestd's advisory locks (their keys are predictable from jobs/locks.go)
// and hold them, and `ingestd add --wait` then never finished (issue 32,
// item 13). Migration 0024 takes every advisory-lock function from PUBLIC:
// each form is refused, no advisory function is left to the role, and the
// owner that migrated keeps them. The test also pins what the role can
// still do beyond reading, which the README lists: NOTIFY, and ALTER ROLE
// … SET on itself.
func TestQuerydRoleCannotTakeIngestdLocks(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	conn, err := pgx.Connect(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	embedLayer1 := int64(0x454d4244)<<32 | 1 // "EMBD", layer 1 (jobs/locks.go)
	for _, stmt := range []string{
		`SELECT pg_advisory_lock($1)`,
		`SELECT pg_try_advisory_lock($1)`,
		`SELECT pg_advisory_lock_shared($1)`,
		`SELECT pg_try_advisory_lock_shared($1)`,
		`SELECT pg_advisory_xact_lock($1)`,
		`SELECT pg_try_advisory_xact_lock($1)`,
		`SELECT pg_advisory_unlock($1)`,
		`SELECT pg_advisory_lock(($1::bigint >> 32)::int, ($1::bigint & 1)::int)`,
		`SELECT pg_try_advisory_lock(($1::bigint >> 32)::int, ($1::bigint & 1)::int)`,
		`SELECT pg_advisory_unlock_all()`,
	} {
		args := []any{embedLayer1}
		if !strings.Contains(stmt, "$1") {
			args = nil
		}
		_, err := conn.Exec(ctx, stmt, args...)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as queryd: %v, want permission denied (42501)", stmt, err)
		}
	}
	var left []string
	rows, err := owner.Query(ctx, `SELECT p.oid::regprocedure::text FROM pg_proc p
		WHERE p.proname LIKE '%advisory%' AND has_function_privilege('queryd', p.oid, 'EXECUTE') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	if left, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("the queryd role may still run %v", left)
	}
	// The owner (ingestd's role, which ran the migrations) keeps them.
	var got bool
	if err := owner.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, embedLayer1).Scan(&got); err != nil || !got {
		t.Errorf("the owner takes an advisory lock: %v %v", got, err)
	}

	// What the role can still do, as the README says: NOTIFY (StrataKB
	// listens on no channel) and its own session defaults.
	if _, err := conn.Exec(ctx, `NOTIFY strata_test_channel, 'hello'`); err != nil {
		t.Errorf("NOTIFY as queryd: %v (the README says the role can)", err)
	}
	if _, err := conn.Exec(ctx, `ALTER ROLE queryd SET application_name = 'queryd-test'`); err != nil {
		t.Errorf("ALTER ROLE queryd SET as queryd: %v (the README says the role can)", err)
	} else if _, err := conn.Exec(ctx, `ALTER ROLE queryd RESET application_name`); err != nil {
		t.Errorf("ALTER ROLE queryd RESET as queryd: %v", err)
	}
	// But not another role's, nor a privilege.
	for _, stmt := range []string{`ALTER ROLE postgres SET application_name = 'evil'`, `ALTER ROLE queryd SUPERUSER`, `ALTER ROLE queryd CREATEROLE`} {
		if _, err := conn.Exec(ctx, stmt); err == nil {
			t.Errorf("%s as queryd succeeded", stmt)
		}
	}
}
