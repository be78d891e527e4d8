-- Search parameters of the int8 exports a user may choose with
-- EMBEDDING_MODEL, measured as bge-small-en-v1.5's were (migration 0020,
-- docs/embeddings.md): fusion and similarity floor the best of
-- TestEvalTune's grid on SciFact's train claims; the high mark the lowest
-- at which no off-topic question reaches it and the first result is
-- relevant for at least 75 % of the train claims that do; the medium mark
-- chosen leaving one corpus out on the answer set's train split. The
-- contracts vector weight and ef_search are taken from bge-small-en-v1.5's
-- measurement, not measured again. e5-small-v2 and all-minilm-l6-v2 in
-- fp32 were not measured and run on queryd's defaults.
--
--   bge-small-en-v1.5-q: k 5, floor 0.65, SciFact train 0.7593; high 0.80
--     (77 %), medium 0.77
--   e5-small-v2-q: k 10, floor 0 (its off-topic cosines reach 0.83), train
--     0.7425; high 0.90 (78 %), medium 0.86
--   all-minilm-l6-v2-q: k 5, floor 0.30, train 0.7336; high 0.70 (75 %),
--     medium 0.63
INSERT INTO strata.model_search_params (model, rrf_k, lexical_weight, vector_weight, contracts_vector_weight,
    ef_search, confidence_high, confidence_medium, min_similarity, measured_on)
VALUES
    ('bge-small-en-v1.5-q@1', 5, 1, 1, 0.15, 64, 0.80, 0.77, 0.65,
        'SciFact train claims and eval/answers train split, 2026-12-06 (docs/embeddings.md)'),
    ('e5-small-v2-q@1', 10, 1, 1, 0.15, 64, 0.90, 0.86, 0,
        'SciFact train claims and eval/answers train split, 2026-12-06 (docs/embeddings.md)'),
    ('all-minilm-l6-v2-q@1', 5, 1, 1, 0.15, 64, 0.70, 0.63, 0.30,
        'SciFact train claims and eval/answers train split, 2026-12-06 (docs/embeddings.md)')
ON CONFLICT (model) DO UPDATE SET rrf_k = EXCLUDED.rrf_k, lexical_weight = EXCLUDED.lexical_weight,
    vector_weight = EXCLUDED.vector_weight, contracts_vector_weight = EXCLUDED.contracts_vector_weight,
    ef_search = EXCLUDED.ef_search, confidence_high = EXCLUDED.confidence_high,
    confidence_medium = EXCLUDED.confidence_medium, min_similarity = EXCLUDED.min_similarity,
    measured_on = EXCLUDED.measured_on, updated_at = now();
