package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The answer set through extractive strata_ask (STRATA_EVAL=1; `make
// eval-answers`): every question of both splits is asked with mode
// extractive, its layer named, top_k 10, the offline reranker and the
// shipped sentence model. An answerable question is *answered* when the
// status is found or partly_found and a chosen sentence holds its gold
// quote (eval/answers' Hit on the sentence's text and file); *first* when
// the first sentence does; *found without gold* is found or partly_found
// with no chosen sentence holding it; *gold quotable* is the share whose
// gold is in one of the sentences the scorer saw or a named clause quoted
// (no choice of sentences can answer more). An unanswerable question should
// be not_found. Floors are asserted on the test split; the train split
// gives the marks (a simulation over the scored sentences, below).
//
// STRATA_SENTENCE_ROWS=path writes the scored sentences of the train split
// (features, passage probability, gold) as JSON lines for `make
// train-sentences`, which compares sentence models on them.

// extractiveFigure is one kind's measured share answered (unanswerable:
// not_found) on the test split; the floor is one question under it.
type extractiveFigure struct {
	n  int
	ok float64
}

// Measured on the test split on 2 December 2026 (docs/ask.md, "Extractive
// answers").
var extractiveFigures = map[string]extractiveFigure{}

// sentRow is one scored sentence as recorded.
type sentRow struct {
	F       []float64 `json:"f"`
	P       float64   `json:"p"` // its passage's probability
	Passage int       `json:"passage"`
	Gold    bool      `json:"gold"`
	File    string    `json:"file"`
	Text    string    `json:"text"`
}

// sentRecord is one question's scored sentences.
type sentRecord struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Split    string    `json:"split"`
	Question string    `json:"question"`
	Exact    bool      `json:"exact"` // a named clause came back
	WithCos  bool      `json:"with_cos"`
	Rows     []sentRow `json:"rows"`
}

// recordingSentences scores with the shipped offline scorer and keeps what
// it scored for the question being asked.
type recordingSentences struct {
	inner ask.OfflineSentences
	mu    sync.Mutex
	q     answers.Question
	rec   *sentRecord
}

func (r *recordingSentences) Name() string { return r.inner.Name() }

func (r *recordingSentences) ScoreSentences(ctx context.Context, q string, sents []ask.SentenceInput, cands []retrieve.Candidate) ([]float64, error) {
	rows, withCos := r.inner.Rows(ctx, q, sents)
	pp := r.inner.PassageProbs(q, cands)
	m := ask.DefaultSentenceModel.Lexical
	if withCos {
		m = ask.DefaultSentenceModel.WithCosine
	}
	out := ask.CombineSentences(sents, pp, m.Probs(rows))
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := &sentRecord{ID: r.q.ID, Kind: r.q.Kind, Split: r.q.Split, Question: q, WithCos: withCos}
	for i, s := range sents {
		row := sentRow{F: rows[i], Passage: s.Passage, Text: s.Text}
		if s.Passage >= 0 && s.Passage < len(cands) {
			c := cands[s.Passage]
			row.P, row.File = pp[s.Passage], c.File
			row.Gold = answers.Hit(r.q, c.Layer, c.File, s.Text)
		}
		rec.Rows = append(rec.Rows, row)
	}
	r.rec = rec
	return out, nil
}

// extractiveRun is one extractive answer to one question.
type extractiveRun struct {
	q        answers.Question
	status   ask.Status
	answered bool // found or partly_found with a chosen sentence holding gold
	first    bool // the first chosen sentence holds gold
	falseAns bool // found or partly_found without gold
	quotable bool // gold among the scored sentences or a quoted clause
	n        int  // sentences chosen
	rec      *sentRecord
}

