-- Receipts: what the server read when it checked a drafted answer (and,
-- later, when it quoted an extractive one). A receipt is written once and
-- never changed; queryd may add rows and read them, nothing more, like the
-- other ledger tables (0011).
CREATE TABLE strata.receipts (
    id         text PRIMARY KEY CHECK (id ~ '^rcpt_[0-9a-f]{32}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    caller     text NOT NULL DEFAULT '',
    tool       text NOT NULL,
    status     text NOT NULL,
    draft      text NOT NULL DEFAULT '',
    -- The passages as read: [{id, ref, layer, file, text, sha256}].
    passages   jsonb NOT NULL CHECK (jsonb_typeof(passages) = 'array'),
    checked    integer NOT NULL DEFAULT 0 CHECK (checked >= 0),
    -- The sentences that held nothing to check, scrubbed like the draft.
    unchecked  jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(unchecked) = 'array')
);

DO $$
DECLARE
    owner regrole := (SELECT nspowner::regrole FROM pg_catalog.pg_namespace WHERE nspname = 'strata');
BEGIN
    IF owner::oid <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER TABLE strata.receipts OWNER TO %s', owner);
    END IF;
END
$$;

GRANT SELECT, INSERT ON strata.receipts TO queryd;
