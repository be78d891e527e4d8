package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/stratakb/stratakb/learn"
)

// The promoter learns from the interactions queryd records (see
// docs/learning.md). A River periodic job looks every PromoterCheck whether
// it is due, so one leader among several ingestd processes runs it: after
// PromoteAfter new interactions since its last run, or PromoteEvery after
// it, whichever comes first.
const (
	PromoterCheck = time.Minute
	PromoteAfter  = 50
	PromoteEvery  = time.Hour
	// ResetTool is the tool name under which queryd records a
	// strata_reset_learning request in strata.interactions (queryd may
	// only insert; the promoter applies the request). Its layers are the
	// one layer reset, or none for the global reset.
	ResetTool = "strata_reset_learning"
)

// learnedFrom are the tools whose interactions teach.
var learnedFrom = []string{"strata_ask", "strata_search"}

// PromoteArgs runs the promoter; Force runs it even when it is not due.
type PromoteArgs struct {
	Force bool `json:"force,omitempty"`
}

// Kind is the River job kind.
func (PromoteArgs) Kind() string { return "learning_promote" }

// InsertOpts keeps at most one promoter job waiting or running.
func (PromoteArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

// PromoteWorker runs PromoteArgs jobs.
type PromoteWorker struct {
	river.WorkerDefaults[PromoteArgs]
	pool   *pgxpool.Pool
	logger *slog.Logger
}

// Work runs the promoter when it is due (or forced).
func (w *PromoteWorker) Work(ctx context.Context, job *river.Job[PromoteArgs]) error {
	run, err := Promote(ctx, w.pool, job.Args.Force)
	if err != nil {
		return err
	}
	if run.Ran && w.logger != nil {
		w.logger.Info("learning promoter ran", "interactions", run.Interactions, "pairs_seen", run.PairsSeen,
			"synonyms_learned", run.SynonymsLearned, "synonyms_deleted", run.SynonymsDeleted, "resets_applied", run.ResetsApplied,
			"ratings_read", run.RatingsRead, "rewrites_learned", run.RewritesLearned, "rewrites_deleted", run.RewritesDeleted,
			"affinities_learned", run.AffinitiesLearned, "affinities_deleted", run.AffinitiesDeleted)
	}
	return nil
}

func promoterPeriodicJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(PromoterCheck), func() (river.JobArgs, *river.InsertOpts) {
		return PromoteArgs{}, nil
	}, &river.PeriodicJobOpts{ID: "learning_promote"})
}

// PromoterRun is what one call of Promote did.
type PromoterRun struct {
	Ran             bool // false: not due, nothing done
	Interactions    int  // read in the lookback window
	PairsSeen       int  // rephrasings that passed the synonym rule
	SynonymsLearned int  // pairs stored (new or updated)
	SynonymsDeleted int  // pairs removed: older rule, reset, or no longer seen enough
	ResetsApplied   int

	RatingsRead       int // strata_feedback ratings on interactions in the window
	RewritesLearned   int // proven rewrites stored (new or updated)
	RewritesDeleted   int // rewrites removed: stale, failing, older rule, reset
	AffinitiesLearned int // term and layer affinities stored
	AffinitiesDeleted int
}

type pairKey struct{ term, synonym, layer string }

