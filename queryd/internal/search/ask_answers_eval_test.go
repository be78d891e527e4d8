package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The answer-quality set through strata_ask (STRATA_EVAL=1; `make eval`
// and `make eval-answers`): the layers of eval/answers are ingested as
// TestEvalAnswers ingests them, and every question of both splits is asked
// twice, its layer named and routed, with the offline reranker, top_k 10
// and the detailed response. A question is judged by eval/answers' Hit on
// the returned passages: an answerable question is answered when its
// status is found or partly_found with a gold passage among them; found
// without one is a false answer; an unanswerable question should be
// not_found. The train split calibrates the rerank marks (a score band
// table and a grid of marks); floors are asserted on the test split.
// Every unanswerable kind (q.Unanswerable: unanswerable, near_miss,
// missing_section) should be not_found; ask_honest_eval_test.go measures
// whether each status is honest (issue 26: found and partly_found
// precision, not_found by unanswerable kind, a named document first,
// answered on the original questions; by layer too) and chooses the medium
// mark leaving one corpus out.
//
// STRATA_EVAL_ANSWERS_DATABASE_URL keeps the ingested layers between runs
// (the database must exist and hold only these layers: routing over a
// database that also holds SciFact would route differently); `make
// eval-answers` sets it to STRATA_EVAL_DATABASE_URL when it is not set.

// askFigure is one kind's measured figures on the test split: the share
// answered (for unanswerable questions: not_found) and the share found
// without a gold passage. The floor of each is one question under it
// (checkAskFloors): the share less 1/n, the ceiling the share plus 1/n,
// with 0.005 for the figures' rounding.
type askFigure struct{ ok, falseFound float64 }

// Measured on the test split on 6 December 2026 with bge-small-en-v1.5 as
// the embedding model (migration 0020's parameters) and the offline
// reranker lrank-scifact-answers-pair1-l2-0.003@5 at its marks 0.8 / 0.45,
// re-measured for this model (lrank.MeasuredMarks; a refit of the reranker
// on this model's lists ranked SciFact better but separated the answer
// set's statuses worse, so it was not kept: docs/embeddings.md). Named:
// answered 0.814, found without gold 0.000, unanswerable not_found 0.96
// (USE-lite's, 2 December: 0.805 and 0.84); routed the same. The issue's
// targets, over the answerable questions: answered >= 0.80, found without
// a gold passage <= 0.05; unanswerable not_found >= 0.85.
//
// The per-kind figures are the original questions' only (the old layers:
// oldLayerRuns), so that the new layers' questions of the same kinds do not
// move them; the new kinds and the new layers have the honest figures
// (ask_honest_eval_test.go). Re-measured on 6 December 2026 with issue 26's
// rules (documents a question names, sections that do not exist,
// distinctive names; commit ce5162c): every kind as before but two, each by
// one question, whose floors are lowered with them: named unanswerable
// 0.96 → 0.92 (23 of 25: unanswerable-028 "GopherCon Antarctica" and -044
// come back partly_found, at 0.48 and 0.66), routed paraphrase 0.15 → 0.08
// (1 of 13). Both moved with the product's new rules (the set's original
// questions are unchanged); the answers before them were not kept, so
// which rule moved each is not traced. The distinctive-names rule changed
// no status on this set (reportCommonNames). With the reranker
// lrank-at5-no-number@8 at 0.85 / 0.35 (6 December 2026) every kind is as
// before but unanswerable, one question more not_found each way (named
// 0.92 → 0.96, routed 0.96 → 1.00).
var askFiguresNamed = map[string]askFigure{
	answers.KindExact:        {1, 0},
	answers.KindLexical:      {1, 0},
	answers.KindParaphrase:   {0.08, 0},
	answers.KindCode:         {0.92, 0},
	answers.KindContract:     {0.81, 0},
	answers.KindTable:        {1, 0},
	answers.KindUnanswerable: {0.96, 0},
}

var askFiguresRouted = map[string]askFigure{
	answers.KindExact:        {1, 0},
	answers.KindLexical:      {1, 0},
	answers.KindParaphrase:   {0.08, 0},
	answers.KindCode:         {0.85, 0},
	answers.KindContract:     {0.81, 0},
	answers.KindTable:        {1, 0},
	answers.KindUnanswerable: {1, 0},
}

// askRun is one strata_ask answer to one question.
type askRun struct {
	q        answers.Question
	status   ask.Status
	gold     bool    // a returned passage holds a gold passage
	bestGold bool    // the passage with the best rerank score does
	best     float64 // the best rerank score of a returned passage, -1 for none
	exact    bool    // a named clause came back
	basis    string
	grounded bool
	// capped is, for an extractive answer, the best status it could have:
	// lower than its best passage's score gives when the sentences (their
	// choice, or the names check on them) lowered it, else found.
	capped  ask.Status
	sources []ask.NameSource
	// docs are the returned passages' documents as layer and file, for
	// measuring the names rule against whole documents.
	docs [][2]string
	// namesNote says the names check changed the answer or noted names.
	namesNote bool
	// names are the question's distinctive names: those held by less than
	// half the searched layers' passages (store NameShares over the
	// response's searched layers, as ask.distinctiveNames reads them), the
	// only names that decide the status.
	names []ask.Name
	// missingSection says a named section was found not to exist (the
	// notes of retrieve/missing.go, decided): the answer is not_found
	// whatever its passages score.
	missingSection bool
	// ceiling is the score of the passages a rule of ask says the status is
	// judged on when it is below the best's (checkValue's passages that
	// state the value, checkNameHolders' documents that hold a name);
	// +Inf when no rule lowered the status.
	ceiling float64
	// rowNamed says a returned passage holds the table row the question
	// names (ask's checkNamedRow): not_found by the score is partly_found.
	rowNamed bool
	// firstGold says the first returned passage is from a gold file of the
	// question's layer (a names_doc question brings its document first).
	firstGold bool
	notes     []string
	took      time.Duration
}

// statusWith is the status the answer would have had with the rerank marks
// high and medium: the rule of ask.respond for an answer without named
// clauses (a named section found not to exist makes it not_found; else the
// best returned passage's score, then the names check on the passages with
// the question's distinctive names only). An extractive answer's names
// check reads the chosen sentences, which the response no longer holds
// when it is not_found: whatever the sentences took from its status at the
// marks used (capped) they are taken to take at other marks too. Answers a
// named clause decided, or not on the rerank basis, keep theirs.
func (r askRun) statusWith(high, medium float64) ask.Status {
	if r.exact || r.basis != "rerank" || r.best < 0 {
		return r.status
	}
	if r.missingSection {
		return ask.NotFound
	}
	s := r.scoreStatus(high, medium)
	if !r.grounded {
		return lowerStatus(s, r.capped)
	}
	return ask.CheckNames(s, r.names, r.sources, false, r.grounded).Status
}

// loweredNoteRe matches the notes of ask's rules that judge the status on
// some of the passages and give their best score.
var loweredNoteRe = regexp.MustCompile(` score (\d+\.\d+)(?:, lower than the best passage|; the better-scoring ones come from documents that hold none)`)

// scoreCeiling is the lowest score the notes give the passages a rule
// judged the status on, +Inf when none does.
func scoreCeiling(notes []string) float64 {
	c := math.Inf(1)
	for _, n := range notes {
		if m := loweredNoteRe.FindStringSubmatch(n); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				c = math.Min(c, v)
			}
		}
	}
	return c
}

