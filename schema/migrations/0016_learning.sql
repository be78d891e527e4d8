-- What the promoter (a River job in ingestd, the owner) learns from the
-- recorded interactions; queryd only reads it (SELECT, nothing more).
CREATE TABLE strata.learned_synonyms (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- term is the content word of a question that its rewording dropped;
    -- synonym the words the rewording used instead.
    term         text NOT NULL CHECK (term <> ''),
    synonym      text NOT NULL CHECK (synonym <> ''),
    -- The layer the rewording searched alone; '' for no layer.
    layer        text NOT NULL DEFAULT '',
    rule_version integer NOT NULL,
    -- How often the pair was seen in the promoter's lookback window, and
    -- by how many different callers.
    usage_count  integer NOT NULL CHECK (usage_count > 0),
    callers      integer NOT NULL CHECK (callers > 0),
    learned_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (term, synonym, layer)
);

-- One row per promoter run.
CREATE TABLE strata.promoter_runs (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz NOT NULL DEFAULT now(),
    -- The newest interaction the run read: the next run counts new ones
    -- from here.
    last_interaction_id bigint NOT NULL DEFAULT 0,
    interactions        integer NOT NULL DEFAULT 0,
    pairs_seen          integer NOT NULL DEFAULT 0,
    synonyms_learned    integer NOT NULL DEFAULT 0,
    synonyms_deleted    integer NOT NULL DEFAULT 0,
    resets_applied      integer NOT NULL DEFAULT 0,
    rule_version        integer NOT NULL
);

DO $$
DECLARE
    owner regrole := (SELECT nspowner::regrole FROM pg_catalog.pg_namespace WHERE nspname = 'strata');
BEGIN
    IF owner::oid <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER TABLE strata.learned_synonyms OWNER TO %s', owner);
        EXECUTE format('ALTER TABLE strata.promoter_runs OWNER TO %s', owner);
    END IF;
END
$$;

GRANT SELECT ON strata.learned_synonyms, strata.promoter_runs TO queryd;

-- queryd records a strata_reset_learning request as an interaction (it may
-- only insert); reads of learned pairs skip those a later reset covers.
CREATE INDEX interactions_resets_idx ON strata.interactions (created_at) WHERE tool = 'strata_reset_learning';
