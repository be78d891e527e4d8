package search

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestTuneAnswers measures settings on the answer-quality evaluation's
// layers (STRATA_EVAL=1 STRATA_EVAL_TUNE=1, the layers already ingested in
// STRATA_EVAL_DATABASE_URL by TestEvalAnswers): the lexical channel's
// document evidence (Params.DocTermDiscount x DocContext) by kind, layer
// named, on the split STRATA_EVAL_SPLIT (default train), and the
// similarity marks that best separate answerable questions with the right
// passage first from unanswerable ones. docs/retrieval.md has the tables.
func TestTuneAnswers(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" || os.Getenv("STRATA_EVAL_TUNE") != "1" {
		t.Skip("set STRATA_EVAL=1 STRATA_EVAL_TUNE=1 to measure settings on the answer-quality evaluation")
	}
	split := os.Getenv("STRATA_EVAL_SPLIT")
	if split == "" || split == "both" {
		split = "train"
	}
	all, emb, st := tuneAnswersSetup(t)
	var qs []answers.Question
	for _, q := range all {
		if q.Split == split {
			qs = append(qs, q)
		}
	}
	ctx := context.Background()
	// Each cell is discount,context[,clause words weight]; by default the
	// defaults.
	d := retrieve.DefaultParams()
	grid := [][3]float64{{d.DocTermDiscount, d.DocContext, d.ClauseWords}}
	if g := os.Getenv("STRATA_EVAL_TUNE_GRID"); g != "" {
		grid = nil
		for _, cell := range strings.Fields(g) {
			v := [3]float64{0, 0, d.ClauseWords}
			parts := strings.Split(cell, ",")
			if len(parts) < 2 || len(parts) > 3 {
				t.Fatalf("grid cell %q: want discount,context[,clausewords]", cell)
			}
			for i, x := range parts {
				f, err := strconv.ParseFloat(x, 64)
				if err != nil {
					t.Fatalf("grid cell %q: %v", cell, err)
				}
				v[i] = f
			}
			grid = append(grid, v)
		}
	}
	kinds := strings.Fields(os.Getenv("STRATA_EVAL_TUNE_KINDS"))
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	t.Logf("%s split, layer named: hit@1 hit@5 MRR", split)
	for _, cell := range grid {
		a, c, w := cell[0], cell[1], cell[2]
		s := NewWithOptions(st, Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots,
			Tune: func(p *retrieve.Params) {
				p.DocTermDiscount, p.DocContext, p.ClauseWords = a, c, w
				if n, err := strconv.Atoi(os.Getenv("STRATA_EVAL_TUNE_CANDIDATES")); err == nil {
					p.ImpactCandidates = n
				}
			}})
		var runs []answersRun
		for _, q := range qs {
			if len(want) > 0 && !want[q.Kind] {
				continue
			}
			runs = append(runs, runAnswer(ctx, t, s, q, []string{q.Layer}))
		}
		by := summarise(runs)
		var parts []string
		for _, k := range answers.Kinds {
			if sc, ok := by[k]; ok {
				parts = append(parts, fmt.Sprintf("%s %.2f %.2f %.2f", k, sc.hit1, sc.hit5, sc.mrr))
			}
		}
		t.Logf("discount %.2f context %.2f clause words %.2f | %s", a, c, w, strings.Join(parts, " | "))
		if len(grid) == 1 {
			logMarks(t, runs)
			for _, r := range runs {
				if r.q.Kind != answers.KindUnanswerable && r.rank != 1 && os.Getenv("STRATA_EVAL_MISSES") == "1" {
					t.Logf("miss %s (rank %d): %s\n\t%s", r.q.ID, r.rank, r.q.Question, strings.Join(r.top, "\n\t"))
				}
			}
		}
	}
}

// logMarks prints the top similarity of unanswerable questions and of
// answerable ones with the right passage first, and for each candidate
// mark the share of each on the wrong side (unanswerable at or above it,
// right-first below it).
func logMarks(t *testing.T, runs []answersRun) {
	var un, right []float64
	exactRight := 0
	for _, r := range runs {
		switch {
		case r.q.Kind == answers.KindUnanswerable:
			un = append(un, r.topSim)
		case r.rank == 1:
			right = append(right, r.topSim)
			if r.exactTop {
				exactRight++
			}
		}
	}
	sort.Float64s(un)
	sort.Float64s(right)
	t.Logf("unanswerable top similarities (%d): %.3f", len(un), un)
	t.Logf("right-first top similarities (%d, %d of them exact sections): %.3f", len(right), exactRight, right)
	best, bestErr := 0.0, 3.0
	for m := 0.30; m <= 0.701; m += 0.01 {
		ua, rb := 0, 0
		for _, x := range un {
			if x >= m {
				ua++
			}
		}
		for _, x := range right {
			if x < m {
				rb++
			}
		}
		eu, er := float64(ua)/float64(max(1, len(un))), float64(rb)/float64(max(1, len(right)))
		t.Logf("mark %.2f: unanswerable at or above %.2f, right-first below %.2f, sum %.2f", m, eu, er, eu+er)
		if eu+er < bestErr-1e-9 {
			best, bestErr = m, eu+er
		}
	}
	t.Logf("mark minimising the sum of both error rates: %.2f (sum %.2f)", best, bestErr)
}

