-- Retrieval: what queryd's BM25 scoring needs (each chunk's length in
-- lexemes, per-layer chunk counts and lengths, per-layer document
-- frequencies of every lexeme), kept current by statement triggers on
-- strata.chunks, and per-model search parameters (fusion weights, HNSW
-- ef_search, confidence marks) measured for each embedding model.

-- tsv_length counts a tsvector's lexeme occurrences (a stripped lexeme counts
-- once): BM25's document length.
CREATE FUNCTION strata.tsv_length(tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer FROM unnest($1) $$;

-- A generated column cannot read another one, so the length is computed from
-- the same to_tsvector expression as tsv.
ALTER TABLE strata.chunks
    ADD COLUMN tsv_len integer GENERATED ALWAYS AS (strata.tsv_length(to_tsvector('english', text))) STORED;

-- Per layer: how many chunks and how many lexeme occurrences in all
-- (average length = total_len / chunks), and when its chunks last changed
-- (queryd's result cache compares it). No foreign key: the rows of a deleted
-- layer are harmless and refresh_lexical_stats removes them.
CREATE TABLE strata.lexical_layer_stats (
    layer_id   bigint PRIMARY KEY,
    chunks     bigint NOT NULL DEFAULT 0,
    total_len  bigint NOT NULL DEFAULT 0,
    changed_at timestamptz NOT NULL DEFAULT now()
);

-- Per layer and lexeme: in how many chunks the lexeme occurs. The key serves
-- the query's lookup (lexeme = ANY(query lexemes) AND layer_id = ANY(layers)).
CREATE TABLE strata.lexeme_stats (
    lexeme   text NOT NULL,
    layer_id bigint NOT NULL,
    df       integer NOT NULL,
    PRIMARY KEY (lexeme, layer_id)
);

-- Every statement that changes chunks first updates its layers' rows in
-- lexical_layer_stats, in layer order. That row lock serialises the
-- statistics updates of one layer's concurrent ingest transactions, so their
-- updates of lexeme_stats never deadlock; different layers touch different
-- rows.
CREATE FUNCTION strata.chunks_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO strata.lexical_layer_stats AS s (layer_id, chunks, total_len, changed_at)
    SELECT layer_id, count(*), coalesce(sum(tsv_len), 0), now()
    FROM new_chunks GROUP BY layer_id ORDER BY layer_id
    ON CONFLICT (layer_id) DO UPDATE SET chunks = s.chunks + EXCLUDED.chunks,
        total_len = s.total_len + EXCLUDED.total_len, changed_at = now();
    INSERT INTO strata.lexeme_stats AS s (lexeme, layer_id, df)
    SELECT u.lexeme, n.layer_id, count(*)
    FROM new_chunks n, unnest(n.tsv) u
    GROUP BY u.lexeme, n.layer_id ORDER BY u.lexeme, n.layer_id
    ON CONFLICT (lexeme, layer_id) DO UPDATE SET df = s.df + EXCLUDED.df;
    RETURN NULL;
END $$;

CREATE FUNCTION strata.chunks_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE strata.lexical_layer_stats s SET chunks = greatest(s.chunks - d.n, 0),
        total_len = greatest(s.total_len - d.len, 0), changed_at = now()
    FROM (SELECT layer_id, count(*) AS n, coalesce(sum(tsv_len), 0) AS len
          FROM old_chunks GROUP BY layer_id) d
    WHERE s.layer_id = d.layer_id;
    UPDATE strata.lexeme_stats s SET df = s.df - d.n
    FROM (SELECT u.lexeme, o.layer_id, count(*) AS n
          FROM old_chunks o, unnest(o.tsv) u GROUP BY u.lexeme, o.layer_id) d
    WHERE s.lexeme = d.lexeme AND s.layer_id = d.layer_id;
    RETURN NULL;
END $$;

-- Chunk text never changes in place (a new text is a new row), but metadata
-- and positions do: an update only marks the layer changed.
CREATE FUNCTION strata.chunks_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE strata.lexical_layer_stats s SET changed_at = now()
    WHERE s.layer_id IN (SELECT DISTINCT layer_id FROM new_chunks);
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON strata.chunks
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION strata.chunks_stats_insert();
CREATE TRIGGER chunks_stats_delete AFTER DELETE ON strata.chunks
    REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION strata.chunks_stats_delete();
CREATE TRIGGER chunks_stats_update AFTER UPDATE ON strata.chunks
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION strata.chunks_stats_update();

-- refresh_lexical_stats recomputes one layer's statistics from its chunks
-- (ts_stat over the layer's tsv column) and drops the rows of layers that no
-- longer exist. The triggers keep the statistics current without it; it
-- repairs them after a manual change to strata.chunks, and the end of an
-- ingest run may call it.
CREATE FUNCTION strata.refresh_lexical_stats(p_layer_id bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO strata.lexical_layer_stats AS s (layer_id, chunks, total_len, changed_at)
    SELECT p_layer_id, count(*), coalesce(sum(tsv_len), 0), now() FROM strata.chunks WHERE layer_id = p_layer_id
    ON CONFLICT (layer_id) DO UPDATE SET chunks = EXCLUDED.chunks, total_len = EXCLUDED.total_len,
        changed_at = s.changed_at;
    DELETE FROM strata.lexeme_stats WHERE layer_id = p_layer_id;
    INSERT INTO strata.lexeme_stats (lexeme, layer_id, df)
    SELECT word, p_layer_id, ndoc
    FROM ts_stat(format('SELECT tsv FROM strata.chunks WHERE layer_id = %s', p_layer_id));
    DELETE FROM strata.lexeme_stats WHERE layer_id NOT IN (SELECT id FROM strata.layers);
    DELETE FROM strata.lexical_layer_stats WHERE layer_id NOT IN (SELECT id FROM strata.layers);
END $$;

SELECT strata.refresh_lexical_stats(id) FROM strata.layers;

-- Search parameters per embedding model, measured on SciFact's train queries
-- (docs/retrieval.md says how): reciprocal rank fusion's k and the weight of
-- each channel, HNSW's ef_search for recall@10 >= 0.95 against exact search,
-- the cosine marks of the confidence levels, and the similarity below which
-- a passage found only by the vector channel is not a match at all (a
-- nearest neighbour is always found, however unrelated). A model without a
-- row uses queryd's defaults (k 60, equal weights, the spec's 0.6 and 0.45,
-- a floor of 0.25).
CREATE TABLE strata.model_search_params (
    model             text PRIMARY KEY,
    rrf_k             integer NOT NULL DEFAULT 60 CHECK (rrf_k >= 1),
    lexical_weight    real NOT NULL DEFAULT 1 CHECK (lexical_weight >= 0),
    vector_weight     real NOT NULL DEFAULT 1 CHECK (vector_weight >= 0),
    ef_search         integer NOT NULL DEFAULT 100 CHECK (ef_search BETWEEN 1 AND 1000),
    confidence_high   real NOT NULL DEFAULT 0.6,
    confidence_medium real NOT NULL DEFAULT 0.45,
    min_similarity    real NOT NULL DEFAULT 0.25,
    measured_on       text NOT NULL DEFAULT '',
    updated_at        timestamptz NOT NULL DEFAULT now()
);
