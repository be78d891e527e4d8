-- Vectors as half-precision floats (pgvector's halfvec, issue 31): half
-- the bytes in the table and in the HNSW indexes (SciFact as a user
-- ingests it: 56.8 -> 29.5 MiB), and the same SciFact and answer-set
-- figures to the fourth decimal (docs/embeddings.md). queryd compares
-- embedding::halfvec(dims) with the query vector cast the same way. Each
-- model's HNSW index is an expression index on the cast to its dimensions
-- (jobs.EnsureVectorIndex): it is dropped, the column converted, and the
-- index built again on the halfvec cast, under the same name.
DO $$
DECLARE
    r record;
    defs text[] := '{}';
    d text;
BEGIN
    FOR r IN SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'strata' AND tablename = 'embeddings' AND indexdef LIKE '%USING hnsw%'
    LOOP
        defs := defs || replace(replace(r.indexdef, '::vector(', '::halfvec('), 'vector_cosine_ops', 'halfvec_cosine_ops');
        EXECUTE format('DROP INDEX strata.%I', r.indexname);
    END LOOP;
    ALTER TABLE strata.embeddings ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
    FOREACH d IN ARRAY defs LOOP
        EXECUTE d;
    END LOOP;
END $$;