// tuneAnswersSetup is what the tuning tests read: the answer set's
// questions, the evaluation's model (STRATA_EVAL_MODEL, the model
// TestEvalAnswers embedded the layers with) and the store over
// STRATA_EVAL_DATABASE_URL.
func tuneAnswersSetup(t *testing.T) ([]answers.Question, embed.Embedder, *store.Corpus) {
	t.Helper()
	evalDir := filepath.Join(testenv.RepoRoot(t), "eval", "answers")
	all, err := answers.LoadQuestions(filepath.Join(evalDir, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	emb := loadEvalModel(t)
	_, url := poolFromEnv(t, "STRATA_EVAL_DATABASE_URL")
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return all, emb, st
}

// markErr is one candidate medium mark's errors on a set of runs: the share
// of unanswerable questions whose best similarity reaches it, and of
// answerable ones with the right passage first that fall below it.
type markErr struct {
	mark, unansAbove, rightBelow float64
	nUnans, nRight               int
}

func (m markErr) sum() float64 { return m.unansAbove + m.rightBelow }

func marksOn(runs []answersRun, mark float64) markErr {
	e := markErr{mark: mark}
	var ua, rb int
	for _, r := range runs {
		switch {
		case r.q.Kind == answers.KindUnanswerable:
			e.nUnans++
			if r.bestSim >= mark {
				ua++
			}
		case r.rank == 1:
			e.nRight++
			if r.bestSim < mark {
				rb++
			}
		}
	}
	e.unansAbove = float64(ua) / float64(max(1, e.nUnans))
	e.rightBelow = float64(rb) / float64(max(1, e.nRight))
	return e
}

// bestMark is the medium mark (0.30 to 0.95 by 0.01) that minimises the sum
// of both error rates on runs; a tie goes to the higher mark, which keeps
// more unanswerable questions low.
func bestMark(runs []answersRun) markErr {
	best := markErr{mark: -1}
	for m := 0.30; m <= 0.951; m += 0.01 {
		e := marksOn(runs, m)
		if best.mark < 0 || e.sum() <= best.sum()+1e-9 {
			best = e
		}
	}
	return best
}

// logLOCOMarks chooses the similarity medium mark leaving one corpus (one
// layer of the answer set) out at a time: the mark is chosen on the other
// layers and its errors are measured on the one left out. It prints each
// fold, the spread, and the mark chosen on every layer together, which is
// the one to store (model_search_params.confidence_medium).
func logLOCOMarks(t *testing.T, model string, runs []answersRun) {
	byLayer := map[string][]answersRun{}
	for _, r := range runs {
		byLayer[r.q.Layer] = append(byLayer[r.q.Layer], r)
	}
	var layers []string
	for l := range byLayer {
		layers = append(layers, l)
	}
	sort.Strings(layers)
	t.Logf("similarity medium mark for %s, leave one corpus out (chosen on the others, measured on the one left out):", model)
	t.Logf("| left out | mark | unanswerable at or above | right-first below | n unanswerable / right-first |")
	var sums []float64
	for _, out := range layers {
		var rest []answersRun
		for _, l := range layers {
			if l != out {
				rest = append(rest, byLayer[l]...)
			}
		}
		m := bestMark(rest)
		e := marksOn(byLayer[out], m.mark)
		sums = append(sums, e.sum())
		t.Logf("| %s | %.2f | %.2f | %.2f | %d / %d |", out, m.mark, e.unansAbove, e.rightBelow, e.nUnans, e.nRight)
	}
	sort.Float64s(sums)
	all := bestMark(runs)
	t.Logf("held-out error sums: min %.2f median %.2f max %.2f; mark on every layer: %.2f (unanswerable at or above %.2f, right-first below %.2f)",
		sums[0], sums[len(sums)/2], sums[len(sums)-1], all.mark, all.unansAbove, all.rightBelow)
}

// TestTuneSimilarityContrast (STRATA_EVAL=1 STRATA_EVAL_TUNE=1, the answer
// layers already embedded in STRATA_EVAL_DATABASE_URL for
// STRATA_EVAL_MODEL) measures whether a similarity read against the
// layer's own background separates answerable from unanswerable questions
// better than the best cosine alone: per question, the 50 nearest chunks
// of its layer; AUC of the best cosine, of the best less the mean of the
// 50, and of that gap over their standard deviation.
func TestTuneSimilarityContrast(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" || os.Getenv("STRATA_EVAL_TUNE") != "1" {
		t.Skip("set STRATA_EVAL=1 STRATA_EVAL_TUNE=1")
	}
	all, emb, st := tuneAnswersSetup(t)
	ctx := context.Background()
	layers, err := st.Layers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, l := range layers {
		ids[l.Name] = l.ID
	}
	for _, split := range []string{"train", "test"} {
		var best, gap, z []answersRun
		for _, q := range all {
			if q.Split != split {
				continue
			}
			v, err := emb.Embed(ctx, []string{q.Question})
			if err != nil {
				t.Fatal(err)
			}
			hits, err := st.SearchVectors(ctx, store.VectorQuery{Model: emb.Model().Name, Dims: len(v[0]), Vector: v[0],
				LayerIDs: []int64{ids[q.Layer]}, Limit: 50, EFSearch: 100})
			if err != nil || len(hits) < 2 {
				t.Fatalf("%s: %d hits, %v", q.ID, len(hits), err)
			}
			var sum, sq float64
			for _, h := range hits {
				sum += h.Similarity
				sq += h.Similarity * h.Similarity
			}
			n := float64(len(hits))
			mean := sum / n
			sd := math.Sqrt(math.Max(sq/n-mean*mean, 1e-9))
			b := hits[0].Similarity
			best = append(best, answersRun{q: q, bestSim: b})
			gap = append(gap, answersRun{q: q, bestSim: b - mean})
			z = append(z, answersRun{q: q, bestSim: (b - mean) / sd})
		}
		t.Logf("%s, %s: AUC best cosine %.3f, best less the mean of 50 %.3f, that over their deviation %.3f",
			evalModelName(), split, similarityAUC(best), similarityAUC(gap), similarityAUC(z))
	}
}
