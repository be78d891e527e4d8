package store

import (
	"context"
	"errors"
	"fmt"
	"time"

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
			WHERE r.tool = $5 AND r.created_at >= s.updated_at
			  AND (cardinality(r.layers) = 0 OR (s.layer <> '' AND s.layer = ANY(r.layers))))
		ORDER BY s.usage_count DESC, s.synonym LIMIT $4`, terms, learn.SynonymRule, layers, MaxLearnedSynonyms, resetTool)
	if err != nil {
		return nil, fmt.Errorf("read learned synonyms: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read learned synonyms: %w", err)
	}
	return out, nil
}

// LearnedSynonym is one learned pair as strata_learning_stats shows it.
type LearnedSynonym struct {
	Term        string    `json:"term"`
	Synonym     string    `json:"synonym"`
	Layer       string    `json:"layer"`
	UsageCount  int       `json:"usage_count"`
	Callers     int       `json:"callers"`
	RuleVersion int       `json:"rule_version"`
	LearnedAt   time.Time `json:"learned_at"`
}

// PromoterRun is the promoter's last run.
type PromoterRun struct {
	FinishedAt      time.Time `json:"finished_at"`
	Interactions    int       `json:"interactions"`
	PairsSeen       int       `json:"pairs_seen"`
	SynonymsLearned int       `json:"synonyms_learned"`
	SynonymsDeleted int       `json:"synonyms_deleted"`
	ResetsApplied   int       `json:"resets_applied"`
	RuleVersion     int       `json:"rule_version"`

	RatingsRead       int `json:"ratings_read"`
	RewritesLearned   int `json:"rewrites_learned"`
	RewritesDeleted   int `json:"rewrites_deleted"`
	AffinitiesLearned int `json:"affinities_learned"`
	AffinitiesDeleted int `json:"affinities_deleted"`
}

// FeedbackCounts counts the ratings in force: the latest of each rated
// interaction, since a second rating replaces the first.
type FeedbackCounts struct {
	Ratings        int `json:"ratings"`
	Helpful        int `json:"helpful"`
	NotHelpful     int `json:"not_helpful"`
	ChunksUseful   int `json:"chunks_useful"`
	ChunksWrong    int `json:"chunks_wrong"`
	ChunksOutdated int `json:"chunks_outdated"`
}

// LearningStats is what was learned: the pairs applied now (a reset not yet
// applied by the promoter already hides the pairs it covers), the
// promoter's last run (nil before the first), the ratings, and how many
// reset requests the promoter has not applied yet.
type LearningStats struct {
	Synonyms      []LearnedSynonym
	Rewrites      []LearnedRewrite
	Affinities    []LayerAffinity
	LastRun       *PromoterRun
	Feedback      FeedbackCounts
	PendingResets int
}

// resetTool is the tool name of a reset request in strata.interactions
// (jobs.ResetTool on the ingestd side).
const resetTool = "strata_reset_learning"

// LearningStats reads what was learned, from the primary (the promoter and
// the ledger write there).
func (l *Ledger) LearningStats(ctx context.Context) (LearningStats, error) {
	var st LearningStats
	rows, err := l.db.Query(ctx, `SELECT s.term, s.synonym, s.layer, s.usage_count, s.callers, s.rule_version, s.learned_at
		FROM strata.learned_synonyms s
		WHERE s.rule_version = $1 AND NOT EXISTS (SELECT 1 FROM strata.interactions r
			WHERE r.tool = $2 AND r.created_at >= s.updated_at
			  AND (cardinality(r.layers) = 0 OR (s.layer <> '' AND s.layer = ANY(r.layers))))
		ORDER BY s.layer, s.usage_count DESC, s.term, s.synonym LIMIT 500`, learn.SynonymRule, resetTool)
	if err != nil {
		return st, fmt.Errorf("read learning stats: %w", err)
	}
	st.Synonyms, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (LearnedSynonym, error) {
		var s LearnedSynonym
		return s, r.Scan(&s.Term, &s.Synonym, &s.Layer, &s.UsageCount, &s.Callers, &s.RuleVersion, &s.LearnedAt)
	})
	if err != nil {
		return st, fmt.Errorf("read learning stats: %w", err)
	}
	if err := l.learnedRewritesAndAffinities(ctx, &st); err != nil {
		return st, err
	}
	var run PromoterRun
	var lastID int64
	err = l.db.QueryRow(ctx, `SELECT finished_at, interactions, pairs_seen, synonyms_learned, synonyms_deleted,
			resets_applied, rule_version, last_interaction_id, ratings_read, rewrites_learned, rewrites_deleted,
			affinities_learned, affinities_deleted
		FROM strata.promoter_runs ORDER BY id DESC LIMIT 1`).Scan(&run.FinishedAt, &run.Interactions, &run.PairsSeen,
		&run.SynonymsLearned, &run.SynonymsDeleted, &run.ResetsApplied, &run.RuleVersion, &lastID, &run.RatingsRead,
		&run.RewritesLearned, &run.RewritesDeleted, &run.AffinitiesLearned, &run.AffinitiesDeleted)
	switch {
	case err == nil:
		st.LastRun = &run
	case !errors.Is(err, pgx.ErrNoRows):
		return st, fmt.Errorf("read the promoter's last run: %w", err)
	}
	if err := l.db.QueryRow(ctx, `SELECT count(*) FROM strata.interactions WHERE tool = $1 AND id > $2`,
		resetTool, lastID).Scan(&st.PendingResets); err != nil {
		return st, fmt.Errorf("count reset requests: %w", err)
	}
	f := &st.Feedback
	if err := l.db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE helpful), count(*) FILTER (WHERE NOT helpful),
			coalesce(sum((SELECT count(*) FROM jsonb_each_text(chunk_ratings) e WHERE e.value = 'useful')), 0),
			coalesce(sum((SELECT count(*) FROM jsonb_each_text(chunk_ratings) e WHERE e.value = 'wrong')), 0),
			coalesce(sum((SELECT count(*) FROM jsonb_each_text(chunk_ratings) e WHERE e.value = 'outdated')), 0)
		FROM (SELECT DISTINCT ON (interaction_id) helpful, chunk_ratings FROM strata.feedback
			ORDER BY interaction_id, id DESC) latest`).Scan(&f.Ratings, &f.Helpful, &f.NotHelpful, &f.ChunksUseful, &f.ChunksWrong, &f.ChunksOutdated); err != nil {
		return st, fmt.Errorf("count feedback: %w", err)
	}
	return st, nil
}