// scoreStatus is the status the answer's scores give at the marks, before
// the names check: the best score, under the ceiling a rule set, and a
// named table row making it at least partly_found.
func (r askRun) scoreStatus(high, medium float64) ask.Status {
	s := ask.StatusFor(math.Min(r.best, r.ceiling), high, medium)
	if r.rowNamed && s == ask.NotFound {
		s = ask.PartlyFound
	}
	return s
}

// missingNoteRe matches the notes of retrieve/missing.go that say a named
// section is not there ("No document of the searched layers (…) has
// Article 41." and "RFC 5321 (rfc5321.txt) has no section 8.7: its
// sections are 1–7, …"); undecidedNote the one that says it could not be
// looked up (no structure map), which leaves the status to the passages.
var missingNoteRe = regexp.MustCompile(`^No document of the searched layers \(.*\) has .+\.$|^.+ has no .+: (its |it has no ).+\.$`)

const undecidedNote = "could not be looked up by its number"

// sectionMissingIn reports whether the notes say, decided, that a section
// the question names is not there: what ask's sectionMissing reads from
// the lookup (a missing note and no undecided one).
func sectionMissingIn(notes []string) bool {
	missing := false
	for _, n := range notes {
		if strings.Contains(n, undecidedNote) {
			return false
		}
		missing = missing || missingNoteRe.MatchString(n)
	}
	return missing
}

