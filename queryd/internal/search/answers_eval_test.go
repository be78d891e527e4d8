package search

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The answer-quality evaluation (STRATA_EVAL=1, `make eval-answers`): the
// layers of eval/answers/layers.json are ingested as a user would add them
// (descriptions, routing patterns, the contracts preset; one USE-lite
// vector per chunk as ingestd makes them) and every question of the split
// is searched twice through strata_search, with its layer named and routed
// (no layer given). eval/answers/README.md describes the set;
// docs/retrieval.md has the figures.
//
// STRATA_EVAL_SPLIT (or -answers.split) is train, test or both (default test);
// floors are asserted on test only. STRATA_EVAL_DATABASE_URL keeps the
// ingested layers between runs (the database must exist).

var answersSplit = flag.String("answers.split", "", "answer-quality evaluation split: train, test or both (default $STRATA_EVAL_SPLIT, else test)")

// answersTopK is the results asked for: hit@5 and MRR are computed on the
// first 10, confidence is the response's own for that top_k.
const answersTopK = 10

// answersFloor is what the test split must keep for one kind. The floors
// below were measured on 2026-12-02 (docs/retrieval.md, "Answer-quality
// evaluation") and set just under, about one question lower; a fix that
// raises a figure raises its floor. The targets (issue 12), for
// the fixes to raise these toward:
//
//	exact hit@1 1.00; lexical hit@1 0.90; code and table hit@5 0.90;
//	contract hit@1 0.60 and hit@5 0.85; paraphrase hit@5 0.30 (goal for
//	the local model); routed within 0.03 of named; unanswerable questions
//	low >= 0.80 while answerable ones with the right passage first are
//	low <= 0.20.
type answersFloor struct{ hit1, hit5, mrr float64 }

// The floors are the default model's (bge-small-en-v1.5, migration 0020's
// parameters), one question under each figure measured on the test split
// on 6 December 2026 (docs/embeddings.md). Layer named: exact 1.00 1.00
// 1.00; lexical 0.81 0.95 0.88; paraphrase 0.23 0.38 0.32; code 0.92 1.00
// 0.95; contract 0.79 0.95 0.87; table 0.88 1.00 0.94. (USE-lite's, on
// 2 December at pipeline 9: lexical 0.90 0.95 0.93; paraphrase 0.08 0.31
// 0.18; contract 0.83 0.95 0.88; table 0.75 1.00 0.88; docs/retrieval.md.)
// Since document evidence is read in contracts layers only (issue 31,
// chosen on SciFact's and this set's train splits), the original
// paraphrase questions of the test split give 0.15 0.31 0.23 named and
// 0.08 0.31 0.14 routed: one question fewer at hit@1 and hit@5; the floors
// are one question under those.
var answersFloorsNamed = map[string]answersFloor{
	answers.KindExact:      {0.93, 0.93, 0.93},
	answers.KindLexical:    {0.76, 0.90, 0.83},
	answers.KindParaphrase: {0.07, 0.23, 0.15},
	answers.KindCode:       {0.84, 0.92, 0.88},
	answers.KindContract:   {0.76, 0.92, 0.84},
	answers.KindTable:      {0.75, 0.87, 0.81},
}

// Routed (no layer named), measured with the named figures: exact 1.00
// 1.00 1.00; lexical 0.81 0.95 0.88; paraphrase 0.15 0.38 0.26; code 0.85
// 0.92 0.87; contract 0.79 0.95 0.87; table 0.88 1.00 0.94. The floors are
// one question under (10 of 13 code questions is 0.769).
var answersFloorsRouted = map[string]answersFloor{
	answers.KindExact:      {0.93, 0.93, 0.93},
	answers.KindLexical:    {0.76, 0.90, 0.83},
	answers.KindParaphrase: {0, 0.23, 0.06},
	answers.KindCode:       {0.76, 0.84, 0.80},
	answers.KindContract:   {0.76, 0.92, 0.84},
	answers.KindTable:      {0.75, 0.87, 0.81},
}

