-- The database role queryd connects as: it may read the documents ingestd
-- keeps and nothing else, so a bug or an injected statement in the query
-- path cannot change a document, section or chunk; PostgreSQL refuses it.
--
-- A role belongs to the whole cluster while grants belong to one database,
-- so the role is created only when missing (several databases on a cluster,
-- such as the test databases, each run this migration, possibly at once) and
-- the grants run in every database. The role cannot log in until ops give it
-- a password:
--   ALTER ROLE queryd LOGIN PASSWORD '…';
-- and point queryd at it with QUERYD_DATABASE_URL.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'queryd') THEN
        BEGIN
            CREATE ROLE queryd NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- another database's migration created it at the same moment
        END;
    END IF;
END
$$;

-- SELECT on every table so far: the documents (layers, documents, pages,
-- sections, chunks), the vectors (embeddings, embedding_models,
-- layer_models), the statistics search reads, and schema_migrations, which
-- queryd checks at start. Nothing else: no INSERT, UPDATE, DELETE, TRUNCATE.
GRANT USAGE ON SCHEMA strata TO queryd;
GRANT SELECT ON ALL TABLES IN SCHEMA strata TO queryd;

-- Tables that later migrations add (run by the same owner) are readable by
-- queryd and nothing more: a migration that wants queryd to write a table
-- (interactions, feedback, receipts) grants INSERT on it explicitly.
ALTER DEFAULT PRIVILEGES IN SCHEMA strata GRANT SELECT ON TABLES TO queryd;
