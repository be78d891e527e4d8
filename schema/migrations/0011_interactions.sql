-- The ledger: what queryd itself records, starting with its interactions
-- (one row per answered tool call that asks to be recorded). queryd may add
-- rows and read them back; it may not change or remove one, and it still
-- may write nothing that ingestd keeps. Later ledger tables (feedback,
-- receipts) follow the same rule: created here by the schema's owner,
-- SELECT and INSERT granted to queryd, nothing more.
CREATE TABLE strata.interactions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    caller     text NOT NULL DEFAULT '',
    tool       text NOT NULL,
    question   text NOT NULL DEFAULT '',
    layers     text[] NOT NULL DEFAULT '{}',
    status     text NOT NULL,
    detail     jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(detail) = 'object')
);

-- The owner is the strata schema's owner, whoever runs the migration.
DO $$
DECLARE
    owner regrole := (SELECT nspowner::regrole FROM pg_catalog.pg_namespace WHERE nspname = 'strata');
BEGIN
    IF owner::oid <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER TABLE strata.interactions OWNER TO %s', owner);
    END IF;
END
$$;

-- An identity column takes its values without a grant on its sequence, so
-- INSERT on the table is all queryd needs; RETURNING id needs SELECT.
GRANT SELECT, INSERT ON strata.interactions TO queryd;
