-- Receipts are signed when issued (issue 27, item 7): an Ed25519 signature
-- over the receipt's canonical content (docs/ask.md, "Signed receipts"),
-- made with a key kept outside the database, and the id of that key.
-- queryd's INSERT on the table covers the new columns; a row written by
-- hand has no valid signature, and opening it says so.
ALTER TABLE strata.receipts ADD COLUMN signature text, ADD COLUMN key_id text;
