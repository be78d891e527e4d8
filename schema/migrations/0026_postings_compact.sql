-- Compact postings (issue 31: the postings were 96 MB of a 229 MB SciFact
-- database). No query reads a posting by (chunk_id, lexeme): the lexical
-- channel reads postings_impact, and the delete trigger (0006) finds a
-- deleted chunk's postings by chunk_id alone. The primary key, one entry
-- per posting and unique so never deduplicated (21 MB), becomes a plain
-- index on chunk_id, whose entries B-tree deduplication folds into one per
-- chunk (4.2 MB on SciFact as a user ingests it: postings 96 -> 79 MiB). A
-- chunk's tsvector holds each lexeme once, so the trigger never inserts a
-- pair twice without the key.
ALTER TABLE strata.postings DROP CONSTRAINT postings_pkey;
CREATE INDEX postings_chunk ON strata.postings (chunk_id);
