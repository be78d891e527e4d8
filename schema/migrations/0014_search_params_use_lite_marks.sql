-- Confidence marks for USE-lite measured on the answer-quality evaluation's
-- train split (eval/answers; TestTuneAnswers prints the table): the top
-- similarity of unanswerable questions against that of answerable ones with
-- the right passage first. No mark separates them. confidence_medium 0.58
-- minimises the sum of the two error rates on train (unanswerable at or
-- above it 0.00, right-first below it 0.78; test 0.04 and 0.74);
-- confidence_high stays 0.70. docs/retrieval.md has the figures.
UPDATE strata.model_search_params
SET confidence_medium = 0.58, updated_at = now(),
    measured_on = 'SciFact train queries, 2026-11-30; medium mark from eval/answers train, 2026-12-02 (docs/retrieval.md)'
WHERE model = 'use-lite-512@1';
