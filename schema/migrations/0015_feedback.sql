-- Feedback: a caller's rating of one strata_ask answer (strata_feedback).
-- A ledger table like interactions (0011) and receipts (0013): created by
-- the schema's owner, and queryd may add rows and read them, nothing more.
-- The number skips 0014, which a parallel change may take.
CREATE TABLE strata.feedback (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at     timestamptz NOT NULL DEFAULT now(),
    interaction_id bigint NOT NULL REFERENCES strata.interactions (id),
    caller         text NOT NULL DEFAULT '',
    helpful        boolean NOT NULL,
    -- The layer the caller says the question belongs to; '' when none was
    -- given or the layer named does not exist.
    correct_layer  text NOT NULL DEFAULT '',
    -- The wording that would have worked, scrubbed unless raw queries are
    -- kept; '' when none.
    better_query   text NOT NULL DEFAULT '',
    -- {"<chunk id>": "useful" | "wrong" | "outdated"}: passage ids are
    -- resolved to chunk ids before the row is written.
    chunk_ratings  jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(chunk_ratings) = 'object')
);

CREATE INDEX feedback_interaction_idx ON strata.feedback (interaction_id);

DO $$
DECLARE
    owner regrole := (SELECT nspowner::regrole FROM pg_catalog.pg_namespace WHERE nspname = 'strata');
BEGIN
    IF owner::oid <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER TABLE strata.feedback OWNER TO %s', owner);
    END IF;
END
$$;

GRANT SELECT, INSERT ON strata.feedback TO queryd;