func TestEvalExtractiveAnswers(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to run the extractive evaluation on the answer set")
	}
	layers, all, emb, url, _ := setupAnswers(t, "STRATA_EVAL_ANSWERS_DATABASE_URL")
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
	if len(stored) != len(layers) {
		t.Fatalf("the database holds %d layers, the answer set has %d: use a database of its own", len(stored), len(layers))
	}
	rec := &recordingSentences{inner: ask.OfflineSentences{Model: lrank.Default, Embedder: emb}}
	eng := retrieve.New(st, retrieve.Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots})
	a := ask.New(ask.Options{Engine: eng, Docs: st, Reranker: ask.Offline{Model: lrank.Default}, Sentences: rec})

	runs := map[string][]extractiveRun{}
	for _, q := range all {
		rec.mu.Lock()
		rec.q, rec.rec = q, nil
		rec.mu.Unlock()
		resp, err := a.Ask(ctx, ask.Request{Question: q.Question, Layers: []string{q.Layer}, TopK: 10,
			Mode: ask.ModeExtractive, ResponseFormat: ask.FormatDetailed})
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		r := extractiveRun{q: q, status: ask.Status(resp.AnswerStatus), n: len(resp.Answer), rec: rec.rec}
		if r.rec == nil {
			r.rec = &sentRecord{ID: q.ID, Kind: q.Kind, Split: q.Split, Question: q.Question}
		}
		for _, p := range resp.Passages {
			r.rec.Exact = r.rec.Exact || p.Match == "exact"
		}
		gold := false
		for i, s := range resp.Answer {
			if answers.Hit(q, s.Citation.Layer, s.Citation.File, s.Text) {
				gold = true
				r.first = r.first || i == 0
			}
		}
		for _, row := range r.rec.Rows {
			r.quotable = r.quotable || row.Gold
		}
		r.quotable = r.quotable || gold
		if r.status != ask.NotFound {
			r.answered, r.falseAns = gold, !gold
		}
		runs[q.Split] = append(runs[q.Split], r)
	}

	if p := os.Getenv("STRATA_SENTENCE_ROWS"); p != "" {
		var b strings.Builder
		for _, r := range runs["train"] {
			line, err := json.Marshal(r.rec)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the train split's scored sentences to %s", p)
	}

	for _, split := range []string{"train", "test"} {
		t.Logf("extractive answers, %s split, layer named, %s:", split, ask.DefaultSentenceModel.Version)
		t.Logf("| kind | n | answered | first sentence gold | found without gold | gold quotable | found / partly / not | sentences per answer |")
		t.Logf("|---|---|---|---|---|---|---|---|")
		for _, line := range extractiveTable(runs[split]) {
			t.Logf("%s", line)
		}
	}
	t.Logf("train split, the sentence mark simulated over the scored sentences (answers without a named clause):")
	for _, line := range markGrid(runs["train"]) {
		t.Logf("%s", line)
	}

	byKind := extractiveByKind(runs["test"])
	for kind, want := range extractiveFigures {
		got := byKind[kind]
		floor := want.ok - 1/float64(max(want.n, 1)) - 0.005
		if got.ok < floor {
			t.Errorf("%s: %.2f, floor %.2f (measured %.2f)", kind, got.ok, floor, want.ok)
		}
	}
}

// extractiveByKind is each kind's share answered (unanswerable: not_found),
// with "all answerable" over the answerable kinds.
func extractiveByKind(runs []extractiveRun) map[string]extractiveFigure {
	n, ok := map[string]int{}, map[string]int{}
	for _, r := range runs {
		kinds := []string{r.q.Kind}
		if r.q.Kind != answers.KindUnanswerable {
			kinds = append(kinds, "all answerable")
		}
		for _, k := range kinds {
			n[k]++
			if (r.q.Kind == answers.KindUnanswerable && r.status == ask.NotFound) || r.answered {
				ok[k]++
			}
		}
	}
	out := map[string]extractiveFigure{}
	for k, c := range n {
		out[k] = extractiveFigure{n: c, ok: float64(ok[k]) / float64(c)}
	}
	return out
}

