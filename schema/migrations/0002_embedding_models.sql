-- Embedding models and their progress per layer. Each vector row already
-- names its model (strata.embeddings.model); this records the models the
-- system has used, their dimensions, and for each layer whether the model's
-- vectors are complete. Queries on a layer use the newest model that is
-- complete for it, so a model change re-embeds in the background while
-- queries keep using the previous model's vectors.

CREATE TABLE strata.embedding_models (
    name       text PRIMARY KEY,
    provider   text NOT NULL,
    dims       integer NOT NULL CHECK (dims BETWEEN 1 AND 16000),
    created_at timestamptz NOT NULL DEFAULT now(),
    -- the HNSW index of this model's vectors, once built (NULL before).
    index_name text
);

CREATE TABLE strata.layer_models (
    layer_id     bigint NOT NULL REFERENCES strata.layers (id) ON DELETE CASCADE,
    model        text NOT NULL REFERENCES strata.embedding_models (name) ON DELETE CASCADE,
    complete     boolean NOT NULL DEFAULT false,
    completed_at timestamptz,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (layer_id, model)
);

-- Chunks still waiting for a vector of a model are found by anti-join on
-- (model, content_hash); this index serves the join from the chunk side.
CREATE INDEX embeddings_content_hash ON strata.embeddings (content_hash);