// commonNameShare is ask's: a name held by this share of the searched
// layers' passages or more does not decide the status.
const commonNameShare = 0.5

// distinctiveNames returns the question's names that are not common in
// the layers searched, as strata_ask computes them (ask.distinctiveNames).
type distinctiveNames func(question string, searched []string) []ask.Name

func newDistinctiveNames(t *testing.T, st *store.Corpus, stored []store.Layer) distinctiveNames {
	ids := map[string]int64{}
	for _, l := range stored {
		ids[l.Name] = l.ID
	}
	return func(question string, searched []string) []ask.Name {
		names := ask.Names(question)
		if len(names) == 0 {
			return nil
		}
		texts := make([]string, len(names))
		for i, n := range names {
			texts[i] = n.Text
		}
		var layerIDs []int64
		for _, l := range searched {
			id, ok := ids[l]
			if !ok {
				t.Fatalf("searched layer %q is not in the database", l)
			}
			layerIDs = append(layerIDs, id)
		}
		shares, err := st.NameShares(context.Background(), texts, layerIDs)
		if err != nil {
			t.Fatal(err)
		}
		var out []ask.Name
		for i, n := range names {
			if shares[i] < commonNameShare {
				out = append(out, n)
			}
		}
		return out
	}
}

// lowerStatus is the lower of two statuses.
func lowerStatus(a, b ask.Status) ask.Status {
	if b.Rank() < a.Rank() {
		return b
	}
	return a
}

