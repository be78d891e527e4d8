package lrank

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// The sets a judged list comes from.
const (
	SetSciFact = "scifact"
	SetAnswers = "answers"
)

// Judged is one candidate list as strata_ask's reranker sees it (the
// question's merged top_k), each candidate judged.
type Judged struct {
	Set   string `json:"set"`
	ID    string `json:"id"`    // the question's id
	Split string `json:"split"` // train or test
	// Kind is the answer set's kind of question ("" for SciFact); Mode how
	// the layers were chosen: "named", "routed" or "all" (the routing
	// fallback's search).
	Kind     string `json:"kind,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Question string `json:"question"`
	// Rel judges each candidate; Docs names its document (a document
	// counts once in nDCG); Relevant lists the question's relevant
	// documents (for nDCG's ideal and for grouping).
	Cands    []Candidate `json:"cands"`
	Rel      []bool      `json:"rel"`
	Docs     []string    `json:"docs"`
	Relevant []string    `json:"relevant"`
	// Unseen: a test question none of whose relevant documents is relevant
	// to a train question.
	Unseen bool `json:"unseen,omitempty"`
}

// Unanswerable says the question has no relevant document.
func (j Judged) Unanswerable() bool { return len(j.Relevant) == 0 }

// WriteJudged and ReadJudged keep judged lists as JSON lines, so that
// training can be repeated without the databases.
func WriteJudged(path string, js []Judged) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("lrank: write judged lists: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, j := range js {
		if err := enc.Encode(j); err != nil {
			f.Close()
			return fmt.Errorf("lrank: write judged lists: %w", err)
		}
	}
	return f.Close()
}

// ReadJudged reads what WriteJudged wrote.
func ReadJudged(path string) ([]Judged, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lrank: read judged lists: %w", err)
	}
	defer f.Close()
	var out []Judged
	dec := json.NewDecoder(f)
	for {
		var j Judged
		if err := dec.Decode(&j); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("lrank: read judged lists %s: %w", path, err)
		}
		out = append(out, j)
	}
}

// TrainConfig says how Train fits.
type TrainConfig struct {
	// L2s are the penalties tried by grouped cross-validation; Folds the
	// number of folds.
	L2s   []float64
	Folds int
	// AnswersShare is the answer set's share of the total weight (the rest
	// is SciFact's): each set's questions share its weight equally, and a
	// question's weight is shared by its lists and their candidates, so
	// 273 questions are not swamped by 809 claims nor a long list by a
	// short one.
	AnswersShare float64
	// Version names the model; "%g" in it is replaced by the chosen L2.
	Version string
	// Drop names features left out of the fit (their column is held at 0,
	// so their weight stays 0): what each feature adds is measured by
	// training without it.
	Drop []string
	// Pair weighs a pairwise term added to the pointwise log loss (FitMixed;
	// 0: the pointwise fit alone). The L2 is still chosen by the CV log
	// loss.
	Pair float64
}

// Trained is Train's outcome: the model and the report of how it was
// chosen and how it does on the test split.
type Trained struct {
	Model  Model
	L2     float64
	Report string
}

// CrossValidate fits fit on all folds but one in turn and scores the
// fold held out: it returns every candidate's out-of-fold probability, by
// list of train (ex and owner are Examples(train, …)), and the weighted
// log loss of the held-out examples read as held says (held[i] is ex[i],
// or the same candidate under another weighting, so that fits with
// different weightings compare on one scale).
func CrossValidate(train []Judged, ex, held []Example, owner [][2]int, folds [][]int, fit func([]Example) Model) (float64, [][]float64) {
	loss := 0.0
	scores := make([][]float64, len(train))
	for k := range folds {
		in := map[int]bool{}
		for _, i := range folds[k] {
			in[i] = true
		}
		var fitEx, heldEx []Example
		for i, x := range ex {
			if in[i] {
				heldEx = append(heldEx, held[i])
			} else {
				fitEx = append(fitEx, x)
			}
		}
		m := fit(fitEx)
		loss += LogLoss(m, heldEx) * weightOf(heldEx)
		for _, i := range folds[k] {
			li, ci := owner[i][0], owner[i][1]
			if scores[li] == nil {
				scores[li] = make([]float64, len(train[li].Cands))
			}
			scores[li][ci] = m.Prob(ex[i].F)
		}
	}
	return loss / weightOf(held), scores
}

// Train fits the reranker on the train split of js: it chooses the L2
// penalty by the weighted log loss of grouped cross-validation (questions
// that share a relevant document, across both sets, stay in one fold),
// fits on all of train and reports on the test split.
func Train(js []Judged, cfg TrainConfig) Trained {
	var b strings.Builder
	var train, test []Judged
	for _, j := range js {
		if j.Split == "train" {
			train = append(train, j)
		} else {
			test = append(test, j)
		}
	}
	ex, owner := Examples(train, cfg.AnswersShare)
	for _, name := range cfg.Drop {
		if i := slices.Index(FeatureNames, name); i >= 0 {
			for _, e := range ex {
				e.F[i] = 0
			}
		}
	}
	folds := Folds(ex, cfg.Folds)
	fmt.Fprintf(&b, "Training: %d train lists (%d candidates), %d test lists; answer set's share of the weight %.2f; pairwise term %g; features: %s\n\n",
		len(train), len(ex), len(test), cfg.AnswersShare, cfg.Pair, strings.Join(FeatureNames, ", "))
	fmt.Fprintf(&b, "| L2 | grouped %d-fold log loss | SciFact nDCG@10 | answer set gold first | AUC | medium mark (unanswerable 0.88) | answered there | gold returned |\n|---|---|---|---|---|---|---|---|\n", cfg.Folds)
	bestL2, bestLoss := 0.0, math.Inf(1)
	for _, l2 := range cfg.L2s {
		loss, scores := CrossValidate(train, ex, ex, owner, folds, func(fit []Example) Model { return FitMixed(fit, l2, cfg.Pair, "cv") })
		ev := Evaluate(train, scores)
		op := OperatingPoint(train, scores, 0.88)
		fmt.Fprintf(&b, "| %g | %.4f | %.4f | %.3f | %.3f | %.2f | %.3f | %.3f |\n", l2, loss, ev.NDCG, ev.GoldFirst, ev.AUC, op.Mark, op.Answered, op.GoldBack)
		if loss < bestLoss {
			bestL2, bestLoss = l2, loss
		}
	}
	version := strings.ReplaceAll(cfg.Version, "%g", fmt.Sprintf("%g", bestL2))
	m := FitMixed(ex, bestL2, cfg.Pair, version)
	fmt.Fprintf(&b, "\nChosen L2 %g; model %s\n\n", bestL2, version)
	fmt.Fprintf(&b, "| feature | weight (standardised) |\n|---|---|\n")
	for i, n := range FeatureNames {
		fmt.Fprintf(&b, "| %s | %+.3f |\n", n, m.Weights[i])
	}
	b.WriteString("\n")
	b.WriteString(Report(m, test))
	return Trained{Model: m, L2: bestL2, Report: b.String()}
}

func weightOf(ex []Example) float64 {
	s := 0.0
	for _, e := range ex {
		s += e.weight()
	}
	return s
}

// Examples turns judged lists into weighted examples, and says for each
// the list and candidate it came from. Groups join questions that share a
// relevant document (an unanswerable question is a group of its own).
func Examples(js []Judged, answersShare float64) ([]Example, [][2]int) {
	rel := map[string][]string{}
	lists := map[string]int{}
	questions := map[string]map[string]bool{}
	for _, j := range js {
		key := j.Set + "/" + j.ID
		rel[key] = nil
		for _, d := range j.Relevant {
			rel[key] = append(rel[key], j.Set+"/"+d)
		}
		lists[key]++
		if questions[j.Set] == nil {
			questions[j.Set] = map[string]bool{}
		}
		questions[j.Set][j.ID] = true
	}
	groups := Groups(rel)
	share := map[string]float64{SetSciFact: 1 - answersShare, SetAnswers: answersShare}
	if len(questions[SetAnswers]) == 0 {
		share[SetSciFact] = 1
	}
	if len(questions[SetSciFact]) == 0 {
		share[SetAnswers] = 1
	}
	var ex []Example
	var owner [][2]int
	for li, j := range js {
		key := j.Set + "/" + j.ID
		if len(j.Cands) == 0 {
			continue
		}
		w := share[j.Set] / float64(len(questions[j.Set])) / float64(lists[key]) / float64(len(j.Cands))
		fs := Features(j.Question, j.Cands)
		for ci := range j.Cands {
			ex = append(ex, Example{F: fs[ci], Rel: j.Rel[ci], Group: groups[key], Query: key, List: li, W: w})
			owner = append(owner, [2]int{li, ci})
		}
	}
	return ex, owner
}

// Scores scores every list with m.
func Scores(m Model, js []Judged) [][]float64 {
	out := make([][]float64, len(js))
	for i, j := range js {
		out[i] = m.Score(j.Question, j.Cands)
	}
	return out
}

// Evaluation is the measures of one scoring of judged lists.
type Evaluation struct {
	// NDCG is SciFact's mean nDCG@10 of the lists reordered by score (a
	// document by its best candidate), NDCGFusion the same in list order;
	// NDCGUnseen and NDCGUnseenFusion over the unseen questions.
	NDCG, NDCGFusion, NDCGUnseen, NDCGUnseenFusion float64
	NSciFact, NUnseen                              int
	// GoldFirst is the share of the answer set's answerable lists whose
	// best-scored candidate is gold; GoldFirstFusion the same in list
	// order. AUC is how often an answerable list that holds a gold
	// candidate scores its best above an unanswerable list's best.
	GoldFirst, GoldFirstFusion, AUC float64
	NAnswerable, NUnanswerable      int
}

// Evaluate measures scores (one per candidate of each list).
func Evaluate(js []Judged, scores [][]float64) Evaluation {
	var e Evaluation
	var pos, neg []float64
	for i, j := range js {
		s := scores[i]
		if len(s) != len(j.Cands) {
			continue
		}
		order := rankBy(s)
		switch j.Set {
		case SetSciFact:
			n, f := ndcg(j, order), ndcg(j, identity(len(s)))
			e.NSciFact++
			e.NDCG += n
			e.NDCGFusion += f
			if j.Unseen {
				e.NUnseen++
				e.NDCGUnseen += n
				e.NDCGUnseenFusion += f
			}
		case SetAnswers:
			best := 0.0
			if len(order) > 0 {
				best = s[order[0]]
			}
			if j.Unanswerable() {
				e.NUnanswerable++
				neg = append(neg, best)
				continue
			}
			e.NAnswerable++
			if len(order) > 0 && j.Rel[order[0]] {
				e.GoldFirst++
			}
			if slices.Contains(j.Rel, true) {
				pos = append(pos, best)
			}
			if len(order) > 0 && j.Rel[0] {
				e.GoldFirstFusion++
			}
		}
	}
	div := func(x float64, n int) float64 { return x / math.Max(1, float64(n)) }
	e.NDCG, e.NDCGFusion = div(e.NDCG, e.NSciFact), div(e.NDCGFusion, e.NSciFact)
	e.NDCGUnseen, e.NDCGUnseenFusion = div(e.NDCGUnseen, e.NUnseen), div(e.NDCGUnseenFusion, e.NUnseen)
	e.GoldFirst, e.GoldFirstFusion = div(e.GoldFirst, e.NAnswerable), div(e.GoldFirstFusion, e.NAnswerable)
	pairs := 0.0
	for _, p := range pos {
		for _, q := range neg {
			switch {
			case p > q:
				e.AUC++
			case p == q:
				e.AUC += 0.5
			}
			pairs++
		}
	}
	e.AUC /= math.Max(1, pairs)
	return e
}

// budgetTokens and passageOverhead approximate strata_ask's packing for
// the operating point: ANSWER_TOKEN_BUDGET's default, a token about four
// characters, and about 40 tokens of id, ref and citation per passage.
const (
	budgetTokens    = 1500
	passageOverhead = 40
)

// returned are the indexes strata_ask would hand back in score order: the
// first always, then each that still fits the budget.
func returned(j Judged, order []int) []int {
	left := budgetTokens
	var out []int
	for _, i := range order {
		cost := (len([]rune(j.Cands[i].Text))+3)/4 + passageOverhead
		if len(out) > 0 && cost > left {
			continue
		}
		left -= cost
		out = append(out, i)
	}
	return out
}

// Operating is the answer set's figures at one medium mark: answered is
// the share of answerable lists whose best score reaches the mark and
// whose returned candidates (returned) hold a gold one; unansNotFound the
// share of unanswerable lists whose best is under it.
type Operating struct {
	Mark, Answered, UnansNotFound, GoldBack float64
}

// OperatingPoint finds the lowest mark (in steps of 0.01) that keeps at
// least unansTarget of the unanswerable lists under it, and the figures
// there; At gives the figures at a given mark.
func OperatingPoint(js []Judged, scores [][]float64, unansTarget float64) Operating {
	best := Operating{Mark: 1}
	for m := 100; m >= 1; m-- {
		o := At(js, scores, float64(m)/100)
		if o.UnansNotFound < unansTarget {
			break
		}
		best = o
	}
	return best
}

// At is the answer set's figures at the medium mark.
func At(js []Judged, scores [][]float64, mark float64) Operating {
	o := Operating{Mark: mark}
	var nA, nU float64
	for i, j := range js {
		if j.Set != SetAnswers || len(scores[i]) != len(j.Cands) {
			continue
		}
		order := rankBy(scores[i])
		top := 0.0
		if len(order) > 0 {
			top = scores[i][order[0]]
		}
		if j.Unanswerable() {
			nU++
			if top < mark {
				o.UnansNotFound++
			}
			continue
		}
		nA++
		gold := false
		for _, k := range returned(j, order) {
			gold = gold || j.Rel[k]
		}
		if gold {
			o.GoldBack++
			if top >= mark {
				o.Answered++
			}
		}
	}
	o.Answered /= math.Max(1, nA)
	o.GoldBack /= math.Max(1, nA)
	o.UnansNotFound /= math.Max(1, nU)
	return o
}

// rankBy orders indexes by score, best first, ties in list order.
func rankBy(s []float64) []int {
	idx := identity(len(s))
	sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]] > s[idx[b]] })
	return idx
}

func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// ndcg is nDCG@10 with binary judgments of the list in order, a document
// counted at its first candidate.
func ndcg(j Judged, order []int) float64 {
	rel := map[string]bool{}
	for _, d := range j.Relevant {
		rel[d] = true
	}
	seen := map[string]bool{}
	var dcg float64
	r := 0
	for _, i := range order {
		d := j.Docs[i]
		if seen[d] {
			continue
		}
		seen[d] = true
		if r < 10 && rel[d] {
			dcg += 1 / math.Log2(float64(r)+2)
		}
		r++
	}
	var idcg float64
	for i := 0; i < 10 && i < len(rel); i++ {
		idcg += 1 / math.Log2(float64(i)+2)
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Report is the model's figures on judged lists (the test split): SciFact
// nDCG@10, the answer set's gold-first share and separation by kind, and
// the calibration of the best candidate's probability.
func Report(m Model, js []Judged) string {
	var b strings.Builder
	scores := Scores(m, js)
	ev := Evaluate(js, scores)
	fmt.Fprintf(&b, "| SciFact test, the lists reordered | queries | list order | reranked |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| all | %d | %.4f | %.4f |\n", ev.NSciFact, ev.NDCGFusion, ev.NDCG)
	fmt.Fprintf(&b, "| relevant documents no train query has | %d | %.4f | %.4f |\n\n", ev.NUnseen, ev.NDCGUnseenFusion, ev.NDCGUnseen)
	fmt.Fprintf(&b, "Answer set test: gold first %.3f (list order %.3f) of %d answerable lists; AUC %.3f against %d unanswerable lists\n\n",
		ev.GoldFirst, ev.GoldFirstFusion, ev.NAnswerable, ev.AUC, ev.NUnanswerable)
	for _, mark := range []float64{0.25, 0.3, 0.35, 0.4, 0.45, 0.5} {
		o := At(js, scores, mark)
		fmt.Fprintf(&b, "at medium mark %.2f: answered %.3f (gold returned %.3f), unanswerable under it %.3f\n", mark, o.Answered, o.GoldBack, o.UnansNotFound)
	}
	b.WriteString("\n")
	// By kind: gold first and the median best probability.
	type kind struct {
		n, first, firstFusion, goldIn int
		best                          []float64
	}
	kinds := map[string]*kind{}
	var names []string
	for i, j := range js {
		if j.Set != SetAnswers {
			continue
		}
		k := kinds[j.Kind]
		if k == nil {
			k = &kind{}
			kinds[j.Kind] = k
			names = append(names, j.Kind)
		}
		k.n++
		order := rankBy(scores[i])
		if len(order) == 0 {
			k.best = append(k.best, 0)
			continue
		}
		k.best = append(k.best, scores[i][order[0]])
		if j.Rel[order[0]] {
			k.first++
		}
		if j.Rel[0] {
			k.firstFusion++
		}
		for _, r := range j.Rel {
			if r {
				k.goldIn++
				break
			}
		}
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "| kind | lists | gold in list | gold first, list order | reranked | median best probability |\n|---|---|---|---|---|---|\n")
	for _, n := range names {
		k := kinds[n]
		sort.Float64s(k.best)
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.2f |\n", n, k.n, k.goldIn, k.firstFusion, k.first, k.best[len(k.best)/2])
	}
	// Calibration: the best candidate's probability against whether it is
	// relevant, per set.
	for _, set := range []string{SetSciFact, SetAnswers} {
		type band struct{ n, rel, unans int }
		bands := map[int]*band{}
		for i, j := range js {
			if j.Set != set || len(scores[i]) == 0 {
				continue
			}
			o := rankBy(scores[i])
			p := scores[i][o[0]]
			bi := int(math.Min(9, math.Floor(p*10)))
			if bands[bi] == nil {
				bands[bi] = &band{}
			}
			bands[bi].n++
			if j.Rel[o[0]] {
				bands[bi].rel++
			}
			if j.Unanswerable() {
				bands[bi].unans++
			}
		}
		fmt.Fprintf(&b, "\n%s test: the best candidate's probability\n\n| probability | lists | best is relevant | unanswerable |\n|---|---|---|---|\n", set)
		for bi := 9; bi >= 0; bi-- {
			if bd := bands[bi]; bd != nil {
				fmt.Fprintf(&b, "| %.1f–%.1f | %d | %.0f %% | %d |\n", float64(bi)/10, float64(bi+1)/10, bd.n, 100*float64(bd.rel)/float64(bd.n), bd.unans)
			}
		}
	}
	return b.String()
}