// Promote runs the promoter once in one transaction: it applies the reset
// requests recorded since its last run, deletes what older rules learned,
// and learns the synonym pairs, proven rewrites and layer affinities the
// lookback window (interactions and their ratings) supports, replacing the
// previous sets. Runs are serialized by a lock on strata.promoter_runs.
func Promote(ctx context.Context, pool *pgxpool.Pool, force bool) (PromoterRun, error) {
	var run PromoterRun
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE strata.promoter_runs IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		var last int64
		var lastAt *time.Time
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(last_interaction_id), 0), max(finished_at) FROM strata.promoter_runs`).Scan(&last, &lastAt); err != nil {
			return err
		}
		var newest int64
		var fresh int
		var stale bool
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(id), 0), count(*) FILTER (WHERE tool = ANY($2)),
				$3::timestamptz IS NULL OR $3::timestamptz < now() - $4::interval
			FROM strata.interactions WHERE id > $1`, last, learnedFrom, lastAt, PromoteEvery.String()).Scan(&newest, &fresh, &stale); err != nil {
			return err
		}
		if newest == 0 {
			newest = last
		}
		if !force && fresh < PromoteAfter && !(stale && fresh > 0) {
			return nil
		}
		run.Ran = true

		// Reset requests: new ones are applied now; every one bounds the
		// evidence that may be learned from again.
		rows, err := tx.Query(ctx, `SELECT id, layers FROM strata.interactions WHERE tool = $1 ORDER BY id`, ResetTool)
		if err != nil {
			return err
		}
		var globalFloor int64
		layerFloor := map[string]int64{}
		type reset struct {
			id     int64
			layers []string
		}
		resets, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (reset, error) {
			var x reset
			return x, r.Scan(&x.id, &x.layers)
		})
		if err != nil {
			return err
		}
		for _, r := range resets {
			if len(r.layers) == 0 {
				globalFloor = r.id
			}
			for _, l := range r.layers {
				layerFloor[l] = r.id
			}
			if r.id > last {
				run.ResetsApplied++
			}
		}

		// Read the window and apply the rule to each caller's consecutive
		// questions.
		all, err := readWindow(ctx, tx, globalFloor)
		if err != nil {
			return err
		}
		run.Interactions = len(all)
		seen := map[pairKey]int{}
		callers := map[pairKey]map[string]bool{}
		sightings := map[pairKey][]learn.Sighting{}
		for i := 1; i < len(all); i++ {
			prev, cur := all[i-1], all[i]
			if prev.caller != cur.caller || cur.at.Sub(prev.at) > learn.RephraseWindow || prev.question == cur.question {
				continue
			}
			term, syn, ok := learn.SynonymPair(prev.question, cur.question)
			if !ok {
				continue
			}
			layer := ""
			if len(cur.layers) == 1 {
				layer = cur.layers[0]
			}
			if layer != "" && cur.id <= layerFloor[layer] {
				continue
			}
			run.PairsSeen++
			k := pairKey{term, syn, layer}
			seen[k]++
			if callers[k] == nil {
				callers[k] = map[string]bool{}
			}
			callers[k][cur.caller] = true
			sightings[k] = append(sightings[k], learn.Sighting{Caller: cur.caller, At: cur.at})
		}

		// Replace the learned set with what the window supports under
		// the current rule.
		var keepTerms, keepSyns, keepLayers []string
		for k, n := range seen {
			if n < learn.MinSightings || learn.Sessions(sightings[k]) < learn.MinSessions {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO strata.learned_synonyms (term, synonym, layer, rule_version, usage_count, callers)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (term, synonym, layer) DO UPDATE SET rule_version = excluded.rule_version,
					usage_count = excluded.usage_count, callers = excluded.callers, updated_at = now()`,
				k.term, k.synonym, k.layer, learn.SynonymRule, n, len(callers[k])); err != nil {
				return err
			}
			run.SynonymsLearned++
			keepTerms, keepSyns, keepLayers = append(keepTerms, k.term), append(keepSyns, k.synonym), append(keepLayers, k.layer)
		}
		tag, err := tx.Exec(ctx, `DELETE FROM strata.learned_synonyms s WHERE s.rule_version < $1
			OR NOT EXISTS (SELECT 1 FROM unnest($2::text[], $3::text[], $4::text[]) k(term, synonym, layer)
				WHERE k.term = s.term AND k.synonym = s.synonym AND k.layer = s.layer)`,
			learn.SynonymRule, keepTerms, keepSyns, keepLayers)
		if err != nil {
			return err
		}
		run.SynonymsDeleted = int(tag.RowsAffected())

		// Proven rewrites and layer affinities, from the same window and
		// the ratings on it.
		rated, err := readRatings(ctx, tx, globalFloor)
		if err != nil {
			return err
		}
		run.RatingsRead = len(rated)
		if err := promoteRewrites(ctx, tx, all, rated, layerFloor, &run); err != nil {
			return err
		}
		if err := promoteAffinities(ctx, tx, all, rated, layerFloor, &run); err != nil {
			return err
		}

		_, err = tx.Exec(ctx, `INSERT INTO strata.promoter_runs (last_interaction_id, interactions, pairs_seen,
				synonyms_learned, synonyms_deleted, resets_applied, rule_version, ratings_read,
				rewrites_learned, rewrites_deleted, affinities_learned, affinities_deleted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, newest, run.Interactions, run.PairsSeen, run.SynonymsLearned,
			run.SynonymsDeleted, run.ResetsApplied, learn.SynonymRule, run.RatingsRead,
			run.RewritesLearned, run.RewritesDeleted, run.AffinitiesLearned, run.AffinitiesDeleted)
		return err
	})
	if err != nil {
		return PromoterRun{}, fmt.Errorf("learning promoter: %w", err)
	}
	return run, nil
}
