-- The embedding model a layer is embedded with, by the name stored with its
-- vectors ("bge-small-en-v1.5@1", "use-lite-512@1", "openai_compatible:…").
-- NULL means the daemon's configured model. A layer keeps its model when the
-- default changes: re-ingesting it embeds new chunks with the same model,
-- and `ingestd reembed --layer NAME --model M` (or `ingestd add --model M`)
-- moves it to another, whose vectors queries use once they are complete.
ALTER TABLE strata.layers ADD COLUMN embedding_model text;

-- Layers that exist already keep the model their vectors are of.
UPDATE strata.layers l SET embedding_model = (
    SELECT lm.model FROM strata.layer_models lm WHERE lm.layer_id = l.id
    ORDER BY lm.complete DESC, lm.completed_at DESC NULLS LAST, lm.updated_at DESC LIMIT 1)
WHERE l.embedding_model IS NULL;
