-- Impact-ordered postings for the lexical channel. Scoring every chunk that
-- holds a query word costs time in proportion to the corpus: at a million
-- chunks a claim of fifteen words selected tens of thousands of candidates
-- and took seconds. strata.postings keeps one row per chunk and lexeme with
-- the lexeme's BM25 term weight in that chunk (its "impact"), and the index
-- postings_impact hands out each lexeme's chunks best first. queryd reads a
-- bounded number of them per query lexeme, sums idf x impact to choose a
-- short list of candidates, and scores only those exactly from their
-- tsvectors, so the work per query is bounded by the query's length and not
-- by the corpus size. docs/retrieval.md has the measurements.

-- postings_impact is BM25's term-frequency part for a lexeme occurring tf
-- times in a chunk of len lexeme occurrences, in a layer whose average chunk
-- length is avglen, with queryd's k1 1.2 and b 0.4 (queryd/internal/search
-- checks that its constants match). The average used is the layer's when the
-- chunk was stored; it drifts slowly and only orders the candidates, since
-- the final scores are computed afresh. refresh_lexical_stats recomputes it.
CREATE FUNCTION strata.postings_impact(tf integer, len integer, avglen double precision) RETURNS real
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT (tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.4 + 0.4 * len / greatest(avglen, 1))))::real $$;

CREATE TABLE strata.postings (
    chunk_id bigint NOT NULL,
    lexeme   text NOT NULL,
    layer_id bigint NOT NULL,
    impact   real NOT NULL,
    PRIMARY KEY (chunk_id, lexeme)
);
-- Serves "the best chunks of this lexeme in this layer" as an index-only scan.
CREATE INDEX postings_impact ON strata.postings (lexeme, layer_id, impact DESC) INCLUDE (chunk_id);

-- The statement triggers of 0003 keep the postings too. Insert: after the
-- layer's counts are updated, so the average length includes the new
-- chunks. Delete: by the primary key's chunk_id prefix.
CREATE OR REPLACE FUNCTION strata.chunks_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
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
    INSERT INTO strata.postings (chunk_id, lexeme, layer_id, impact)
    SELECT n.id, u.lexeme, n.layer_id,
        strata.postings_impact(coalesce(array_length(u.positions, 1), 1), n.tsv_len,
            s.total_len::double precision / greatest(s.chunks, 1))
    FROM new_chunks n JOIN strata.lexical_layer_stats s ON s.layer_id = n.layer_id, unnest(n.tsv) u;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION strata.chunks_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
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
    DELETE FROM strata.postings p USING old_chunks o WHERE p.chunk_id = o.id;
    RETURN NULL;
END $$;

-- refresh_lexical_stats also rebuilds the layer's postings with the layer's
-- current average length, and drops the postings of deleted layers.
CREATE OR REPLACE FUNCTION strata.refresh_lexical_stats(p_layer_id bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    avglen double precision;
BEGIN
    INSERT INTO strata.lexical_layer_stats AS s (layer_id, chunks, total_len, changed_at)
    SELECT p_layer_id, count(*), coalesce(sum(tsv_len), 0), now() FROM strata.chunks WHERE layer_id = p_layer_id
    ON CONFLICT (layer_id) DO UPDATE SET chunks = EXCLUDED.chunks, total_len = EXCLUDED.total_len,
        changed_at = s.changed_at;
    DELETE FROM strata.lexeme_stats WHERE layer_id = p_layer_id;
    INSERT INTO strata.lexeme_stats (lexeme, layer_id, df)
    SELECT word, p_layer_id, ndoc
    FROM ts_stat(format('SELECT tsv FROM strata.chunks WHERE layer_id = %s', p_layer_id));
    SELECT total_len::double precision / greatest(chunks, 1) INTO avglen
    FROM strata.lexical_layer_stats WHERE layer_id = p_layer_id;
    DELETE FROM strata.postings WHERE layer_id = p_layer_id;
    INSERT INTO strata.postings (chunk_id, lexeme, layer_id, impact)
    SELECT c.id, u.lexeme, c.layer_id,
        strata.postings_impact(coalesce(array_length(u.positions, 1), 1), c.tsv_len, avglen)
    FROM strata.chunks c, unnest(c.tsv) u WHERE c.layer_id = p_layer_id ORDER BY c.id;
    DELETE FROM strata.lexeme_stats WHERE layer_id NOT IN (SELECT id FROM strata.layers);
    DELETE FROM strata.lexical_layer_stats WHERE layer_id NOT IN (SELECT id FROM strata.layers);
    DELETE FROM strata.postings WHERE layer_id NOT IN (SELECT id FROM strata.layers);
END $$;

SELECT strata.refresh_lexical_stats(id) FROM strata.layers;