func TestEvalAskAnswers(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to run the answer-quality evaluation of strata_ask")
	}
	layers, all, emb, url, _ := setupAnswers(t, "STRATA_EVAL_ANSWERS_DATABASE_URL")
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	stored, err := st.Layers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(layers) {
		t.Fatalf("the database holds %d layers, the answer set has %d: use a database of its own", len(stored), len(layers))
	}
	eng := retrieve.New(st, retrieve.Options{Embedder: emb, KeywordSlots: DefaultKeywordSlots, DocEvidenceEverywhere: true})
	opt := ask.Options{Engine: eng, Docs: st, Reranker: ask.Offline{Model: lrank.Default}}
	high, medium := ask.New(opt).Marks()
	// STRATA_EVAL_RERANK_MARKS=HIGH/MEDIUM runs other marks for real (a
	// routing fallback starts on the medium mark, which the simulation
	// below cannot rerun); the floors hold for the defaults only.
	if v := os.Getenv("STRATA_EVAL_RERANK_MARKS"); v != "" {
		if _, err := fmt.Sscanf(v, "%f/%f", &high, &medium); err != nil {
			t.Fatalf("STRATA_EVAL_RERANK_MARKS=%q: want HIGH/MEDIUM, such as 0.8/0.5", v)
		}
		opt.RerankHigh, opt.RerankMedium = high, medium
	}
	a := ask.New(opt)
	dn := newDistinctiveNames(t, st, stored)

	began := time.Now()
	runs := map[string]map[string][]askRun{} // split → named/routed → runs
	for _, split := range []string{"train", "test"} {
		runs[split] = map[string][]askRun{}
		for _, q := range all {
			if q.Split != split {
				continue
			}
			runs[split]["named"] = append(runs[split]["named"], askOne(t, a, dn, q, []string{q.Layer}, high, medium))
			runs[split]["routed"] = append(runs[split]["routed"], askOne(t, a, dn, q, nil, high, medium))
		}
	}
	fmt.Printf("\nstrata_ask, answer set: %d questions asked twice (named and routed) in %s\n", len(all), time.Since(began).Round(time.Second))
	// The simulation of the marks must give the statuses the answers had.
	for _, split := range runs {
		for _, rs := range split {
			for _, r := range rs {
				// The response rounds scores to four places: a score within
				// rounding of a mark may fall either side of it.
				nearMark := math.Abs(r.best-high) < 5e-5 || math.Abs(r.best-medium) < 5e-5
				if s := r.statusWith(high, medium); s != r.status && !nearMark {
					t.Errorf("%s: statusWith the default marks gives %s, the answer was %s", r.q.ID, s, r.status)
				}
			}
		}
	}

	// Calibration on train: how often the best passage is a gold passage,
	// by its rerank score, and what other marks would give.
	train := append(append([]askRun(nil), runs["train"]["named"]...), runs["train"]["routed"]...)
	fmt.Printf("\nstrata_ask, answer set train split (named and routed, %d answers): the best returned passage by its rerank score\n", len(train))
	fmt.Printf("| rerank score | answers | best passage is gold | answerable | unanswerable |\n|---|---|---|---|---|\n")
	type band struct{ n, gold, answerable, unans int }
	bands := map[int]*band{}
	for _, r := range train {
		if r.best < 0 || r.exact {
			continue
		}
		b := int(math.Min(9, math.Floor(r.best*10)))
		if bands[b] == nil {
			bands[b] = &band{}
		}
		bd := bands[b]
		bd.n++
		if r.bestGold {
			bd.gold++
		}
		if r.q.Unanswerable() {
			bd.unans++
		} else {
			bd.answerable++
		}
	}
	for b := 9; b >= 0; b-- {
		if bd := bands[b]; bd != nil {
			fmt.Printf("| %.1f–%.1f | %d | %.0f %% | %d | %d |\n", float64(b)/10, float64(b+1)/10, bd.n,
				100*float64(bd.gold)/float64(bd.n), bd.answerable, bd.unans)
		}
	}
	type grid struct {
		high, medium float64
		m            askMeasure
	}
	var gs []grid
	for h := 50; h <= 95; h += 5 {
		for m := 10; m <= h; m += 5 {
			gs = append(gs, grid{float64(h) / 100, float64(m) / 100, measureAsk(train, float64(h)/100, float64(m)/100)})
		}
	}
	// Best first: those that keep false answers and unanswerable questions
	// within the targets, then by the share answered.
	within := func(g grid) bool { return g.m.falseFound <= 0.05 && g.m.unansNotFound >= 0.85 }
	sort.SliceStable(gs, func(i, j int) bool {
		if within(gs[i]) != within(gs[j]) {
			return within(gs[i])
		}
		if gs[i].m.answered != gs[j].m.answered {
			return gs[i].m.answered > gs[j].m.answered
		}
		if gs[i].m.falseFound != gs[j].m.falseFound {
			return gs[i].m.falseFound < gs[j].m.falseFound
		}
		return gs[i].m.unansNotFound > gs[j].m.unansNotFound
	})
	cur := measureAsk(train, high, medium)
	fmt.Printf("\nrerank marks on train, simulated (answered / found without gold / unanswerable not_found):\n")
	fmt.Printf("  current %.2f / %.2f: %s\n", high, medium, cur)
	for i := 0; i < 8 && i < len(gs); i++ {
		fmt.Printf("  %.2f / %.2f: %s\n", gs[i].high, gs[i].medium, gs[i].m)
	}

	// The medium mark alone, at the high mark in use, on train (chosen
	// from) and test (reported). Like the grid above it is simulated from
	// the answers given: a routing fallback that other marks would start or
	// stop (its trigger is the medium mark) is not run again, so routed
	// answers can differ when the marks are really changed.
	test := append(append([]askRun(nil), runs["test"]["named"]...), runs["test"]["routed"]...)
	fmt.Printf("\nthe medium mark at high %.2f, named and routed together, simulated:\n", high)
	for m := 20; m <= 60; m += 5 {
		med := float64(m) / 100
		fmt.Printf("  %.2f train: %s\n       test:  %s\n", med, measureAsk(train, high, med), measureAsk(test, high, med))
	}

	for _, split := range []string{"train", "test"} {
		for _, mode := range []string{"named", "routed"} {
			reportAsk(split, mode, runs[split][mode], high, medium)
			// The per-kind floors are the original questions': their layers.
			reportAsk(split, mode+", old layers only", oldLayerRuns(runs[split][mode]), high, medium)
			reportHonest(split, mode, runs[split][mode], high, medium)
		}
	}
	layerNames := make([]string, len(layers))
	for i, l := range layers {
		layerNames[i] = l.Name
	}
	for _, mode := range []string{"named", "routed"} {
		reportHonestByLayer("test", mode, runs["test"][mode], layerNames, high, medium)
	}
	askLOCO(runs, layerNames, high, medium)
	reportCommonNames(runs, high, medium)
	reportNamesInDocuments(t, runs, layers, high, medium)
	// STRATA_EVAL_ASK_DUMP=FILE writes one JSON line per answer (split,
	// mode, question, kind, layer, best score, gold returned, status) for
	// measuring marks outside the test.
	if path := os.Getenv("STRATA_EVAL_ASK_DUMP"); path != "" {
		dumpAskRuns(t, path, runs)
	}
	// STRATA_EVAL_ASK_LIST=1 lists every answer that missed (askMiss).
	if os.Getenv("STRATA_EVAL_ASK_LIST") == "1" {
		for _, split := range []string{"train", "test"} {
			for _, mode := range []string{"named", "routed"} {
				for _, r := range runs[split][mode] {
					if why := askMiss(r); why != "" {
						fmt.Printf("miss %s %s %s %s: %s, best %.2f, %s: %s\n", split, mode, r.q.ID, r.q.Kind, r.status, r.best, why, r.q.Question)
					}
				}
			}
		}
	}
	if v := os.Getenv("STRATA_EVAL_RERANK_MARKS"); v != "" {
		t.Skipf("marks %s run for measurement: floors not checked", v)
	}
	if evalModelName() != embed.DefaultLocalModel {
		t.Skipf("floors not checked: they are the default model's (%s), this run embeds with %s", embed.DefaultLocalModel, evalModelName())
	}
	checkAskFloors(t, "layer named", oldLayerRuns(runs["test"]["named"]), askFiguresNamed)
	checkAskFloors(t, "routed", oldLayerRuns(runs["test"]["routed"]), askFiguresRouted)
	checkHonestFloors(t, "layer named", measureHonest(runs["test"]["named"], high, medium), askHonestNamed)
	checkHonestFloors(t, "routed", measureHonest(runs["test"]["routed"], high, medium), askHonestRouted)
}