// The confidence marks on the test split (layer named): the share of
// unanswerable questions marked low must stay at least unanswerableLowFloor
// (measured 0.88 with bge-small-en-v1.5's medium mark 0.76, chosen leaving
// one corpus out; USE-lite's was 0.96 at 0.58); the share of answerable
// questions with the right passage first marked low at most
// rightFirstLowCeiling (measured 0.51; USE-lite's 0.61). Neither model's
// cosine separates the two well (docs/embeddings.md, "Similarity marks").
// Since document evidence is read in contracts layers only, the original
// unanswerable questions marked low are 0.80 (20 of 25): the floor is one
// under.
const (
	unanswerableLowFloor = 0.76
	// similarityAUCFloor is the least similarityAUC the default model must
	// keep on the test split, layer named: measured 0.635 for
	// bge-small-en-v1.5, less a margin. Issue 28's target is 0.75, which
	// no candidate model reached (docs/embeddings.md).
	similarityAUCFloor   = 0.60
	rightFirstLowCeiling = 0.64
)

// answersRun is one search of one question.
type answersRun struct {
	q          answers.Question
	rank       int // 1-based rank of the first hit in the results, 0 for none
	confidence string
	topSim     float64
	bestSim    float64 // the highest similarity among the results
	took       time.Duration
	exactTop   bool     // the first result is an exact section match
	evidence   []string // what raised the confidence besides similarity
	top        []string
}

func TestEvalAnswers(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to run the answer-quality evaluation")
	}
	split := *answersSplit
	if split == "" {
		split = os.Getenv("STRATA_EVAL_SPLIT")
	}
	if split == "" {
		split = "test"
	}
	splits := []string{split}
	switch split {
	case "both":
		splits = []string{"train", "test"}
	case "train", "test":
	default:
		t.Fatalf("split %q: want train, test or both", split)
	}
	layers, all, emb, url, ingestTook := setupAnswers(t, "STRATA_EVAL_DATABASE_URL")

	s := answersSearcher(t, url, emb)
	if ingestTook > 0 {
		t.Logf("ingest and embedding of %d layers: %s", len(layers), ingestTook.Round(time.Second))
	}
	for _, split := range splits {
		var qs []answers.Question
		for _, q := range all {
			if q.Split == split {
				qs = append(qs, q)
			}
		}
		evalAnswerSplit(t, s, split, qs, len(all))
	}
}

