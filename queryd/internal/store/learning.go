package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/learn"
)

// MaxLearnedSynonyms bounds the synonyms one question gets appended.
const MaxLearnedSynonyms = 5

// LearnedSynonyms returns the synonyms the promoter learned for terms (the
// question's content words, package learn), stored with no layer or with
// one of layers, under the current rule, most used first. A pair a reset
// recorded after it was learned is left out, even before the promoter has
// applied the reset: queryd may not delete, so the reset request is a
// mark the read honours.
func (s *Corpus) LearnedSynonyms(ctx context.Context, terms, layers []string) ([]string, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	if layers == nil {
		layers = []string{}
	}
	rows, err := s.db.Query(ctx, `SELECT s.synonym FROM strata.learned_synonyms s
		WHERE s.term = ANY($1) AND s.rule_version = $2 AND (s.layer = '' OR s.layer = ANY($3))
		  AND NOT EXISTS (SELECT 1 FROM strata.interactions r
			WHERE r.tool = 'strata_reset_learning' AND r.created_at >= s.updated_at
			  AND (cardinality(r.layers) = 0 OR (s.layer <> '' AND s.layer = ANY(r.layers))))
		ORDER BY s.usage_count DESC, s.synonym LIMIT $4`, terms, learn.SynonymRule, layers, MaxLearnedSynonyms)
	if err != nil {
		return nil, fmt.Errorf("read learned synonyms: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read learned synonyms: %w", err)
	}
	return out, nil
}
