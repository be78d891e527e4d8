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

-- Statement triggers beside 0003's keep the postings. Triggers of one event
-- fire in the order of their names, so chunks_stats_insert (0003) has
-- already counted the new chunks in the layer's average length when
-- chunks_stats_insert_postings runs. Deletes go by the primary key's
-- chunk_id prefix.
CREATE FUNCTION strata.chunks_postings_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO strata.postings (chunk_id, lexeme, layer_id, impact)
    SELECT n.id, u.lexeme, n.layer_id,
        strata.postings_impact(coalesce(array_length(u.positions, 1), 1), n.tsv_len,
            s.total_len::double precision / greatest(s.chunks, 1))
    FROM new_chunks n JOIN strata.lexical_layer_stats s ON s.layer_id = n.layer_id, unnest(n.tsv) u;
    RETURN NULL;
END $$;

CREATE FUNCTION strata.chunks_postings_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM strata.postings p USING old_chunks o WHERE p.chunk_id = o.id;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_stats_insert_postings AFTER INSERT ON strata.chunks
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION strata.chunks_postings_insert();
CREATE TRIGGER chunks_stats_delete_postings AFTER DELETE ON strata.chunks
    REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION strata.chunks_postings_delete();

-- refresh_postings rebuilds a layer's postings with the layer's current
-- average length, and drops the postings of deleted layers.
CREATE FUNCTION strata.refresh_postings(p_layer_id bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    avglen double precision;
BEGIN
    SELECT total_len::double precision / greatest(chunks, 1) INTO avglen
    FROM strata.lexical_layer_stats WHERE layer_id = p_layer_id;
    DELETE FROM strata.postings WHERE layer_id = p_layer_id;
    INSERT INTO strata.postings (chunk_id, lexeme, layer_id, impact)
    SELECT c.id, u.lexeme, c.layer_id,
        strata.postings_impact(coalesce(array_length(u.positions, 1), 1), c.tsv_len, avglen)
    FROM strata.chunks c, unnest(c.tsv) u WHERE c.layer_id = p_layer_id ORDER BY c.id;
    DELETE FROM strata.postings WHERE layer_id NOT IN (SELECT id FROM strata.layers);
END $$;

-- refresh_lexical_stats keeps its name and now repairs the postings too:
-- 0003's body becomes refresh_lexical_counts, and the postings are rebuilt
-- after it, from the counts it recomputed.
ALTER FUNCTION strata.refresh_lexical_stats(bigint) RENAME TO refresh_lexical_counts;
CREATE FUNCTION strata.refresh_lexical_stats(p_layer_id bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM strata.refresh_lexical_counts(p_layer_id);
    PERFORM strata.refresh_postings(p_layer_id);
END $$;

SELECT strata.refresh_postings(id) FROM strata.layers;