// evalAnswerSplit runs and reports one split; floors are asserted on test.
func evalAnswerSplit(t *testing.T, s *Searcher, split string, qs []answers.Question, total int) {
	ctx := context.Background()
	named := make([]answersRun, 0, len(qs))
	routed := make([]answersRun, 0, len(qs))
	for _, q := range qs {
		named = append(named, runAnswer(ctx, t, s, q, []string{q.Layer}))
		routed = append(routed, runAnswer(ctx, t, s, q, nil))
	}

	t.Logf("answer-quality evaluation, %s split: %d questions (of %d), top_k %d", split, len(qs), total, answersTopK)
	byKindNamed := summarise(named)
	byKindRouted := summarise(routed)
	t.Logf("%-13s %4s | %-20s | %-20s", "kind", "n", "named hit@1 @5 MRR", "routed hit@1 @5 MRR")
	for _, k := range answers.Kinds {
		if (answers.Question{Kind: k}).Unanswerable() {
			continue
		}
		n, r := byKindNamed[k], byKindRouted[k]
		t.Logf("%-13s %4d | %.2f  %.2f  %.2f     | %.2f  %.2f  %.2f", k, n.n, n.hit1, n.hit5, n.mrr, r.hit1, r.hit5, r.mrr)
	}
	sep := separation(named)
	sepR := separation(routed)
	t.Logf("confidence low: unanswerable %.2f (routed %.2f, n=%d); answerable with the right passage first %.2f (routed %.2f, n=%d)",
		sep.unansLow, sepR.unansLow, sep.nUnans, sep.rightLow, sepR.rightLow, sep.nRight)
	t.Logf("confidence marks: unanswerable %s; right passage first %s", sep.unansMarks, sep.rightMarks)
	t.Logf("median top similarity: unanswerable %.3f, answerable with the right passage first %.3f, answerable missed %.3f",
		sep.unansSim, sep.rightSim, sep.missSim)
	auc, aucR := similarityAUC(named), similarityAUC(routed)
	t.Logf("similarity AUC (best similarity, answerable against unanswerable, %s): named %.3f, routed %.3f", evalModelName(), auc, aucR)
	t.Logf("exact questions whose first result is an exact section match: named %s, routed %s", exactFirst(named), exactFirst(routed))
	t.Logf("answerable questions missed at rank 1 yet marked high: named %s, routed %s", wrongHigh(named), wrongHigh(routed))
	t.Logf("latency per question (median, layer named / routed): %s / %s", medianDur(named), medianDur(routed))
	for way, runs := range map[string][]answersRun{"named": named, "routed": routed} {
		for _, r := range runs {
			if !r.q.Unanswerable() && r.rank != 1 && testing.Verbose() && os.Getenv("STRATA_EVAL_MISSES") == "1" {
				t.Logf("miss %s %s (rank %d, %s): %s\n\t%s", way, r.q.ID, r.rank, r.confidence, r.q.Question, strings.Join(r.top, "\n\t"))
			}
			if r.q.Unanswerable() && r.confidence != "low" && testing.Verbose() && os.Getenv("STRATA_EVAL_MISSES") == "1" {
				t.Logf("not low %s %s (%s, evidence %v): %s\n\t%s", way, r.q.ID, r.confidence, r.evidence, r.q.Question, strings.Join(r.top[:min(2, len(r.top))], "\n\t"))
			}
		}
	}

	if split != "test" {
		logLOCOMarks(t, evalModelName(), named)
		return
	}
	if evalModelName() != embed.DefaultLocalModel {
		t.Logf("floors not asserted: they are the default model's (%s), this run embeds with %s", embed.DefaultLocalModel, evalModelName())
		return
	}
	// The floors are the original questions' (the old kinds on the old
	// layers, as they were measured); the set's later questions are
	// reported above and by kind below.
	origNamed, origRouted := originalRuns(named), originalRuns(routed)
	sepO := separation(origNamed)
	aucO := similarityAUC(origNamed)
	t.Logf("original questions: confidence low, unanswerable %.2f (n=%d), right passage first %.2f (n=%d); similarity AUC %.3f",
		sepO.unansLow, sepO.nUnans, sepO.rightLow, sepO.nRight, aucO)
	for _, k := range []string{answers.KindNearMiss, answers.KindMissingSection} {
		low, n := 0, 0
		for _, r := range named {
			if r.q.Kind == k {
				n++
				if r.confidence == "low" {
					low++
				}
			}
		}
		t.Logf("%s marked low, layer named: %d of %d", k, low, n)
	}
	if aucO < similarityAUCFloor {
		t.Errorf("similarity AUC, original questions, layer named: %.3f under the floor %.2f", aucO, similarityAUCFloor)
	}
	checkFloors(t, "layer named", summarise(origNamed), answersFloorsNamed)
	checkFloors(t, "routed", summarise(origRouted), answersFloorsRouted)
	if sepO.unansLow < unanswerableLowFloor {
		t.Errorf("original unanswerable questions marked low: %.2f, floor %.2f", sepO.unansLow, unanswerableLowFloor)
	}
	if sepO.rightLow > rightFirstLowCeiling {
		t.Errorf("original answerable questions with the right passage first marked low: %.2f, ceiling %.2f", sepO.rightLow, rightFirstLowCeiling)
	}
}

// originalRuns keeps the runs of the original questions: the old kinds
// (unanswerable included) on the old layers, what the floors were
// measured on.
func originalRuns(rs []answersRun) []answersRun {
	var out []answersRun
	for _, r := range rs {
		if oldLayers[r.q.Layer] && r.q.Kind != answers.KindNamesDoc && r.q.Kind != answers.KindNearMiss &&
			r.q.Kind != answers.KindMissingSection {
			out = append(out, r)
		}
	}
	return out
}

func checkFloors(t *testing.T, mode string, got map[string]kindScore, floors map[string]answersFloor) {
	t.Helper()
	for _, k := range answers.Kinds {
		f, ok := floors[k]
		if !ok {
			continue
		}
		g := got[k]
		if g.hit1 < f.hit1 || g.hit5 < f.hit5 || g.mrr < f.mrr {
			t.Errorf("%s, %s: hit@1 %.2f hit@5 %.2f MRR %.2f under the floors %.2f %.2f %.2f", k, mode, g.hit1, g.hit5, g.mrr, f.hit1, f.hit5, f.mrr)
		}
	}
}

// answersSearcher is the one place the evaluation builds strata_search's
// engine (a store over the database and the Searcher), so that a change of
// the store's API is adapted here.
func answersSearcher(t *testing.T, url string, emb embed.Embedder) *Searcher {
	t.Helper()
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return NewWithOptions(st, Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots})
}

