-- Proven rewrites and layer affinities, learned by the promoter (a River
-- job in ingestd, the owner) from the recorded interactions and ratings;
-- queryd only reads them (SELECT, nothing more), like learned_synonyms
-- (0016).
CREATE TABLE strata.learned_rewrites (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The terms (learn.Terms: stemmed content words, sorted) of the
    -- question that missed; a question "like" them (learn.Like) gets the
    -- rewrite. question_key is them joined by spaces.
    terms         text[] NOT NULL CHECK (cardinality(terms) > 0),
    question_key  text NOT NULL,
    -- One wording of that question, as recorded (scrubbed unless raw
    -- queries are kept), for the stats.
    question      text NOT NULL,
    -- The rewording that then found an answer.
    rewrite       text NOT NULL CHECK (rewrite <> ''),
    -- The layer the rewording searched alone; '' for no layer.
    layer         text NOT NULL DEFAULT '',
    rule_version  integer NOT NULL,
    -- Evidence in the promoter's lookback window: how often the rewording
    -- was proven, by how many callers; how often strata_ask used it and
    -- how often that use found an answer; the last use.
    proofs        integer NOT NULL CHECK (proofs > 0),
    callers       integer NOT NULL CHECK (callers > 0),
    use_count     integer NOT NULL DEFAULT 0,
    success_count integer NOT NULL DEFAULT 0,
    last_used_at  timestamptz,
    learned_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (question_key, rewrite, layer)
);
CREATE INDEX learned_rewrites_terms_idx ON strata.learned_rewrites USING gin (terms);

-- Which layers a kind of question belongs to: evidence per term (a stemmed
-- content word) and layer, from layer switches, correct_layer ratings and
-- helpful answers.
CREATE TABLE strata.learned_affinities (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    term         text NOT NULL CHECK (term <> ''),
    layer        text NOT NULL CHECK (layer <> ''),
    rule_version integer NOT NULL,
    evidence     integer NOT NULL CHECK (evidence > 0),
    switches     integer NOT NULL DEFAULT 0,
    corrections  integer NOT NULL DEFAULT 0,
    helpful      integer NOT NULL DEFAULT 0,
    learned_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (term, layer)
);

-- What each promoter run did with them, and the ratings it read.
ALTER TABLE strata.promoter_runs
    ADD COLUMN ratings_read       integer NOT NULL DEFAULT 0,
    ADD COLUMN rewrites_learned   integer NOT NULL DEFAULT 0,
    ADD COLUMN rewrites_deleted   integer NOT NULL DEFAULT 0,
    ADD COLUMN affinities_learned integer NOT NULL DEFAULT 0,
    ADD COLUMN affinities_deleted integer NOT NULL DEFAULT 0;

DO $$
DECLARE
    owner regrole := (SELECT nspowner::regrole FROM pg_catalog.pg_namespace WHERE nspname = 'strata');
BEGIN
    IF owner::oid <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER TABLE strata.learned_rewrites OWNER TO %s', owner);
        EXECUTE format('ALTER TABLE strata.learned_affinities OWNER TO %s', owner);
    END IF;
END
$$;

GRANT SELECT ON strata.learned_rewrites, strata.learned_affinities TO queryd;
