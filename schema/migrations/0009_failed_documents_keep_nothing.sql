-- A document that failed on re-ingest used to keep the chunks, sections and
-- pages of its last good version while its text was set to NULL: its old
-- passages stayed searchable with refs into text that is no longer stored.
-- ingest_file now deletes them in the transaction that records the failure
-- (jobs.recordFailure); this clears what earlier versions left behind. The
-- triggers on chunks (0003, 0006) remove their lexical statistics and
-- postings with them.
DELETE FROM strata.chunks c USING strata.documents d
    WHERE d.id = c.document_id AND d.status = 'failed';
DELETE FROM strata.sections s USING strata.documents d
    WHERE d.id = s.document_id AND d.status = 'failed';
DELETE FROM strata.pages p USING strata.documents d
    WHERE d.id = p.document_id AND d.status = 'failed';
UPDATE strata.documents SET total_pages = NULL, body_start = 0
    WHERE status = 'failed' AND (total_pages IS NOT NULL OR body_start <> 0);
