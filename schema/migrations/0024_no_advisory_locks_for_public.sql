-- Advisory locks are ingestd's: a worker's presence ("WKR\0"), one layer's
-- embedding ("EMBD"), one model's HNSW build ("HNSW") and the migrator's
-- own lock (jobs/locks.go, schema/migrate). Their keys are predictable, and
-- the advisory-lock functions are executable by PUBLIC by default, so the
-- read-only queryd role could take layer 1's embedding lock and hold it:
-- `ingestd add --wait` then never finished (issue 32, item 13).
--
-- Every advisory-lock function (session and transaction level, shared and
-- exclusive, the try- and unlock variants, both key forms) is taken from
-- PUBLIC; the role that runs the migrations, which is the role ingestd
-- connects as (DATABASE_URL), is given them back by name, as 0010 does
-- for TEMPORARY. A superuser is not bound by either. A PUBLIC privilege
-- cannot be withheld from one role alone, so revoking from PUBLIC is the
-- only way to keep queryd out; queryd itself takes no advisory lock.
--
-- What the queryd role can still do besides reading and its ledger INSERTs
-- (queryd/internal/app TestQuerydRoleCannotTakeIngestdLocks): LISTEN and
-- NOTIFY on any channel (StrataKB uses none), and ALTER ROLE queryd SET …
-- on its own settings (which cannot lift a privilege or turn off
-- default_transaction_read_only for the pool, which queryd sets itself).
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'pg_catalog' AND p.proname LIKE 'pg\_%advisory\_%'
        ORDER BY 1
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, current_user);
    END LOOP;
END
$$;