func askOne(t *testing.T, a *ask.Asker, dn distinctiveNames, q answers.Question, layers []string, high, medium float64) askRun {
	t.Helper()
	began := time.Now()
	resp, err := a.Ask(context.Background(), ask.Request{Question: q.Question, Layers: layers, TopK: answersTopK,
		ResponseFormat: ask.FormatDetailed})
	if err != nil {
		t.Fatalf("%s: %v", q.ID, err)
	}
	r := askRun{q: q, status: ask.Status(resp.AnswerStatus), best: -1, basis: resp.Basis,
		grounded: resp.Mode == ask.ModeGrounded, took: time.Since(began)}
	byPassage := map[string]float64{}
	for _, c := range resp.RetrievedChunks {
		if c.Passage != "" && c.RerankScore != nil {
			byPassage[c.Passage] = *c.RerankScore
		}
	}
	for _, n := range resp.Notes {
		r.namesNote = r.namesNote || strings.HasPrefix(n, "The question asks about ")
	}
	r.notes = resp.Notes
	// A document named by number that the layers lack (ask's absentNote),
	// a table's rows without the column asked for (ask's fieldNote) and
	// names no document holds together (partiesNote) and a value asked for
	// that no passage states (ask's checkValue) decide the status as a
	// missing section does.
	r.missingSection = sectionMissingIn(resp.Notes) || slices.ContainsFunc(resp.Notes, func(n string) bool {
		return strings.Contains(n, "which is not among the documents searched") || strings.Contains(n, ": the tables do not give it.") ||
			strings.Contains(n, ": the documents do not cover what the question names.") || strings.Contains(n, ", and no returned passage states one:") ||
			strings.Contains(n, ": they are about another version.")
	})
	r.ceiling = scoreCeiling(resp.Notes)
	r.rowNamed = slices.ContainsFunc(resp.Notes, func(n string) bool {
		return strings.Contains(n, " the question names: read it.") && strings.HasPrefix(n, "A returned passage (")
	})
	r.names = dn(q.Question, resp.SearchedLayers)
	bestID := ""
	for i, p := range resp.Passages {
		if i == 0 && p.Citation.Layer == q.Layer {
			for _, g := range q.Gold {
				r.firstGold = r.firstGold || g.File == p.Citation.File
			}
		}
		r.sources = append(r.sources, ask.NameSource{Text: p.Text, File: p.Citation.File})
		r.docs = append(r.docs, [2]string{p.Citation.Layer, p.Citation.File})
		if p.Match == "exact" {
			r.exact = true
		}
		if answers.Hit(q, p.Citation.Layer, p.Citation.File, p.Text) {
			r.gold = true
		}
		if s, ok := byPassage[p.ID]; ok && s > r.best {
			r.best, bestID = s, p.ID
		}
	}
	for _, p := range resp.Passages {
		if p.ID == bestID && answers.Hit(q, p.Citation.Layer, p.Citation.File, p.Text) {
			r.bestGold = true
		}
	}
	r.capped = ask.Found
	if !r.grounded && r.best >= 0 && r.status.Rank() < ask.StatusFor(r.best, high, medium).Rank() {
		r.capped = r.status
	}
	return r
}