// RequestReset records a reset of what was learned for layer ("" for the
// global reset) as an interaction, the only write queryd may make; reads
// honour it at once and the promoter applies it on its next run. It
// returns the request's id.
func (l *Ledger) RequestReset(ctx context.Context, who, layer string) (int64, error) {
	layers := []string{}
	if layer != "" {
		layers = []string{layer}
	}
	return l.RecordInteraction(ctx, Interaction{Caller: who, Tool: resetTool, Layers: layers, Status: "requested"})
}

// LearnedRewrite is one proven rewrite: what strata_ask reuses for a
// question like Question, and what strata_learning_stats shows.
type LearnedRewrite struct {
	Terms        []string   `json:"-"`
	Question     string     `json:"question"`
	Rewrite      string     `json:"rewrite"`
	Layer        string     `json:"layer"`
	Proofs       int        `json:"proofs"`
	Callers      int        `json:"callers"`
	UseCount     int        `json:"use_count"`
	SuccessCount int        `json:"success_count"`
	LastUsedAt   *time.Time `json:"last_used_at"`
	LearnedAt    time.Time  `json:"learned_at"`
}

// LayerAffinity is the evidence that questions with Term belong to Layer.
type LayerAffinity struct {
	Term        string `json:"term"`
	Layer       string `json:"layer"`
	Evidence    int    `json:"evidence"`
	Switches    int    `json:"switches"`
	Corrections int    `json:"corrections"`
	Helpful     int    `json:"helpful"`
}

