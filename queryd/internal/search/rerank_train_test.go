package search

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// TestTrainReranker (STRATA_EVAL=1 STRATA_TRAIN_RERANKER=1) fits the
// offline reranker (package lrank) on SciFact's train judgments: each train
// query's hybrid top rerankDepth candidates become examples, the L2 penalty
// is chosen by 5-fold cross-validation with folds grouped so that queries
// sharing a relevant document stay together, and the model is fitted on all
// train queries. It then reports, on the test queries, nDCG@10 of the top 10
// in fusion order against the same 10 reranked (what strata_ask with top_k
// 10 returns), also on the test queries whose relevant documents no train
// query has, and how often the best result is relevant per probability
// band. With STRATA_WRITE_WEIGHTS=PATH it writes the model as Go source.
func TestTrainReranker(t *testing.T) {
	if os.Getenv("STRATA_TRAIN_RERANKER") != "1" {
		t.Skip("set STRATA_EVAL=1 STRATA_TRAIN_RERANKER=1 to train the offline reranker")
	}
	e := setupEval(t)
	ctx := context.Background()
	eng := retrieve.New(e.store, retrieve.Options{Embedder: e.emb, KeywordSlots: 1})
	layers := []store.Layer{e.layer}
	const rerankDepth = 30
	lists := map[string][]retrieve.Candidate{}
	for _, qrels := range []map[string]map[string]bool{e.data.train, e.data.test} {
		for qid := range qrels {
			out, err := eng.Query(retrieve.Query{Text: e.data.queries[qid], TopK: rerankDepth}).Search(ctx, layers)
			if err != nil {
				t.Fatal(err)
			}
			lists[qid] = out.Candidates
		}
	}
	examples := func(qrels map[string]map[string]bool, groups map[string]int, depth int) []lrank.Example {
		var ex []lrank.Example
		qids := sortedKeys(qrels)
		for _, qid := range qids {
			cs := lists[qid]
			if len(cs) > depth {
				cs = cs[:depth]
			}
			fs := lrank.Features(e.data.queries[qid], lrankCandidates(cs))
			for i, c := range cs {
				ex = append(ex, lrank.Example{F: fs[i], Rel: qrels[qid][e.chunkDoc[c.ChunkID]], Group: groups[qid], Query: qid})
			}
		}
		return ex
	}
	rel := map[string][]string{}
	for q, ds := range e.data.train {
		for d := range ds {
			rel[q] = append(rel[q], d)
		}
	}
	groups := lrank.Groups(rel)
	train := examples(e.data.train, groups, rerankDepth)

	// ndcgOf ranks each query's examples by score (ties by list order) and
	// scores the document ranking against the judgments.
	ndcgOf := func(ex []lrank.Example, score func(lrank.Example) float64, qrels map[string]map[string]bool, depth int) float64 {
		byQ := map[string][]int{}
		for i, x := range ex {
			byQ[x.Query] = append(byQ[x.Query], i)
		}
		sum := 0.0
		for q, idx := range byQ {
			if len(idx) > depth {
				idx = idx[:depth]
			}
			sorted := append([]int(nil), idx...)
			sort.SliceStable(sorted, func(a, b int) bool { return score(ex[sorted[a]]) > score(ex[sorted[b]]) })
			cs := lists[q]
			var ids []int64
			for _, i := range sorted {
				ids = append(ids, cs[i-idx[0]].ChunkID)
			}
			sum += ndcg10(e.docs(ids), qrels[q])
		}
		return sum / float64(len(qrels))
	}

	folds := lrank.Folds(train, 5)
	bestL2, bestCV := 0.0, -1.0
	for _, l2 := range []float64{0.001, 0.01, 0.1, 1} {
		cv := 0.0
		for k := range folds {
			in := map[int]bool{}
			for _, i := range folds[k] {
				in[i] = true
			}
			var fit, held []lrank.Example
			heldQ := map[string]map[string]bool{}
			for i, x := range train {
				if in[i] {
					held = append(held, x)
					heldQ[x.Query] = e.data.train[x.Query]
				} else {
					fit = append(fit, x)
				}
			}
			m := lrank.Fit(fit, l2, "cv")
			cv += ndcgOf(held, func(x lrank.Example) float64 { return m.Prob(x.F) }, heldQ, 10)
		}
		cv /= float64(len(folds))
		t.Logf("l2 %.3f: grouped 5-fold nDCG@10 (top 10 reranked) %.4f", l2, cv)
		if cv > bestCV {
			bestL2, bestCV = l2, cv
		}
	}
	m := lrank.Fit(train, bestL2, fmt.Sprintf("lrank-scifact-l2-%g@1", bestL2))

	test := examples(e.data.test, nil, 10)
	fusion := func(x lrank.Example) float64 { return 0 } // stable sort keeps fusion order
	model := func(x lrank.Example) float64 { return m.Prob(x.F) }
	// Test queries none of whose relevant documents a train query has.
	trainDocs := map[string]bool{}
	for _, ds := range e.data.train {
		for d := range ds {
			trainDocs[d] = true
		}
	}
	unseen := map[string]map[string]bool{}
	for q, ds := range e.data.test {
		fresh := true
		for d := range ds {
			if trainDocs[d] {
				fresh = false
			}
		}
		if fresh {
			unseen[q] = ds
		}
	}
	var testUnseen []lrank.Example
	for _, x := range test {
		if unseen[x.Query] != nil {
			testUnseen = append(testUnseen, x)
		}
	}
	fmt.Printf("\nOffline reranker %s (features: %s)\n", m.Version, strings.Join(lrank.FeatureNames, ", "))
	fmt.Printf("| SciFact test, top 10 | queries | fusion order | reranked |\n|---|---|---|---|\n")
	fmt.Printf("| all | %d | %.4f | %.4f |\n", len(e.data.test), ndcgOf(test, fusion, e.data.test, 10), ndcgOf(test, model, e.data.test, 10))
	fmt.Printf("| relevant docs unseen in train | %d | %.4f | %.4f |\n", len(unseen), ndcgOf(testUnseen, fusion, unseen, 10), ndcgOf(testUnseen, model, unseen, 10))

	// Calibration: the best result's probability against whether it is
	// relevant, on the test queries.
	type band struct{ n, rel int }
	bands := map[int]*band{}
	byQ := map[string][]lrank.Example{}
	for _, x := range test {
		byQ[x.Query] = append(byQ[x.Query], x)
	}
	for _, xs := range byQ {
		best := xs[0]
		for _, x := range xs {
			if m.Prob(x.F) > m.Prob(best.F) {
				best = x
			}
		}
		b := int(math.Min(9, math.Floor(m.Prob(best.F)*10)))
		if bands[b] == nil {
			bands[b] = &band{}
		}
		bands[b].n++
		if best.Rel {
			bands[b].rel++
		}
	}
	fmt.Printf("\n| best result's probability | queries | relevant |\n|---|---|---|\n")
	for b := 9; b >= 0; b-- {
		if bd := bands[b]; bd != nil {
			fmt.Printf("| %.1f–%.1f | %d | %.0f %% |\n", float64(b)/10, float64(b+1)/10, bd.n, 100*float64(bd.rel)/float64(bd.n))
		}
	}
	if path := os.Getenv("STRATA_WRITE_WEIGHTS"); path != "" {
		if err := os.WriteFile(path, []byte(lrank.GoSource(m, "make train-reranker")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func lrankCandidates(cs []retrieve.Candidate) []lrank.Candidate {
	out := make([]lrank.Candidate, len(cs))
	for i, c := range cs {
		out[i] = lrank.FromRetrieve(c)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