// askMeasure is the three figures over a set of answers.
type askMeasure struct {
	nAnswerable, nUnans                 int
	answered, falseFound, unansNotFound float64
	// goldBack is the share of answerable questions with a gold passage
	// among the returned passages, whatever their status: what no marks
	// can raise answered above.
	goldBack float64
}

func (m askMeasure) String() string {
	return fmt.Sprintf("answered %.3f, found without gold %.3f, gold returned %.3f (n=%d); unanswerable not_found %.3f (n=%d)",
		m.answered, m.falseFound, m.goldBack, m.nAnswerable, m.unansNotFound, m.nUnans)
}

func measureAsk(rs []askRun, high, medium float64) askMeasure {
	var m askMeasure
	for _, r := range rs {
		s := r.statusWith(high, medium)
		if r.q.Unanswerable() {
			m.nUnans++
			if s == ask.NotFound {
				m.unansNotFound++
			}
			continue
		}
		m.nAnswerable++
		if r.gold {
			m.goldBack++
		}
		if s != ask.NotFound && r.gold {
			m.answered++
		}
		if s == ask.Found && !r.gold {
			m.falseFound++
		}
	}
	m.answered /= float64(max(1, m.nAnswerable))
	m.falseFound /= float64(max(1, m.nAnswerable))
	m.goldBack /= float64(max(1, m.nAnswerable))
	m.unansNotFound /= float64(max(1, m.nUnans))
	return m
}

// askKind is one kind's figures: ok is the share answered (answerable) or
// not_found (unanswerable), falseFound the share found without a gold
// passage.
type askKind struct {
	n                        int
	ok, falseFound, goldBack float64
	statuses                 map[ask.Status]int
}

func askByKind(rs []askRun) map[string]askKind {
	out := map[string]askKind{}
	for _, r := range rs {
		k := out[r.q.Kind]
		if k.statuses == nil {
			k.statuses = map[ask.Status]int{}
		}
		k.n++
		k.statuses[r.status]++
		if r.gold {
			k.goldBack++
		}
		if r.q.Unanswerable() {
			if r.status == ask.NotFound {
				k.ok++
			}
		} else if r.status != ask.NotFound && r.gold {
			k.ok++
		}
		if r.status == ask.Found && !r.gold {
			k.falseFound++
		}
		out[r.q.Kind] = k
	}
	for name, k := range out {
		k.ok /= float64(k.n)
		k.falseFound /= float64(k.n)
		k.goldBack /= float64(k.n)
		out[name] = k
	}
	return out
}

