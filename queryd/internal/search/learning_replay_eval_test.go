package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/learn"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/learning"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The measured replay of the learning loop on the answer set (STRATA_EVAL=1;
// `make eval-learning`, docs/learning.md "Measured"). strata_ask is built as
// queryd builds it with learning on (recorder, learned rewrites and
// synonyms, affinity routing) and the offline reranker. Each train-split
// paraphrase question is asked with its layer named, by two callers of its own;
// after a not_found or low answer the caller rephrases it in the documents'
// own terms (the question set's hand-written key terms of the gold passage,
// `terms`, joined), and the promoter runs. The test split (every kind, layer
// named and routed) is measured before and after by an asker that records
// nothing, so measuring teaches nothing.
//
// STRATA_EVAL_LEARN_DATABASE_URL names a database holding only the answer
// set's layers (created, for instance, from answers_eval as a template); the
// replay empties its learning tables and interactions first, so it must not
// be a database whose history matters. Unset: a throwaway one is ingested.
func TestEvalLearningReplay(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to run the learning replay on the answer set")
	}
	ctx := context.Background()
	layers, all, emb, url, _ := setupAnswers(t, "STRATA_EVAL_LEARN_DATABASE_URL")
	owner, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	var db string
	if err := owner.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil || db == "answers_eval" || db == "stratakb" {
		t.Fatalf("the replay empties the learning history of %q: give it a database of its own (%v)", db, err)
	}
	if _, err := owner.Exec(ctx, `TRUNCATE strata.feedback, strata.learned_synonyms, strata.learned_rewrites,
		strata.learned_affinities, strata.promoter_runs, strata.interactions CASCADE`); err != nil {
		t.Fatal(err)
	}
	corpus, err := store.OpenCorpus(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(corpus.Close)
	if stored, err := corpus.Layers(ctx); err != nil || len(stored) != len(layers) {
		t.Fatalf("the database holds %d layers (%v), the answer set %d: use a database of its own", len(stored), err, len(layers))
	}
	ledger, err := store.OpenLedger(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ledger.Close)
	eng := retrieve.New(corpus, retrieve.Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots, DocEvidenceEverywhere: true})
	base := ask.Options{Engine: eng, Docs: corpus, Reranker: ask.Offline{Model: lrank.Default},
		Rewriter: learning.WithLearned(nil, corpus, nil), Affinities: corpus}
	measure := ask.New(base) // records nothing
	rec := base
	rec.Recorder = replayRecorder{ledger}
	replay := ask.New(rec)

	measureAll := func(split string, kinds ...string) map[string]map[string]replayScore {
		out := map[string]map[string]replayScore{"named": {}, "routed": {}}
		for _, q := range all {
			if q.Split != split || (len(kinds) > 0 && !contains(kinds, q.Kind)) {
				continue
			}
			for mode, ls := range map[string][]string{"named": {q.Layer}, "routed": nil} {
				s := out[mode][q.Kind]
				s.add(replayAsk(t, measure, "", q.Question, q, ls))
				out[mode][q.Kind] = s
			}
		}
		return out
	}
	before := measureAll("test")
	trainBefore := measureAll("train", answers.KindParaphrase)

	// The replay: each train paraphrase, then its rephrasing after a miss,
	// by two callers: a rewrite is proven only when seen more than once
	// (learn.MinRewriteProofs, issue 27 item 2).
	var missed, rephrasedFound int
	for _, q := range all {
		if q.Split != "train" || q.Kind != answers.KindParaphrase {
			continue
		}
		for _, caller := range []string{"a", "b"} {
			who := "replay:" + q.ID + ":" + caller
			first := replayAsk(t, replay, who, q.Question, q, []string{q.Layer})
			if !first.miss {
				continue
			}
			missed++
			second := replayAsk(t, replay, who, rephrasing(q), q, []string{q.Layer})
			if second.status != ask.NotFound { // answered: learn.Answered
				rephrasedFound++
			}
		}
	}
	run, err := jobs.Promote(ctx, owner, true)
	if err != nil {
		t.Fatal(err)
	}
	after := measureAll("test")
	trainAfter := measureAll("train", answers.KindParaphrase)

	fmt.Printf("\nlearning replay: %d train paraphrases missed and were rephrased in the documents' terms, %d of the rephrasings found; "+
		"the promoter learned %d rewrites, %d synonyms, %d affinities\n", missed, rephrasedFound, run.RewritesLearned,
		run.SynonymsLearned, run.AffinitiesLearned)
	fmt.Printf("%-7s %-13s %3s | %-17s | %-17s\n", "mode", "kind", "n", "hit@5 before/after", "status before/after")
	row := func(mode, kind string, b, a replayScore) {
		fmt.Printf("%-7s %-13s %3d | %5.2f / %5.2f     | %5.2f / %5.2f\n", mode, kind, b.n, b.rate(b.hit5), a.rate(a.hit5),
			b.rate(b.statusOK), a.rate(a.statusOK))
	}
	for _, mode := range []string{"named", "routed"} {
		for _, k := range answers.Kinds {
			if b, ok := before[mode][k]; ok {
				row(mode, k, b, after[mode][k])
			}
		}
	}
	fmt.Println("train paraphrases asked again (the questions the rewrites were learned from):")
	for _, mode := range []string{"named", "routed"} {
		row(mode, answers.KindParaphrase, trainBefore[mode][answers.KindParaphrase], trainAfter[mode][answers.KindParaphrase])
	}

	// Floors: the test split's paraphrases do not get worse, and no other
	// kind loses more than one question, named or routed.
	for _, mode := range []string{"named", "routed"} {
		for k, b := range before[mode] {
			a := after[mode][k]
			slack := 1
			if k == answers.KindParaphrase {
				slack = 0
			}
			if a.hit5 < b.hit5-slack || a.statusOK < b.statusOK-slack {
				t.Errorf("%s %s got worse after learning: hit@5 %d -> %d, status %d -> %d of %d", mode, k, b.hit5, a.hit5,
					b.statusOK, a.statusOK, b.n)
			}
		}
	}
	// What was learned from a question helps that question again.
	if tb, ta := trainBefore["named"][answers.KindParaphrase], trainAfter["named"][answers.KindParaphrase]; run.RewritesLearned > 0 && ta.hit5 <= tb.hit5 {
		t.Errorf("train paraphrases asked again: hit@5 %d -> %d after %d rephrasings found", tb.hit5, ta.hit5, rephrasedFound)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// replayScore counts one kind's questions: a gold passage among the first
// five returned, and the status a user wants (an answerable question found
// or partly found with a gold passage among those returned; an
// unanswerable one not_found).
type replayScore struct{ n, hit5, statusOK int }

type replayOne struct {
	status     ask.Status
	hit5, miss bool
	statusOK   bool
}

func (s *replayScore) add(r replayOne) {
	s.n++
	if r.hit5 {
		s.hit5++
	}
	if r.statusOK {
		s.statusOK++
	}
}

func (s replayScore) rate(x int) float64 {
	if s.n == 0 {
		return 0
	}
	return float64(x) / float64(s.n)
}

func replayAsk(t *testing.T, a *ask.Asker, who string, question string, q answers.Question, layers []string) replayOne {
	t.Helper()
	ctx := context.Background()
	if who != "" {
		ctx = caller.With(ctx, who)
	}
	resp, err := a.Ask(ctx, ask.Request{Question: question, Layers: layers, TopK: answersTopK, ResponseFormat: ask.FormatDetailed})
	if err != nil {
		t.Fatalf("%s: %v", q.ID, err)
	}
	r := replayOne{status: ask.Status(resp.AnswerStatus)}
	gold := false
	for i, p := range resp.Passages {
		if answers.Hit(q, p.Citation.Layer, p.Citation.File, p.Text) {
			gold = true
			if i < 5 {
				r.hit5 = true
			}
		}
	}
	r.miss = r.status == ask.NotFound || resp.Confidence == "low"
	if q.Kind == answers.KindUnanswerable {
		r.hit5 = false
		r.statusOK = r.status == ask.NotFound
	} else {
		r.statusOK = gold && (r.status == ask.Found || r.status == ask.PartlyFound)
	}
	return r
}

// replayRecorder records strata_ask's interactions as queryd's recorder
// does (queryd/internal/app).
type replayRecorder struct{ l *store.Ledger }

func (r replayRecorder) RecordInteraction(ctx context.Context, in ask.Interaction) (string, error) {
	detail, err := json.Marshal(map[string]any{"variants": in.Variants, "chunk_ids": in.ChunkIDs, "confidence": in.Confidence,
		"passage_chunks": in.PassageChunks, "exact_passages": in.ExactPassages})
	if err != nil {
		return "", err
	}
	id, err := r.l.RecordInteraction(ctx, store.Interaction{Caller: in.Caller, Tool: in.Tool, Question: in.Question,
		Layers: in.Layers, Status: in.Status, Detail: detail})
	return strconv.FormatInt(id, 10), err
}

// rephrasing is how the replay's caller asks again after a miss: in the
// documents' own terms (the question's hand-written key terms of its gold
// passage), keeping the question's subject, its longest content word. A
// paraphrase shares no stem with those terms by construction, and a
// rewording that shares no content word with the question teaches nothing
// (learn.Shares; issue 27, item 2).
func rephrasing(q answers.Question) string {
	subject := ""
	for _, w := range learn.ContentWords(q.Question) {
		if len(w) > len(subject) {
			subject = w
		}
	}
	return strings.TrimSpace(subject + " " + strings.Join(q.Terms, " "))
}
