-- A document's title and path as text-search lexemes, kept with the row
-- (issue 31). strata_ask asks whether some document holds all of a
-- question's proper names (store.NamesTogether): in its chunks, through
-- their GIN index, or in its title or path, which it folded with
-- to_tsvector for every document of the searched layers on every such
-- question: 38 ms for two names over SciFact's 5,183 documents, and linear
-- in the documents. Stored and indexed here, the title and path are looked
-- up like the chunks' text. Adding the column rewrites strata.documents
-- once.
ALTER TABLE strata.documents
    ADD COLUMN name_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', title || ' ' || path)) STORED;
CREATE INDEX documents_name_tsv ON strata.documents USING gin (name_tsv);
-- The rewrite leaves the table without statistics until autovacuum comes
-- by; the planner's guesses meanwhile chose far worse plans for the
-- named-documents lookup.
ANALYZE strata.documents;
