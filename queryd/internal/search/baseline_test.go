package search

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The evaluation's baselines: queries the daemon never runs, kept here so
// that they do not ship in it.

// dbQuerier is what the baselines run on (the evaluation's pool).
type dbQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// searchTSRank ranks the chunks holding any query word with ts_rank_cd, as
// the first version of search did: the baseline the evaluation compares
// BM25 with.
func searchTSRank(ctx context.Context, db dbQuerier, query string, layerIDs []int64, limit int) ([]store.LexHit, error) {
	rows, err := db.Query(ctx, `
		SELECT c.id AS chunk_id, ts_rank_cd(c.tsv, query.q, 32) AS score
		FROM strata.chunks c,
			(SELECT replace(plainto_tsquery('english', $1)::text, ' & ', ' | ')::tsquery AS q) query
		WHERE c.tsv @@ query.q AND c.layer_id = ANY($2)
		ORDER BY score DESC, c.id LIMIT $3`, query, layerIDs, limit)
	if err != nil {
		return nil, fmt.Errorf("ts_rank search: %w", err)
	}
	hits, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[store.LexHit])
	if err != nil {
		return nil, fmt.Errorf("ts_rank search: %w", err)
	}
	return hits, nil
}

// exactVectors is the reference for the HNSW index's recall: the chunks of
// the layers whose best window is nearest the query vector, by exact
// distance over every window of the model (no index, no EFSearch).
func exactVectors(ctx context.Context, db dbQuerier, q store.VectorQuery) ([]store.VecHit, error) {
	filter := q.Filter
	if filter == nil {
		filter = map[string]string{}
	}
	fj, err := json.Marshal(filter)
	if err != nil {
		return nil, fmt.Errorf("exact vector search: %w", err)
	}
	if q.Dims <= 0 || q.Dims != len(q.Vector) {
		return nil, fmt.Errorf("exact vector search: query vector has %d dimensions, want %d", len(q.Vector), q.Dims)
	}
	rows, err := db.Query(ctx, fmt.Sprintf(`
		SELECT c.id AS chunk_id, max(1 - (e.embedding::vector(%d) <=> $1::vector(%d))) AS similarity
		FROM strata.chunks c JOIN strata.embeddings e ON e.content_hash = c.content_hash AND e.model = $2 AND e.dims = %d
		WHERE c.layer_id = ANY($3) AND c.metadata @> $4::jsonb
		GROUP BY c.id ORDER BY similarity DESC, c.id LIMIT $5`, q.Dims, q.Dims, q.Dims),
		pgvector.NewVector(q.Vector), q.Model, q.LayerIDs, string(fj), q.Limit)
	if err != nil {
		return nil, fmt.Errorf("exact vector search: %w", err)
	}
	hits, err := pgx.CollectRows(rows, pgx.RowToStructByName[store.VecHit])
	if err != nil {
		return nil, fmt.Errorf("exact vector search: %w", err)
	}
	return hits, nil
}
