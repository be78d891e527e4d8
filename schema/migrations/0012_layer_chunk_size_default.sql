-- A layer's chunk size had two defaults: 1000 here (0001) and 800 in the
-- chunker, and only the chunker's was ever used, since ingestd always writes
-- chunk_size. The column's DEFAULT now says what is used: schema's
-- DefaultChunkSize, which schema's TestDefaultsMatchDatabase ties to it.
-- Existing rows keep their stored size.
ALTER TABLE strata.layers ALTER COLUMN chunk_size SET DEFAULT 800;
