-- A document's identity (issue 26): the numbers it is known by in a series
-- ("pep 572", "rfc 5321", "t 81"), from its file name, its title, its own
-- header fields and its front page (structure.DocumentKeys). A question
-- that names a document by number finds it through this column; one that
-- names it by title reads the title column. NULL means not computed yet:
-- ingestd fills it for documents stored before this migration when it
-- starts (jobs.Migrate), and for every document it stores.
ALTER TABLE strata.documents ADD COLUMN identity text[];
CREATE INDEX documents_identity ON strata.documents USING gin (identity);