func reportAsk(split, mode string, rs []askRun, high, medium float64) {
	fmt.Printf("\nstrata_ask, answer set %s split, %s (marks %.2f / %.2f): %s\n", split, mode, high, medium, measureAsk(rs, high, medium))
	fmt.Printf("| kind | n | answered (unanswerable: not_found) | found without gold | gold returned | found | partly_found | not_found |\n|---|---|---|---|---|---|---|---|\n")
	byKind := askByKind(rs)
	for _, k := range answers.Kinds {
		s, ok := byKind[k]
		if !ok {
			continue
		}
		fmt.Printf("| %s | %d | %.2f | %.2f | %.2f | %d | %d | %d |\n", k, s.n, s.ok, s.falseFound, s.goldBack,
			s.statuses[ask.Found], s.statuses[ask.PartlyFound], s.statuses[ask.NotFound])
	}
	ds := make([]time.Duration, len(rs))
	for i, r := range rs {
		ds[i] = r.took
	}
	fmt.Printf("latency per question: p50 %s, p95 %s\n", percentile(ds, 0.5).Round(100*time.Microsecond), percentile(ds, 0.95).Round(100*time.Microsecond))
}

func checkAskFloors(t *testing.T, mode string, rs []askRun, figures map[string]askFigure) {
	t.Helper()
	if m := askFloorMisses(askByKind(rs), figures); len(m) > 0 {
		t.Errorf("strata_ask on the answer set's test split, %s:\n\t%s", mode, strings.Join(m, "\n\t"))
	}
}

// askFloorMisses names each kind's figure that is more than one question
// worse than its measured figure.
func askFloorMisses(got map[string]askKind, figures map[string]askFigure) []string {
	var misses []string
	for _, k := range answers.Kinds {
		f, ok := figures[k]
		if !ok {
			continue
		}
		g := got[k]
		if g.n == 0 {
			misses = append(misses, k+": no questions")
			continue
		}
		one := 1/float64(g.n) + 0.005
		if g.ok < f.ok-one {
			misses = append(misses, fmt.Sprintf("%s: %.2f answered (unanswerable: not_found), floor %.2f (figure %.2f)", k, g.ok, f.ok-one, f.ok))
		}
		if g.falseFound > f.falseFound+one {
			misses = append(misses, fmt.Sprintf("%s: %.2f found without a gold passage, ceiling %.2f (figure %.2f)", k, g.falseFound, f.falseFound+one, f.falseFound))
		}
	}
	return misses
}

// TestAskFloors runs without STRATA_EVAL: each figure passes its own floor,
// and one question fewer answered (or one more found without gold) than
// the floor allows fails it.
func TestAskFloors(t *testing.T) {
	t.Parallel()
	for name, figs := range map[string]map[string]askFigure{"named": askFiguresNamed, "routed": askFiguresRouted} {
		for _, k := range answers.Kinds {
			f, ok := figs[k]
			if !ok {
				// The per-kind figures are the original questions' (the
				// old layers): the new kinds have the honest figures.
				if k != answers.KindNamesDoc && k != answers.KindNearMiss && k != answers.KindMissingSection {
					t.Errorf("%s: no figure for %s", name, k)
				}
				continue
			}
			const n = 20
			at := map[string]askKind{k: {n: n, ok: f.ok, falseFound: f.falseFound}}
			if m := askFloorMisses(at, map[string]askFigure{k: f}); len(m) != 0 {
				t.Errorf("%s %s: the figure misses its own floor: %v", name, k, m)
			}
			worse := map[string]askKind{k: {n: n, ok: f.ok - 2.0/n, falseFound: f.falseFound + 2.0/n}}
			if m := askFloorMisses(worse, map[string]askFigure{k: f}); len(m) != 2 {
				t.Errorf("%s %s: two questions worse gave %v, want two misses", name, k, m)
			}
		}
	}
}

