package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/learn"
)

// asked is one recorded strata_ask or strata_search in the window.
type asked struct {
	id         int64
	caller     string
	tool       string
	question   string
	layers     []string
	status     string
	confidence string
	variants   []string // strata_ask: the searches it ran, the question first
	chunkIDs   []int64
	at         time.Time
	terms      []string // learn.Terms(question)
}

// readWindow reads the interactions that teach: strata_ask and
// strata_search of callers with an identity in the lookback window, after
// the last global reset, by caller and in order.
func readWindow(ctx context.Context, tx pgx.Tx, globalFloor int64) ([]asked, error) {
	rows, err := tx.Query(ctx, `SELECT id, caller, tool, question, layers, status, created_at,
			coalesce(detail->>'confidence', ''),
			CASE WHEN jsonb_typeof(detail->'variants') = 'array' THEN detail->'variants' ELSE '[]' END,
			CASE WHEN jsonb_typeof(detail->'chunk_ids') = 'array' THEN detail->'chunk_ids' ELSE '[]' END
		FROM strata.interactions
		WHERE tool = ANY($1) AND caller <> '' AND id > $2 AND created_at > now() - $3::interval
		ORDER BY caller, id`, learnedFrom, globalFloor, learn.Lookback.String())
	if err != nil {
		return nil, fmt.Errorf("read the interactions: %w", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (asked, error) {
		var a asked
		err := r.Scan(&a.id, &a.caller, &a.tool, &a.question, &a.layers, &a.status, &a.at, &a.confidence, &a.variants, &a.chunkIDs)
		a.terms = learn.Terms(a.question)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the interactions: %w", err)
	}
	return all, nil
}

// rating is what strata_feedback said of one interaction: the latest
// rating wins for helpful; a correct_layer or better_query given in any
// rating is kept.
type rating struct {
	helpful      bool
	correctLayer string
	betterQuery  string
}

// readRatings reads the ratings of interactions after the last global
// reset, in the lookback window.
func readRatings(ctx context.Context, tx pgx.Tx, globalFloor int64) (map[int64]rating, error) {
	rows, err := tx.Query(ctx, `SELECT interaction_id, helpful, correct_layer, better_query FROM strata.feedback
		WHERE interaction_id > $1 AND created_at > now() - $2::interval ORDER BY id`, globalFloor, learn.Lookback.String())
	if err != nil {
		return nil, fmt.Errorf("read the ratings: %w", err)
	}
	out := map[int64]rating{}
	var id int64
	var r rating
	_, err = pgx.ForEachRow(rows, []any{&id, &r.helpful, &r.correctLayer, &r.betterQuery}, func() error {
		prev := out[id]
		if r.correctLayer == "" {
			r.correctLayer = prev.correctLayer
		}
		if r.betterQuery == "" {
			r.betterQuery = prev.betterQuery
		}
		out[id] = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the ratings: %w", err)
	}
	return out, nil
}

// outcome judges an interaction with its rating: a helpful rating makes it
// answered, a rating of not helpful makes it weak, whatever its status.
func outcome(a asked, rated map[int64]rating) (answered, weak bool) {
	if r, ok := rated[a.id]; ok {
		return r.helpful, !r.helpful
	}
	return learn.Answered(a.tool, a.status, a.confidence), learn.Weak(a.status, a.confidence)
}

func oneLayer(a asked) string {
	if len(a.layers) == 1 {
		return a.layers[0]
	}
	return ""
}

type rewriteKey struct{ key, rewrite, layer string }

type rewriteEvidence struct {
	terms                     []string
	question                  string
	proofs                    int
	callers                   map[string]bool
	uses, successes, failures int
	lastProof, lastUse        time.Time
	lastSuccess               time.Time
}

// promoteRewrites learns proven rewrites and replaces the stored set:
//
//   - a proof is a rewording by the same caller within learn.RephraseWindow
//     of a weak answer (not_found, low confidence, or rated not helpful)
//     that shares a term with it (learn.Shares: a follow-up on another
//     subject teaches nothing), was answered itself (found or partly
//     found, or rated helpful) and was settled: rated helpful, or not
//     reworded again by the caller within learn.RephraseWindow (settled);
//     the two questions' terms differ and it was no layer switch (the
//     same terms in another layer); or a better_query rating, sharing a
//     term with the question rated, whose wording the same caller asked in
//     the window and got answered;
//   - a use is a later strata_ask of a question like the first whose
//     searches held the rewrite; it succeeds when it was no miss (found or
//     partly found without low confidence, or rated helpful);
//   - a rewrite is kept while it has learn.MinRewriteProofs (2) proofs, was
//     proven or used with success within learn.RewriteStale, and its failed
//     uses do not outnumber its proofs and successes.
func promoteRewrites(ctx context.Context, tx pgx.Tx, all []asked, rated map[int64]rating, layerFloor map[string]int64, run *PromoterRun) error {
	ev := map[rewriteKey]*rewriteEvidence{}
	proof := func(first, second asked) {
		layer := oneLayer(second)
		if layer != "" && second.id <= layerFloor[layer] {
			return
		}
		k := rewriteKey{strings.Join(first.terms, " "), strings.Join(strings.Fields(second.question), " "), layer}
		e := ev[k]
		if e == nil {
			e = &rewriteEvidence{terms: first.terms, question: first.question, callers: map[string]bool{}}
			ev[k] = e
		}
		e.proofs++
		e.callers[second.caller] = true
		if second.at.After(e.lastProof) {
			e.lastProof = second.at
		}
	}
	for i := 1; i < len(all); i++ {
		prev, cur := all[i-1], all[i]
		if prev.caller != cur.caller || cur.at.Sub(prev.at) > learn.RephraseWindow || len(prev.terms) == 0 ||
			len(cur.terms) == 0 || slices.Equal(prev.terms, cur.terms) {
			continue
		}
		if learn.Like(prev.terms, cur.terms) && !slices.Equal(prev.layers, cur.layers) {
			continue // a layer switch teaches affinity, not a rewrite
		}
		if !learn.Shares(prev.terms, cur.terms) {
			continue // another question, not a rewording
		}
		_, weak := outcome(prev, rated)
		answered, _ := outcome(cur, rated)
		if weak && answered && settled(all, i, rated) {
			proof(prev, cur)
		}
	}
	// better_query: the caller said which wording would have worked; it is
	// proven when the caller asked it and got an answer.
	byCaller := map[string][]asked{}
	for _, a := range all {
		byCaller[a.caller] = append(byCaller[a.caller], a)
	}
	for _, a := range all {
		r, ok := rated[a.id]
		if !ok || r.betterQuery == "" || len(a.terms) == 0 {
			continue
		}
		want := learn.Terms(r.betterQuery)
		if len(want) == 0 || slices.Equal(want, a.terms) || !learn.Shares(want, a.terms) {
			continue
		}
		for _, b := range byCaller[a.caller] {
			if answered, _ := outcome(b, rated); b.id != a.id && answered && slices.Equal(b.terms, want) {
				proof(a, b)
				break
			}
		}
	}
	// Uses: strata_ask answers whose searches held the rewrite, for a
	// question like the one it was learned from.
	for _, a := range all {
		if a.tool != "strata_ask" || len(a.variants) < 2 {
			continue
		}
		for k, e := range ev {
			if !slices.Contains(a.variants[1:], k.rewrite) || !learn.Like(e.terms, a.terms) {
				continue
			}
			e.uses++
			if a.at.After(e.lastUse) {
				e.lastUse = a.at
			}
			if answered, weak := outcome(a, rated); answered || !weak {
				e.successes++
				if a.at.After(e.lastSuccess) {
					e.lastSuccess = a.at
				}
			} else {
				e.failures++
			}
		}
	}

	now := time.Now()
	var keys, rewrites, layers []string
	for k, e := range ev {
		fresh := now.Sub(e.lastProof) <= learn.RewriteStale || now.Sub(e.lastSuccess) <= learn.RewriteStale
		if e.proofs < learn.MinRewriteProofs || !fresh || e.failures > e.proofs+e.successes {
			continue
		}
		var lastUsed *time.Time
		if !e.lastUse.IsZero() {
			lastUsed = &e.lastUse
		}
		if _, err := tx.Exec(ctx, `INSERT INTO strata.learned_rewrites (terms, question_key, question, rewrite, layer,
				rule_version, proofs, callers, use_count, success_count, last_used_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (question_key, rewrite, layer) DO UPDATE SET question = excluded.question,
				rule_version = excluded.rule_version, proofs = excluded.proofs, callers = excluded.callers,
				use_count = excluded.use_count, success_count = excluded.success_count,
				last_used_at = excluded.last_used_at, updated_at = now()`,
			e.terms, k.key, e.question, k.rewrite, k.layer, learn.RewriteRule, e.proofs, len(e.callers),
			e.uses, e.successes, lastUsed); err != nil {
			return fmt.Errorf("store a learned rewrite: %w", err)
		}
		run.RewritesLearned++
		keys, rewrites, layers = append(keys, k.key), append(rewrites, k.rewrite), append(layers, k.layer)
	}
	tag, err := tx.Exec(ctx, `DELETE FROM strata.learned_rewrites s WHERE s.rule_version < $1
		OR NOT EXISTS (SELECT 1 FROM unnest($2::text[], $3::text[], $4::text[]) k(question_key, rewrite, layer)
			WHERE k.question_key = s.question_key AND k.rewrite = s.rewrite AND k.layer = s.layer)`,
		learn.RewriteRule, keys, rewrites, layers)
	if err != nil {
		return fmt.Errorf("delete learned rewrites: %w", err)
	}
	run.RewritesDeleted = int(tag.RowsAffected())
	return nil
}

// settled says whether the rewording all[i] of all[i-1] worked for the
// caller: it was rated helpful, or the caller's next question within
// learn.RephraseWindow is no further rewording (it shares no term with
// either question). A run before the window closes counts what it sees;
// the next run reads the window again and drops the proof when a rewording
// followed.
func settled(all []asked, i int, rated map[int64]rating) bool {
	cur := all[i]
	if r, ok := rated[cur.id]; ok && r.helpful {
		return true
	}
	if i+1 >= len(all) {
		return true
	}
	next := all[i+1]
	if next.caller != cur.caller || next.at.Sub(cur.at) > learn.RephraseWindow {
		return true
	}
	return !learn.Shares(next.terms, cur.terms) && !learn.Shares(next.terms, all[i-1].terms)
}

type affinityKey struct{ term, layer string }

type affinityEvidence struct{ switches, corrections, helpful int }

// promoteAffinities learns which layers a kind of question belongs to, per
// term of the question, and replaces the stored set. Evidence for a layer:
//
//   - a layer switch: the same caller, within learn.RephraseWindow, asks a
//     question like the one before (learn.Like) in other layers, searching
//     this layer alone, and gets an answer;
//   - a correct_layer rating naming this layer;
//   - a helpful rating of an answer from this layer (the layer it searched
//     alone, else the layer of its first passage).
//
// Evidence from before a reset of its layer is left out.
func promoteAffinities(ctx context.Context, tx pgx.Tx, all []asked, rated map[int64]rating, layerFloor map[string]int64, run *PromoterRun) error {
	ev := map[affinityKey]*affinityEvidence{}
	add := func(a asked, layer string, f func(*affinityEvidence)) {
		if layer == "" || a.id <= layerFloor[layer] {
			return
		}
		for _, t := range a.terms {
			k := affinityKey{t, layer}
			if ev[k] == nil {
				ev[k] = &affinityEvidence{}
			}
			f(ev[k])
		}
	}
	for i := 1; i < len(all); i++ {
		prev, cur := all[i-1], all[i]
		if prev.caller != cur.caller || cur.at.Sub(prev.at) > learn.RephraseWindow || slices.Equal(prev.layers, cur.layers) ||
			!learn.Like(prev.terms, cur.terms) {
			continue
		}
		if answered, _ := outcome(cur, rated); answered {
			add(cur, oneLayer(cur), func(e *affinityEvidence) { e.switches++ })
		}
	}
	// The layer of a helpful answer that searched several: its first
	// passage's.
	var firstChunks []int64
	for _, a := range all {
		if r, ok := rated[a.id]; ok && r.helpful && oneLayer(a) == "" && len(a.chunkIDs) > 0 {
			firstChunks = append(firstChunks, a.chunkIDs[0])
		}
	}
	chunkLayer := map[int64]string{}
	if len(firstChunks) > 0 {
		rows, err := tx.Query(ctx, `SELECT c.id, l.name FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id
			WHERE c.id = ANY($1)`, firstChunks)
		if err != nil {
			return fmt.Errorf("read the layers of rated passages: %w", err)
		}
		var id int64
		var name string
		if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error { chunkLayer[id] = name; return nil }); err != nil {
			return fmt.Errorf("read the layers of rated passages: %w", err)
		}
	}
	for _, a := range all {
		r, ok := rated[a.id]
		if !ok {
			continue
		}
		if r.correctLayer != "" {
			add(a, r.correctLayer, func(e *affinityEvidence) { e.corrections++ })
		}
		if r.helpful {
			layer := oneLayer(a)
			if layer == "" && len(a.chunkIDs) > 0 {
				layer = chunkLayer[a.chunkIDs[0]]
			}
			add(a, layer, func(e *affinityEvidence) { e.helpful++ })
		}
	}

	var terms, layers []string
	for k, e := range ev {
		n := e.switches + e.corrections + e.helpful
		if n == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO strata.learned_affinities (term, layer, rule_version, evidence, switches, corrections, helpful)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (term, layer) DO UPDATE SET rule_version = excluded.rule_version, evidence = excluded.evidence,
				switches = excluded.switches, corrections = excluded.corrections, helpful = excluded.helpful, updated_at = now()`,
			k.term, k.layer, learn.RewriteRule, n, e.switches, e.corrections, e.helpful); err != nil {
			return fmt.Errorf("store a layer affinity: %w", err)
		}
		run.AffinitiesLearned++
		terms, layers = append(terms, k.term), append(layers, k.layer)
	}
	tag, err := tx.Exec(ctx, `DELETE FROM strata.learned_affinities s WHERE s.rule_version < $1
		OR NOT EXISTS (SELECT 1 FROM unnest($2::text[], $3::text[]) k(term, layer) WHERE k.term = s.term AND k.layer = s.layer)`,
		learn.RewriteRule, terms, layers)
	if err != nil {
		return fmt.Errorf("delete layer affinities: %w", err)
	}
	run.AffinitiesDeleted = int(tag.RowsAffected())
	return nil
}
