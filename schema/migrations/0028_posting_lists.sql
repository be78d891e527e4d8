-- Posting lists (issue 31: the index on disk was 6.1 times qmd's, and the
-- postings, one row per chunk and lexeme with two indexes, were 79 of its
-- 170 MiB on SciFact). One row per layer and lexeme now holds that
-- lexeme's chunks and impacts as two arrays, best impact first: the same
-- postings in 11 MiB there (docs/retrieval.md, "Index size").
--
-- Rewriting a list for every chunk stored would cost a whole list per
-- lexeme per file, so strata.postings stays what the triggers of 0006
-- write, a delta, and strata.pack_postings merges a layer's delta into its
-- lists: ingestd calls it when a run closes, and this migration packs
-- every layer once. The lexical channel reads both through
-- strata.best_postings. A deleted chunk leaves its id in the lists until
-- they are packed again: the delete trigger marks its lexemes' lists
-- dirty, the pack drops the ids of chunks that no longer exist, and until
-- then the lexical channel drops them when it reads the candidates'
-- chunks.
CREATE TABLE strata.posting_lists (
    lexeme    text NOT NULL,
    layer_id  bigint NOT NULL REFERENCES strata.layers (id) ON DELETE CASCADE,
    chunk_ids bigint[] NOT NULL,
    impacts   real[] NOT NULL,
    PRIMARY KEY (lexeme, layer_id)
);

-- No foreign key: a layer's deletion deletes its chunks, whose trigger
-- writes here in the same statement; pack_postings drops the rows of
-- layers that are gone.
CREATE TABLE strata.posting_lists_dirty (
    layer_id bigint NOT NULL,
    lexeme   text NOT NULL,
    PRIMARY KEY (layer_id, lexeme)
);

-- The delete trigger of 0006 also marks the deleted chunks' lexemes.
CREATE OR REPLACE FUNCTION strata.chunks_postings_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM strata.postings p USING old_chunks o WHERE p.chunk_id = o.id;
    INSERT INTO strata.posting_lists_dirty (layer_id, lexeme)
    SELECT DISTINCT o.layer_id, u.lexeme FROM old_chunks o, unnest(o.tsv) u
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- best_postings: the best n postings of a lexeme in a layer, from the
-- lists and the delta together.
CREATE FUNCTION strata.best_postings(p_lexeme text, p_layer_id bigint, n integer)
RETURNS TABLE (chunk_id bigint, impact real) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT x.chunk_id, x.impact FROM (
        (SELECT p.chunk_id, p.impact FROM strata.postings p
            WHERE p.lexeme = p_lexeme AND p.layer_id = p_layer_id ORDER BY p.impact DESC LIMIT n)
        UNION ALL
        (SELECT u.chunk_id, u.impact FROM strata.posting_lists pl,
            unnest(pl.chunk_ids[1:n], pl.impacts[1:n]) AS u(chunk_id, impact)
            WHERE pl.lexeme = p_lexeme AND pl.layer_id = p_layer_id)
    ) x ORDER BY x.impact DESC, x.chunk_id LIMIT n
$$;

-- pack_postings merges a layer's delta, and its dirty lists, into its
-- posting lists, and returns how many lists it wrote. Packs of one layer
-- take turns on the layer's row, so that each reads the lists the one
-- before wrote; postings stored meanwhile stay in the delta for the next.
CREATE FUNCTION strata.pack_postings(p_layer_id bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    DELETE FROM strata.posting_lists_dirty d
    WHERE NOT EXISTS (SELECT 1 FROM strata.layers l WHERE l.id = d.layer_id);
    PERFORM 1 FROM strata.layers WHERE id = p_layer_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    WITH moved AS (
        DELETE FROM strata.postings WHERE layer_id = p_layer_id RETURNING lexeme, chunk_id, impact
    ), dirty AS (
        DELETE FROM strata.posting_lists_dirty WHERE layer_id = p_layer_id RETURNING lexeme
    ), touched AS (
        SELECT lexeme FROM moved UNION SELECT lexeme FROM dirty
    ), kept AS (
        SELECT pl.lexeme, u.chunk_id, u.impact
        FROM strata.posting_lists pl JOIN touched t ON t.lexeme = pl.lexeme,
            unnest(pl.chunk_ids, pl.impacts) AS u(chunk_id, impact)
        WHERE pl.layer_id = p_layer_id AND EXISTS (SELECT 1 FROM strata.chunks c WHERE c.id = u.chunk_id)
    ), merged AS (
        SELECT a.lexeme, array_agg(a.chunk_id ORDER BY a.impact DESC, a.chunk_id) AS ids,
            array_agg(a.impact ORDER BY a.impact DESC, a.chunk_id) AS imps
        FROM (SELECT lexeme, chunk_id, impact FROM kept
              UNION
              SELECT lexeme, chunk_id, impact FROM moved) a
        GROUP BY a.lexeme
    ), emptied AS (
        DELETE FROM strata.posting_lists pl USING touched t
        WHERE pl.layer_id = p_layer_id AND pl.lexeme = t.lexeme
            AND NOT EXISTS (SELECT 1 FROM merged m WHERE m.lexeme = t.lexeme)
    ), upserted AS (
        INSERT INTO strata.posting_lists (lexeme, layer_id, chunk_ids, impacts)
        SELECT lexeme, p_layer_id, ids, imps FROM merged
        ON CONFLICT (lexeme, layer_id) DO UPDATE SET chunk_ids = EXCLUDED.chunk_ids, impacts = EXCLUDED.impacts
        RETURNING 1
    )
    SELECT count(*) INTO written FROM upserted;
    RETURN written;
END $$;

-- refresh_postings (0006) rebuilds a layer's postings with its current
-- average length: now into the delta, then packed.
CREATE OR REPLACE FUNCTION strata.refresh_postings(p_layer_id bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    avglen double precision;
BEGIN
    SELECT total_len::double precision / greatest(chunks, 1) INTO avglen
    FROM strata.lexical_layer_stats WHERE layer_id = p_layer_id;
    DELETE FROM strata.postings WHERE layer_id = p_layer_id;
    DELETE FROM strata.posting_lists WHERE layer_id = p_layer_id;
    INSERT INTO strata.postings (chunk_id, lexeme, layer_id, impact)
    SELECT c.id, u.lexeme, c.layer_id,
        strata.postings_impact(coalesce(array_length(u.positions, 1), 1), c.tsv_len, avglen)
    FROM strata.chunks c, unnest(c.tsv) u WHERE c.layer_id = p_layer_id ORDER BY c.id;
    DELETE FROM strata.postings WHERE layer_id NOT IN (SELECT id FROM strata.layers);
    PERFORM strata.pack_postings(p_layer_id);
END $$;

SELECT strata.pack_postings(id) FROM strata.layers;
-- What is left belongs to no layer. TRUNCATE, unlike DELETE, gives the
-- table's space back at once (a migration cannot VACUUM).
TRUNCATE strata.postings;