// notReset is the condition, on a learned row s with a layer column, that
// no reset recorded after its last update covers it ($n is resetTool).
func notReset(n int) string {
	return fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM strata.interactions r
			WHERE r.tool = $%d AND r.created_at >= s.updated_at
			  AND (cardinality(r.layers) = 0 OR (s.layer <> '' AND s.layer = ANY(r.layers))))`, n)
}

// LearnedRewrites returns the proven rewrites learned from questions that
// share a term with terms (learn.Terms of the question), stored with no
// layer or with one of layers, under the current rule, not covered by a
// later reset; the caller keeps those whose question is like its own
// (learn.Like). Most successful first.
func (s *Corpus) LearnedRewrites(ctx context.Context, terms, layers []string) ([]LearnedRewrite, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	if layers == nil {
		layers = []string{}
	}
	rows, err := s.db.Query(ctx, `SELECT s.terms, s.question, s.rewrite, s.layer, s.proofs, s.callers, s.use_count,
			s.success_count, s.last_used_at, s.learned_at
		FROM strata.learned_rewrites s
		WHERE s.terms && $1 AND s.rule_version = $2 AND (s.layer = '' OR s.layer = ANY($3)) AND `+notReset(4)+`
		ORDER BY s.proofs + s.success_count DESC, s.id LIMIT 50`, terms, learn.RewriteRule, layers, resetTool)
	if err != nil {
		return nil, fmt.Errorf("read learned rewrites: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRewrite)
	if err != nil {
		return nil, fmt.Errorf("read learned rewrites: %w", err)
	}
	return out, nil
}

func scanRewrite(r pgx.CollectableRow) (LearnedRewrite, error) {
	var w LearnedRewrite
	return w, r.Scan(&w.Terms, &w.Question, &w.Rewrite, &w.Layer, &w.Proofs, &w.Callers, &w.UseCount,
		&w.SuccessCount, &w.LastUsedAt, &w.LearnedAt)
}

// LayerAffinities returns the learned evidence of every layer for terms
// (learn.Terms of a question), under the current rule, not covered by a
// later reset.
func (s *Corpus) LayerAffinities(ctx context.Context, terms []string) ([]LayerAffinity, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := s.db.Query(ctx, `SELECT s.term, s.layer, s.evidence, s.switches, s.corrections, s.helpful
		FROM strata.learned_affinities s
		WHERE s.term = ANY($1) AND s.rule_version = $2 AND `+notReset(3)+`
		ORDER BY s.term, s.layer`, terms, learn.RewriteRule, resetTool)
	if err != nil {
		return nil, fmt.Errorf("read layer affinities: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanAffinity)
	if err != nil {
		return nil, fmt.Errorf("read layer affinities: %w", err)
	}
	return out, nil
}

func scanAffinity(r pgx.CollectableRow) (LayerAffinity, error) {
	var a LayerAffinity
	return a, r.Scan(&a.Term, &a.Layer, &a.Evidence, &a.Switches, &a.Corrections, &a.Helpful)
}

// learnedRewritesAndAffinities reads the rewrites and affinities applied
// now, for strata_learning_stats.
func (l *Ledger) learnedRewritesAndAffinities(ctx context.Context, st *LearningStats) error {
	rows, err := l.db.Query(ctx, `SELECT s.terms, s.question, s.rewrite, s.layer, s.proofs, s.callers, s.use_count,
			s.success_count, s.last_used_at, s.learned_at
		FROM strata.learned_rewrites s WHERE s.rule_version = $1 AND `+notReset(2)+`
		ORDER BY s.layer, s.proofs + s.success_count DESC, s.question, s.rewrite LIMIT 500`, learn.RewriteRule, resetTool)
	if err != nil {
		return fmt.Errorf("read learned rewrites: %w", err)
	}
	if st.Rewrites, err = pgx.CollectRows(rows, scanRewrite); err != nil {
		return fmt.Errorf("read learned rewrites: %w", err)
	}
	rows, err = l.db.Query(ctx, `SELECT s.term, s.layer, s.evidence, s.switches, s.corrections, s.helpful
		FROM strata.learned_affinities s WHERE s.rule_version = $1 AND `+notReset(2)+`
		ORDER BY s.layer, s.evidence DESC, s.term LIMIT 500`, learn.RewriteRule, resetTool)
	if err != nil {
		return fmt.Errorf("read layer affinities: %w", err)
	}
	if st.Affinities, err = pgx.CollectRows(rows, scanAffinity); err != nil {
		return fmt.Errorf("read layer affinities: %w", err)
	}
	return nil
}