// ingestAnswerLayers ingests each layer that has no chunks yet and returns
// the time it took (0 when every layer was already there).
func ingestAnswerLayers(t *testing.T, pool *pgxpool.Pool, layers []answers.Layer, evalDir, corpora string, emb embed.Embedder) time.Duration {
	t.Helper()
	ctx := context.Background()
	var took time.Duration
	for _, l := range layers {
		if !needsVectors(t, pool, l.Name, emb.Model().Name) {
			continue
		}
		jl, err := l.JobsLayer(evalDir, corpora)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		p := ingesttest.Ingest(t, pool, jl, ingesttest.Options{Vectorizer: jobs.SingleVector(emb), Timeout: 30 * time.Minute})
		d := time.Since(began)
		took += d
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id
			WHERE l.name = $1`, l.Name).Scan(&n)
		t.Logf("layer %s: %d chunks in %s (%+v)", l.Name, n, d.Round(time.Second), p)
	}
	return took
}

func runAnswer(ctx context.Context, t *testing.T, s *Searcher, q answers.Question, layers []string) answersRun {
	t.Helper()
	began := time.Now()
	dump := os.Getenv("STRATA_EVAL_DUMP")
	resp, err := s.Search(ctx, Request{Query: q.Question, Layers: layers, TopK: answersTopK, Explain: dump != ""})
	if err != nil {
		t.Fatalf("%s: %v", q.ID, err)
	}
	r := answersRun{q: q, confidence: resp.Confidence, took: time.Since(began), evidence: resp.Evidence}
	defer func() {
		if dump != "" {
			dumpAnswerRun(t, dump, r, layers == nil, resp)
		}
	}()
	if len(resp.Results) > 0 {
		r.topSim = resp.Results[0].Similarity
		for _, res := range resp.Results {
			r.bestSim = max(r.bestSim, res.Similarity)
		}
		r.exactTop = resp.Results[0].Match == "exact"
	}
	for i, res := range resp.Results {
		if i < 3 {
			r.top = append(r.top, fmt.Sprintf("%s:%s [%s] %s %.60q", res.Layer, res.File, res.ClausePath, res.Match, res.Text))
		}
		if answers.Hit(q, res.Layer, res.File, res.Text) {
			r.rank = i + 1
			break
		}
	}
	return r
}

// dumpAnswerRun appends one run to the JSON-lines file STRATA_EVAL_DUMP
// (the first results' similarities and channel scores), the data the
// confidence marks are measured on (docs/retrieval.md).
func dumpAnswerRun(t *testing.T, path string, r answersRun, routed bool, resp *Response) {
	t.Helper()
	type res struct {
		Layer      string         `json:"layer"`
		File       string         `json:"file"`
		Similarity float64        `json:"similarity"`
		Match      string         `json:"match,omitempty"`
		Explain    *ResultExplain `json:"explain,omitempty"`
	}
	rec := struct {
		ID, Split, Kind, Confidence string
		Routed                      bool
		Rank                        int
		Results                     []res
		Searched                    []string
		Fallback                    *RoutingFallback
	}{r.q.ID, r.q.Split, r.q.Kind, r.confidence, routed, r.rank, nil, resp.SearchedLayers, resp.RoutingFallback}
	for i, x := range resp.Results {
		if i == 5 {
			break
		}
		rec.Results = append(rec.Results, res{x.Layer, x.File, x.Similarity, x.Match, x.Explain})
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

type kindScore struct {
	n               int
	hit1, hit5, mrr float64
}

func summarise(runs []answersRun) map[string]kindScore {
	out := map[string]kindScore{}
	for _, r := range runs {
		if r.q.Unanswerable() {
			continue
		}
		s := out[r.q.Kind]
		s.n++
		if r.rank == 1 {
			s.hit1++
		}
		if r.rank >= 1 && r.rank <= 5 {
			s.hit5++
		}
		if r.rank >= 1 {
			s.mrr += 1 / float64(r.rank)
		}
		out[r.q.Kind] = s
	}
	for k, s := range out {
		s.hit1 /= float64(s.n)
		s.hit5 /= float64(s.n)
		s.mrr /= float64(s.n)
		out[k] = s
	}
	return out
}

type sepScore struct {
	nUnans, nRight              int
	unansLow, rightLow          float64
	unansSim, rightSim, missSim float64
	unansMarks, rightMarks      string
}

// separation measures how the confidence marks and the top similarity set
// apart unanswerable questions and answerable ones whose right passage came
// first.
func separation(runs []answersRun) sepScore {
	var s sepScore
	var unSim, rightSim, missSim []float64
	unMarks, rightMarks := map[string]int{}, map[string]int{}
	for _, r := range runs {
		switch {
		case r.q.Unanswerable():
			s.nUnans++
			unMarks[r.confidence]++
			unSim = append(unSim, r.topSim)
		case r.rank == 1:
			s.nRight++
			rightMarks[r.confidence]++
			rightSim = append(rightSim, r.topSim)
		default:
			missSim = append(missSim, r.topSim)
		}
	}
	s.unansLow = float64(unMarks["low"]) / float64(max(1, s.nUnans))
	s.rightLow = float64(rightMarks["low"]) / float64(max(1, s.nRight))
	s.unansSim, s.rightSim, s.missSim = median(unSim), median(rightSim), median(missSim)
	s.unansMarks, s.rightMarks = marks(unMarks), marks(rightMarks)
	return s
}

func exactFirst(runs []answersRun) string {
	n, k := 0, 0
	for _, r := range runs {
		if r.q.Kind == answers.KindExact {
			n++
			if r.exactTop {
				k++
			}
		}
	}
	return fmt.Sprintf("%d of %d", k, n)
}

func wrongHigh(runs []answersRun) string {
	n, k := 0, 0
	for _, r := range runs {
		if !r.q.Unanswerable() && r.rank != 1 {
			n++
			if r.confidence == "high" {
				k++
			}
		}
	}
	return fmt.Sprintf("%d of %d", k, n)
}

func marks(m map[string]int) string {
	var parts []string
	for _, k := range []string{"high", "medium", "low"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	ys := slices.Clone(xs)
	sort.Float64s(ys)
	return ys[len(ys)/2]
}

func medianDur(runs []answersRun) time.Duration {
	ds := make([]float64, len(runs))
	for i, r := range runs {
		ds[i] = float64(r.took)
	}
	return time.Duration(median(ds)).Round(100 * time.Microsecond)
}

// setupAnswers loads the answer set and its layers, and ingests the layers
// that are missing into the database env names (a throwaway one when
// unset). It returns the layers, the questions, the local model, the
// database URL and the time the ingest took.
func setupAnswers(t *testing.T, env string) ([]answers.Layer, []answers.Question, embed.Embedder, string, time.Duration) {
	t.Helper()
	evalDir := filepath.Join(testenv.RepoRoot(t), "eval", "answers")
	corpora := filepath.Join(testenv.SharedDir(t), "corpora")
	testenv.Require(t, corpora, "the shared corpora")
	layers, err := answers.LoadLayers(filepath.Join(evalDir, "layers.json"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := answers.LoadQuestions(filepath.Join(evalDir, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	emb := loadEvalModel(t)
	pool, url := poolFromEnv(t, env)
	ingesttest.Migrate(t, pool)
	took := ingestAnswerLayers(t, pool, layers, evalDir, corpora, emb)
	return layers, all, emb, url, took
}

// similarityAUC is the probability that an answerable question's best
// similarity is above an unanswerable one's (ties count half): how well the
// embedding model's cosine alone tells them apart (0.5 is chance).
func similarityAUC(runs []answersRun) float64 {
	var pos, neg []float64
	for _, r := range runs {
		if r.q.Unanswerable() {
			neg = append(neg, r.bestSim)
		} else {
			pos = append(pos, r.bestSim)
		}
	}
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	var wins float64
	for _, p := range pos {
		for _, n := range neg {
			switch {
			case p > n:
				wins++
			case p == n:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(pos)*len(neg))
}

// TestSimilarityAUC runs without STRATA_EVAL: perfect separation is 1,
// reversed 0, ties half.
func TestSimilarityAUC(t *testing.T) {
	run := func(kind string, sim float64) answersRun {
		return answersRun{q: answers.Question{Kind: kind}, bestSim: sim}
	}
	un := answers.KindUnanswerable
	for _, tc := range []struct {
		runs []answersRun
		want float64
	}{
		{[]answersRun{run("lexical", 0.9), run("paraphrase", 0.8), run(un, 0.5), run(un, 0.4)}, 1},
		{[]answersRun{run("lexical", 0.3), run(un, 0.5)}, 0},
		{[]answersRun{run("lexical", 0.5), run(un, 0.5), run("code", 0.7), run(un, 0.6)}, 0.625},
	} {
		if got := similarityAUC(tc.runs); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("similarityAUC = %v, want %v", got, tc.want)
		}
	}
	if !math.IsNaN(similarityAUC([]answersRun{run("lexical", 0.5)})) {
		t.Error("AUC without unanswerable questions should be NaN")
	}
}
