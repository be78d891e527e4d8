-- A GIN index on chunk metadata (page, total_pages and the document's
-- front-matter keys). A strata_search metadata_filter is a containment test
-- (metadata @> filter); when a selective filter sends the lexical channel to
-- its GIN path, PostgreSQL can intersect this index with chunks_tsv instead
-- of reading every chunk that holds a query word.
CREATE INDEX chunks_metadata ON strata.chunks USING gin (metadata jsonb_path_ops);
