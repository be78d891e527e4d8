-- Search parameters measured for the local USE-lite model on SciFact's 809
-- train queries (never the test queries); docs/retrieval.md has the tables
-- and the commands that print them.
--   rrf_k 5, weights lexical 1 / vector 0.15: the best train nDCG@10 of the
--     grid k in {5,10,20,40,60} x vector weight in {0..1}; equal weights at
--     k 60 lose 0.16 against BM25 alone with this model.
--   ef_search 64: the smallest of {10,20,40,64,100,200} whose recall@10
--     against exact search reaches 0.95 (0.968; 40 gave 0.939).
--   confidence_medium 0.60: no off-topic question reached it, 98% of the
--     train queries did; confidence_high 0.70: 84% of train queries reach it.
--   min_similarity 0.45: most off-topic questions' nearest passages fall
--     below it, while train queries' best passages lie above 0.6.
INSERT INTO strata.model_search_params (model, rrf_k, lexical_weight, vector_weight, ef_search,
    confidence_high, confidence_medium, min_similarity, measured_on)
VALUES ('use-lite-512@1', 5, 1, 0.15, 64, 0.70, 0.60, 0.45,
    'SciFact train queries, 2026-11-30 (docs/retrieval.md)')
ON CONFLICT (model) DO NOTHING;