func extractiveTable(runs []extractiveRun) []string {
	var lines []string
	kinds := append(append([]string{}, answers.Kinds...), "all answerable")
	for _, kind := range kinds {
		var n, answered, first, falseAns, quotable, sents int
		st := map[ask.Status]int{}
		for _, r := range runs {
			if r.q.Kind != kind && (kind != "all answerable" || r.q.Kind == answers.KindUnanswerable) {
				continue
			}
			n++
			st[r.status]++
			sents += r.n
			if r.answered {
				answered++
			}
			if r.first {
				first++
			}
			if r.falseAns {
				falseAns++
			}
			if r.quotable {
				quotable++
			}
		}
		if n == 0 {
			continue
		}
		f := func(x int) string { return fmt.Sprintf("%.2f", float64(x)/float64(n)) }
		if kind == answers.KindUnanswerable {
			lines = append(lines, fmt.Sprintf("| %s (not_found) | %d | %s | | %s | | %d / %d / %d | %.1f |", kind, n,
				f(st[ask.NotFound]), f(falseAns), st[ask.Found], st[ask.PartlyFound], st[ask.NotFound], float64(sents)/float64(n)))
			continue
		}
		lines = append(lines, fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %d / %d / %d | %.1f |", kind, n, f(answered), f(first),
			f(falseAns), f(quotable), st[ask.Found], st[ask.PartlyFound], st[ask.NotFound], float64(sents)/float64(n)))
	}
	return lines
}

// markGrid simulates, over the recorded sentences of the answers without a
// named clause, the rule of extract: the sentences at or above the mark,
// best first, at most ask.MaxAnswerSentences, the status on the best
// sentence's score (high mark ask.RerankHigh), then the names check. It
// ignores the token budget (five sentences nearly always fit). For each
// mark: answerable questions answered, unanswerable not_found, and the
// share of chosen sentences that hold gold.
func markGrid(runs []extractiveRun) []string {
	lines := []string{"| medium mark | answered | unanswerable not_found | chosen sentences holding gold | sentences per answer |", "|---|---|---|---|---|"}
	for _, mark := range []float64{0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6} {
		var nA, okA, nU, okU, chosen, chosenGold int
		for _, r := range runs {
			if r.rec.Exact {
				continue
			}
			type scored struct {
				s    float64
				gold bool
				src  ask.NameSource
			}
			m := ask.DefaultSentenceModel.Lexical
			if r.rec.WithCos {
				m = ask.DefaultSentenceModel.WithCosine
			}
			ins := make([]ask.SentenceInput, len(r.rec.Rows))
			pp := map[int]float64{}
			rows := make([][]float64, len(r.rec.Rows))
			maxP := 0
			for i, row := range r.rec.Rows {
				ins[i] = ask.SentenceInput{Text: row.Text, Passage: row.Passage}
				pp[row.Passage] = row.P
				rows[i] = row.F
				maxP = max(maxP, row.Passage+1)
			}
			pps := make([]float64, maxP)
			for k, v := range pp {
				if k >= 0 {
					pps[k] = v
				}
			}
			sc := ask.CombineSentences(ins, pps, m.Probs(rows))
			var ss []scored
			for i, row := range r.rec.Rows {
				ss = append(ss, scored{sc[i], row.Gold, ask.NameSource{Text: row.Text, File: row.File}})
			}
			sort.SliceStable(ss, func(x, y int) bool { return ss[x].s > ss[y].s })
			var pick []scored
			for _, s := range ss {
				if s.s < mark || len(pick) >= ask.MaxAnswerSentences {
					break
				}
				pick = append(pick, s)
			}
			status := ask.NotFound
			if len(pick) > 0 {
				status = ask.StatusFor(pick[0].s, ask.RerankHigh, mark)
			}
			srcs := make([]ask.NameSource, len(pick))
			gold := false
			for i, s := range pick {
				srcs[i] = s.src
				gold = gold || s.gold
				chosen++
				if s.gold {
					chosenGold++
				}
			}
			status = ask.CheckNames(status, ask.Names(r.q.Question), srcs, false, false).Status
			if r.q.Kind == answers.KindUnanswerable {
				nU++
				if status == ask.NotFound {
					okU++
				}
				continue
			}
			nA++
			if status != ask.NotFound && gold {
				okA++
			}
		}
		lines = append(lines, fmt.Sprintf("| %.2f | %.3f | %.3f | %.3f | %.1f |", mark, float64(okA)/float64(max(nA, 1)),
			float64(okU)/float64(max(nU, 1)), float64(chosenGold)/float64(max(chosen, 1)), float64(chosen)/float64(max(nA+nU, 1))))
	}
	return lines
}