// reportNamesInDocuments measures what the spec's names rule costs on this
// set: the answered share when a name the question asks about may also be
// found anywhere in a returned passage's document, not only in the passage
// text or its file path (the spec's rule, which strata_ask follows). Contract
// questions name the parties, and a clause rarely repeats their names. Only
// grounded answers on the rerank basis are re-judged; the others keep their
// status.
func reportNamesInDocuments(t *testing.T, runs map[string]map[string][]askRun, layers []answers.Layer, high, medium float64) {
	t.Helper()
	evalDir := filepath.Join(testenv.RepoRoot(t), "eval", "answers")
	corpora := filepath.Join(testenv.SharedDir(t), "corpora")
	roots := map[string]string{}
	for _, l := range layers {
		roots[l.Name] = l.RootDir(evalDir, corpora)
	}
	docs := answers.NewDocs()
	// inDocuments is the status r would have had with the names matched in
	// the whole of each returned passage's document too.
	inDocuments := func(r askRun) ask.Status {
		s := r.statusWith(high, medium)
		if r.missingSection {
			return s
		}
		names := r.names
		withDocs := func() []ask.NameSource {
			srcs := append([]ask.NameSource(nil), r.sources...)
			for _, d := range r.docs {
				doc, err := docs.Get(filepath.Join(roots[d[0]], d[1]))
				if err != nil {
					t.Fatalf("%s: %v", r.q.ID, err)
				}
				srcs = append(srcs, ask.NameSource{Text: doc.Text, File: d[1]})
			}
			return srcs
		}
		switch {
		case r.grounded && !r.exact && r.basis == "rerank" && r.best >= 0:
			return ask.CheckNames(ask.StatusFor(r.best, high, medium), names, withDocs(), false, true).Status
		case !r.grounded && r.namesNote && s == ask.NotFound && len(ask.Missing(names, withDocs())) < len(names):
			// An extractive answer the names check made not_found had
			// sentences at or above the medium mark: with some name
			// found in the documents it is at least partly_found. (Its
			// check reads the passages of the chosen sentences; all
			// returned passages' documents are read here, an upper
			// bound.)
			return ask.PartlyFound
		}
		return s
	}
	fmt.Printf("\nthe names rule, measured: answered (contract answered) with names matched in the passages and file paths (the spec) / anywhere in the passages' documents\n")
	for _, split := range []string{"train", "test"} {
		for _, mode := range []string{"named", "routed"} {
			var n, nc, asSpec, asSpecC, inDocs, inDocsC, nu, unSpec, unDocs int
			for _, r := range runs[split][mode] {
				if r.q.Unanswerable() {
					nu++
					if r.statusWith(high, medium) == ask.NotFound {
						unSpec++
					}
					if inDocuments(r) == ask.NotFound {
						unDocs++
					} else if r.statusWith(high, medium) == ask.NotFound {
						fmt.Printf("    let through by the whole-document rule, %s %s %s: %s\n", split, mode, r.q.ID, r.q.Question)
					}
					continue
				}
				n++
				contract := r.q.Kind == answers.KindContract
				if contract {
					nc++
				}
				s := r.statusWith(high, medium)
				if s != ask.NotFound && r.gold {
					asSpec++
					if contract {
						asSpecC++
					}
				}
				s = inDocuments(r)
				if s != ask.NotFound && r.gold {
					inDocs++
					if contract {
						inDocsC++
					}
				}
			}
			fmt.Printf("  %s %s: %.3f (%.2f) / %.3f (%.2f), n=%d (contract %d); unanswerable not_found %.2f / %.2f (n=%d)\n", split, mode,
				float64(asSpec)/float64(max(1, n)), float64(asSpecC)/float64(max(1, nc)),
				float64(inDocs)/float64(max(1, n)), float64(inDocsC)/float64(max(1, nc)), n, nc,
				float64(unSpec)/float64(max(1, nu)), float64(unDocs)/float64(max(1, nu)), nu)
		}
	}
}

// dumpAskRuns writes each answer of runs as a JSON line to path.
func dumpAskRuns(t *testing.T, path string, runs map[string]map[string][]askRun) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, split := range []string{"train", "test"} {
		for _, mode := range []string{"named", "routed"} {
			for _, r := range runs[split][mode] {
				if err := enc.Encode(map[string]any{"split": split, "mode": mode, "id": r.q.ID, "kind": r.q.Kind,
					"layer": r.q.Layer, "best": r.best, "gold": r.gold, "best_gold": r.bestGold, "status": r.status,
					"capped": r.capped, "grounded": r.grounded, "exact": r.exact, "basis": r.basis,
					"question": r.q.Question, "sources": r.sources}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
