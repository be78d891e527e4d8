-- Documents' titles join their identity keys (issue 26): "t:" and the
-- title folded ("t:organizing go code", structure.TitleKey), so a question
-- that names a document by its title finds it through the identity's GIN
-- index (a lookup of the question's word runs) instead of folding every
-- title of the searched layers on every query. The keys are computed in Go:
-- setting them to NULL here makes ingestd recompute every document's keys
-- when it starts, in the same run that applies this migration
-- (jobs.BackfillIdentity).
UPDATE strata.documents SET identity = NULL WHERE identity IS NOT NULL;
