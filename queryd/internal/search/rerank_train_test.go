package search

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// rerankTopK is the candidate list the reranker is trained on: strata_ask
// reranks the merged top_k, and the evaluations ask for 10.
const rerankTopK = 10

// rerankAnswersShare is the answer set's share of the training weight
// (docs/ask.md, "The offline reranker").
const rerankAnswersShare = 0.5

// TestTrainReranker (STRATA_EVAL=1 STRATA_TRAIN_RERANKER=1, `make
// train-reranker`) fits the offline reranker (package lrank) on the lists
// strata_ask reranks: each question's top rerankTopK candidates, as its
// search (no rewrite provider) returns them, of SciFact's train claims and
// of the answer set's train questions (eval/answers, judged by
// answers.Hit), the latter with its layer named, routed, and over every
// layer (what a routing fallback searches). lrank.Train chooses the L2
// penalty by grouped cross-validation, fits on all train lists and reports
// on the test lists. STRATA_EVAL_DATABASE_URL holds SciFact's layer,
// STRATA_EVAL_ANSWERS_DATABASE_URL the answer set's (as for their
// evaluations). STRATA_RERANK_JUDGED=PATH keeps the judged lists: read
// when the file exists, written when it does not (so features and the fit
// can be changed without searching again; delete the file after a change
// to retrieval). With STRATA_WRITE_WEIGHTS=PATH it writes the model as Go
// source. STRATA_RERANK_DROP=a,b leaves those features out of the fit (to
// measure what each adds). The shipped model is no longer this full refit:
// on the 503-question set's lists a refit separated the test split's
// answers from its near misses worse than @5 did, so lrank-at5-no-number@8
// is @5 with no_number stacked on (lrank's TestStackNoNumber, on the
// judged lists this test keeps; docs/ask.md, "Near misses: no_number").
func TestTrainReranker(t *testing.T) {
	if os.Getenv("STRATA_TRAIN_RERANKER") != "1" {
		t.Skip("set STRATA_EVAL=1 STRATA_TRAIN_RERANKER=1 to train the offline reranker")
	}
	path := os.Getenv("STRATA_RERANK_JUDGED")
	var js []lrank.Judged
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			if js, err = lrank.ReadJudged(path); err != nil {
				t.Fatal(err)
			}
			t.Logf("read %d judged lists from %s", len(js), path)
		}
	}
	if js == nil {
		js = append(judgeSciFact(t), judgeAnswers(t)...)
		if path != "" {
			if err := lrank.WriteJudged(path, js); err != nil {
				t.Fatal(err)
			}
		}
	}
	pair := rerankPair(t)
	version := "lrank-scifact-answers-l2-%g@8"
	if pair > 0 {
		version = fmt.Sprintf("lrank-scifact-answers-pair%g-l2-%%g@8", pair)
	}
	tr := lrank.Train(js, lrank.TrainConfig{L2s: []float64{0.001, 0.003, 0.01, 0.03, 0.1}, Folds: 5,
		AnswersShare: rerankAnswersShare, Version: version, Pair: pair,
		Drop: strings.FieldsFunc(os.Getenv("STRATA_RERANK_DROP"), func(r rune) bool { return r == ',' })})
	fmt.Printf("\nOffline reranker %s\n\n%s", tr.Model.Version, tr.Report)
	if out := os.Getenv("STRATA_WRITE_WEIGHTS"); out != "" {
		if err := os.WriteFile(out, []byte(lrank.GoSource(tr.Model, "make train-reranker")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rerankPair is the weight of the pairwise term (lrank.FitMixed) of the
// shipped model (docs/ask.md, "The offline reranker"); STRATA_RERANK_PAIR
// overrides it (0: the pointwise fit alone).
func rerankPair(t *testing.T) float64 {
	v := os.Getenv("STRATA_RERANK_PAIR")
	if v == "" {
		return 1
	}
	p, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("STRATA_RERANK_PAIR=%q: %v", v, err)
	}
	return p
}

// judgeSciFact searches every SciFact train and test query as strata_ask
// does with the layer named and judges each candidate by its document.
func judgeSciFact(t *testing.T) []lrank.Judged {
	e := setupEval(t)
	ctx := context.Background()
	eng := retrieve.New(e.store, retrieve.Options{Embedder: e.emb, KeywordSlots: DefaultKeywordSlots, DocEvidenceEverywhere: true})
	snap, err := eng.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unseen := unseenTestQueries(e.data)
	var out []lrank.Judged
	for split, qrels := range map[string]map[string]map[string]bool{"train": e.data.train, "test": e.data.test} {
		for _, qid := range sortedKeys(qrels) {
			o, err := snap.Query(retrieve.Query{Text: e.data.queries[qid], TopK: rerankTopK}).Search(ctx, []store.Layer{e.layer})
			if err != nil {
				t.Fatal(err)
			}
			j := lrank.Judged{Set: lrank.SetSciFact, ID: qid, Split: split, Question: e.data.queries[qid],
				Relevant: sortedKeys(qrels[qid]), Unseen: split == "test" && unseen[qid]}
			for _, c := range o.Candidates {
				d := e.chunkDoc[c.ChunkID]
				j.Cands = append(j.Cands, lrank.FromRetrieve(c))
				j.Docs = append(j.Docs, d)
				j.Rel = append(j.Rel, qrels[qid][d])
			}
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Split > out[b].Split }) // train first, then test
	return out
}

// judgeAnswers searches every question of the answer set as strata_ask
// does: its layer named, routed (route.DecideWith, with the layers' own
// words), and, when routing chose
// layers, over every layer as a fallback would; each candidate is judged
// by answers.Hit.
func judgeAnswers(t *testing.T) []lrank.Judged {
	layers, all, emb, url, _ := setupAnswers(t, "STRATA_EVAL_ANSWERS_DATABASE_URL")
	ctx := context.Background()
	st, err := store.OpenCorpus(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	eng := retrieve.New(st, retrieve.Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots, DocEvidenceEverywhere: true})
	snap, err := eng.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := snap.Layers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(layers) {
		t.Fatalf("the database holds %d layers, the answer set has %d: use a database of its own", len(stored), len(layers))
	}
	byName := map[string]store.Layer{}
	for _, l := range stored {
		byName[l.Name] = l
	}
	var out []lrank.Judged
	for _, q := range all {
		var relevant []string
		seen := map[string]bool{}
		for _, g := range q.Gold {
			if d := q.Layer + "/" + g.File; !seen[d] {
				seen[d] = true
				relevant = append(relevant, d)
			}
		}
		sort.Strings(relevant)
		type search struct {
			mode   string
			layers []store.Layer
		}
		searches := []search{{"named", []store.Layer{byName[q.Layer]}}}
		if d := route.DecideWith(q.Question, stored, nil, snap.LayerWords(ctx, q.Question, stored, nil)); d.Routed {
			searches = append(searches, search{"routed", d.Layers}, search{"all", stored})
		} else {
			searches = append(searches, search{"routed", stored})
		}
		for _, s := range searches {
			o, err := snap.Query(retrieve.Query{Text: q.Question, TopK: rerankTopK}).Search(ctx, s.layers)
			if err != nil {
				t.Fatal(err)
			}
			j := lrank.Judged{Set: lrank.SetAnswers, ID: q.ID, Split: q.Split, Kind: q.Kind, Mode: s.mode,
				Question: q.Question, Relevant: relevant}
			for _, c := range o.Candidates {
				j.Cands = append(j.Cands, lrank.FromRetrieve(c))
				j.Docs = append(j.Docs, c.Layer+"/"+c.File)
				j.Rel = append(j.Rel, answers.Hit(q, c.Layer, c.File, c.Text))
			}
			out = append(out, j)
		}
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

// TestEvalRerankTradeoff (STRATA_EVAL=1 STRATA_EVAL_RERANK_TRADEOFF=1,
// with STRATA_EVAL_ANSWERS_DATABASE_URL) compares rerankers by what their
// marks can buy: it asks the answer set as TestEvalAskAnswers does with
// the shipped model (lrank.Default), prints the marks the rule chooses on
// all of train (chooseMarks) and, at that high mark, each medium mark's
// honest figures on the test split (simulated, named and routed), so that
// near_miss not_found and partly_found precision can be read at the same
// answered on the old questions.
func TestEvalRerankTradeoff(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" || os.Getenv("STRATA_EVAL_RERANK_TRADEOFF") != "1" {
		t.Skip("set STRATA_EVAL=1 STRATA_EVAL_RERANK_TRADEOFF=1 to compare rerankers' trade-offs")
	}
	_, all, emb, url, _ := setupAnswers(t, "STRATA_EVAL_ANSWERS_DATABASE_URL")
	ctx := context.Background()
	st, err := store.OpenCorpus(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	stored, err := st.Layers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eng := retrieve.New(st, retrieve.Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots, DocEvidenceEverywhere: true})
	opt := ask.Options{Engine: eng, Docs: st, Reranker: ask.Offline{Model: lrank.Default}}
	high, medium := ask.New(opt).Marks()
	if v := os.Getenv("STRATA_EVAL_RERANK_MARKS"); v != "" {
		if _, err := fmt.Sscanf(v, "%f/%f", &high, &medium); err != nil {
			t.Fatalf("STRATA_EVAL_RERANK_MARKS=%q: want HIGH/MEDIUM", v)
		}
		opt.RerankHigh, opt.RerankMedium = high, medium
	}
	a := ask.New(opt)
	dn := newDistinctiveNames(t, st, stored)
	runs := map[string]map[string][]askRun{"train": {}, "test": {}}
	for _, q := range all {
		runs[q.Split]["named"] = append(runs[q.Split]["named"], askOne(t, a, dn, q, []string{q.Layer}, high, medium))
		runs[q.Split]["routed"] = append(runs[q.Split]["routed"], askOne(t, a, dn, q, nil, high, medium))
	}
	train := append(append([]askRun(nil), runs["train"]["named"]...), runs["train"]["routed"]...)
	c := chooseMarks(train)
	fmt.Printf("\nreranker %s, asked at %.2f / %.2f; the rule on all of train: %.2f / %.2f (kept %v; train found %s, partly %s, unanswerable %s, old answered %s)\n",
		lrank.Default.Version, high, medium, c.high, c.medium, c.h.kept(), c.h.found, c.h.partly, c.h.unansAll, c.h.oldAnswered)
	for _, hi := range []float64{c.high, high} {
		fmt.Printf("\ntest split at high %.2f, simulated: found precision / partly precision / near_miss not_found / all unanswerable not_found / old answered\n", hi)
		fmt.Printf("| medium | named | routed |\n|---|---|---|\n")
		for m := 20; m <= 70; m += 5 {
			med := float64(m) / 100
			cell := func(rs []askRun) string {
				h := measureHonest(rs, hi, med)
				return fmt.Sprintf("%.3f / %.3f / %.3f / %.3f / %.3f", h.found.v(), h.partly.v(), h.nearMiss.v(), h.unansAll.v(), h.oldAnswered.v())
			}
			fmt.Printf("| %.2f | %s | %s |\n", med, cell(runs["test"]["named"]), cell(runs["test"]["routed"]))
		}
	}
}
