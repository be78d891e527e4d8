package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LayerWords are what routing by the layers' own words reads: the
// question's lexemes and, per layer, how many chunks it has and how many
// of them hold each lexeme.
type LayerWords struct {
	Lexemes []string
	// Chunks is each layer's chunk count, by layer id.
	Chunks map[int64]int64
	// DF is, by layer id, the chunks holding each lexeme (absent: none).
	DF map[int64]map[string]int64
}

// LayerWords reads the statistics of the query's lexemes (english
// configuration) in each of the layers, from strata.lexeme_stats and
// strata.lexical_layer_stats, in one round trip.
func (s *Corpus) LayerWords(ctx context.Context, query string, layerIDs []int64) (LayerWords, error) {
	w := LayerWords{Chunks: map[int64]int64{}, DF: map[int64]map[string]int64{}}
	b := &pgx.Batch{}
	b.Queue(`SELECT q.lexeme, coalesce(s.layer_id, 0), coalesce(s.df, 0)::bigint
		FROM unnest(to_tsvector('english', $1)) q
		LEFT JOIN strata.lexeme_stats s ON s.lexeme = q.lexeme AND s.layer_id = ANY($2)
		ORDER BY q.lexeme, s.layer_id`, query, layerIDs).Query(func(rows pgx.Rows) error {
		var lex string
		var layer, df int64
		_, err := pgx.ForEachRow(rows, []any{&lex, &layer, &df}, func() error {
			if n := len(w.Lexemes); n == 0 || w.Lexemes[n-1] != lex {
				w.Lexemes = append(w.Lexemes, lex)
			}
			if layer != 0 && df > 0 {
				if w.DF[layer] == nil {
					w.DF[layer] = map[string]int64{}
				}
				w.DF[layer][lex] = df
			}
			return nil
		})
		return err
	})
	b.Queue(`SELECT layer_id, chunks FROM strata.lexical_layer_stats WHERE layer_id = ANY($1)`, layerIDs).Query(func(rows pgx.Rows) error {
		var layer, n int64
		_, err := pgx.ForEachRow(rows, []any{&layer, &n}, func() error {
			w.Chunks[layer] = n
			return nil
		})
		return err
	})
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return LayerWords{}, fmt.Errorf("read the layers' statistics of the question's words: %w", err)
	}
	return w, nil
}
