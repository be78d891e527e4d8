package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// InteractionRecord is one recorded interaction as strata_feedback reads
// it back.
type InteractionRecord struct {
	ID       int64
	Caller   string
	Tool     string
	Question string
	Status   string
	Layers   []string
	// Age is how long ago it was recorded, by the database's clock.
	Age time.Duration
	// ChunkIDs are the chunks of the returned passages; PassageChunks maps
	// their passage ids to them, and ExactPassages are the passage ids of
	// named clauses, which have no chunk.
	ChunkIDs      []int64
	PassageChunks map[string]int64
	ExactPassages []string
}

// ErrNoInteraction is returned for an interaction id the ledger does not
// hold.
var ErrNoInteraction = errors.New("no such interaction")

// Interaction reads interaction id from the primary, where it was written.
func (l *Ledger) Interaction(ctx context.Context, id int64) (InteractionRecord, error) {
	r := InteractionRecord{ID: id}
	var ageSeconds float64
	var chunks, passages, exact []byte
	err := l.db.QueryRow(ctx, `SELECT caller, tool, question, status, layers,
			extract(epoch FROM now() - created_at)::float8,
			coalesce(detail->'chunk_ids', 'null'), coalesce(detail->'passage_chunks', 'null'),
			coalesce(detail->'exact_passages', 'null')
		FROM strata.interactions WHERE id = $1`, id).Scan(&r.Caller, &r.Tool, &r.Question, &r.Status, &r.Layers,
		&ageSeconds, &chunks, &passages, &exact)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ErrNoInteraction
	}
	if err != nil {
		return r, fmt.Errorf("read interaction %d: %w", id, err)
	}
	r.Age = time.Duration(ageSeconds * float64(time.Second))
	for _, f := range []struct {
		raw []byte
		to  any
	}{{chunks, &r.ChunkIDs}, {passages, &r.PassageChunks}, {exact, &r.ExactPassages}} {
		if err := json.Unmarshal(f.raw, f.to); err != nil {
			return r, fmt.Errorf("read interaction %d: detail: %w", id, err)
		}
	}
	return r, nil
}

// Ratings of a chunk in strata_feedback.
const (
	RatingUseful   = "useful"
	RatingWrong    = "wrong"
	RatingOutdated = "outdated"
)

// Ratings are the allowed chunk ratings, in the order errors list them.
func Ratings() []string { return []string{RatingUseful, RatingWrong, RatingOutdated} }

// FeedbackRecord is one strata_feedback rating as the ledger keeps it.
type FeedbackRecord struct {
	InteractionID int64
	Caller        string
	Helpful       bool
	CorrectLayer  string // "" when none is stored
	BetterQuery   string // scrubbed by the caller unless raw queries are kept
	// ChunkRatings maps chunk ids to one of Ratings.
	ChunkRatings map[int64]string
}

// RecordFeedback stores f and returns its id. The table keeps every
// rating, as a ledger does, but a later rating of the same interaction
// replaces the earlier ones: LearningStats counts only the latest row of
// each interaction, and the promoter in ingestd takes its helpful.
func (l *Ledger) RecordFeedback(ctx context.Context, f FeedbackRecord) (int64, error) {
	ratings := make(map[string]string, len(f.ChunkRatings))
	for id, v := range f.ChunkRatings {
		ratings[strconv.FormatInt(id, 10)] = v
	}
	js, err := json.Marshal(ratings)
	if err != nil {
		return 0, fmt.Errorf("record feedback: %w", err)
	}
	var id int64
	err = l.db.QueryRow(ctx, `INSERT INTO strata.feedback (interaction_id, caller, helpful, correct_layer, better_query, chunk_ratings)
		VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING id`,
		f.InteractionID, f.Caller, f.Helpful, f.CorrectLayer, f.BetterQuery, string(js)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record feedback: %w", err)
	}
	return id, nil
}
