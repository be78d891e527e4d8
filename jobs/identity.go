package jobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/structure"
)

// identityBatch is how many documents one backfill statement fills.
const identityBatch = 500

// BackfillIdentity computes the identity keys (structure.DocumentKeys) of
// the documents stored before migration 0023, whose identity is NULL, in
// batches, and returns how many it filled. Documents stored since carry
// their keys from the ingest that stored them.
func BackfillIdentity(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	total := 0
	for {
		rows, err := pool.Query(ctx, `
			SELECT id, path, title, meta, left(coalesce(body, ''), 4000)
			FROM strata.documents WHERE identity IS NULL ORDER BY id LIMIT $1`, identityBatch)
		if err != nil {
			return total, fmt.Errorf("read documents without identity: %w", err)
		}
		var ids []int64
		var keys [][]string
		var id int64
		var file, title, head string
		var meta map[string]string
		_, err = pgx.ForEachRow(rows, []any{&id, &file, &title, &meta, &head}, func() error {
			ids = append(ids, id)
			keys = append(keys, nonNil(structure.DocumentKeys(file, title, meta, head)))
			meta = nil
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("read documents without identity: %w", err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		b := &pgx.Batch{}
		for i := range ids {
			b.Queue(`UPDATE strata.documents SET identity = $2 WHERE id = $1`, ids[i], keys[i])
		}
		if err := pool.SendBatch(ctx, b).Close(); err != nil {
			return total, fmt.Errorf("store documents' identity: %w", err)
		}
		total += len(ids)
	}
}
