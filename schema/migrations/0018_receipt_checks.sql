-- A receipt now records each quote and fact strata_verify checked and where
-- it was found: [{kind, text, sentence, passage, start, end}], text as the
-- draft writes it (scrubbed like the draft), passage the S-id of one of the
-- receipt's passages and [start, end) the bytes of that passage's text that
-- matched. Receipts issued before this, and those of extractive answers,
-- hold []. The table keeps its owner and grants (0013): queryd may add rows
-- and read them, the new column included, nothing more.
ALTER TABLE strata.receipts
    ADD COLUMN checks jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(checks) = 'array');
