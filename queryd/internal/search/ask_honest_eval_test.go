package search

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/queryd/internal/ask"
)

// Honest statuses (issue 26, "Done when"), measured by TestEvalAskAnswers
// on the answer set: whether each status means what it says.
//
//   - found precision: of the answers with status found, the share whose
//     returned passages hold a gold passage (an unanswerable question found
//     is imprecise); partly_found precision the same for partly_found;
//   - not_found for each unanswerable kind: unanswerable (the original
//     ones, built from absent words), near_miss and missing_section;
//   - names_doc first: the share of questions naming a document whose first
//     returned passage is from that document (the gold file);
//   - answered on the old questions: found or partly_found with a gold
//     passage, over the original answerable questions (the old kinds on the
//     old layers), which must not fall below 0.80.
//
// Issue 26's targets: found precision >= 0.95, partly_found precision >=
// 0.80, not_found >= 0.85 for the unanswerable kinds (missing_section
// 1.00), names_doc first >= 0.95, answered on the old questions >= 0.80.

// oldLayers are the layers of the original 273 questions.
var oldLayers = map[string]bool{"contracts": true, "peps": true, "goblog": true, "standards": true, "codes": true}

// oldAnswerable reports whether q is one of the original answerable
// questions: an old kind on an old layer.
func oldAnswerable(q answers.Question) bool {
	return oldLayers[q.Layer] && !q.Unanswerable() && q.Kind != answers.KindNamesDoc
}

// oldLayerRuns keeps the answers to questions on the old layers: the
// per-kind figures (askFiguresNamed) are the original questions'.
func oldLayerRuns(rs []askRun) []askRun {
	var out []askRun
	for _, r := range rs {
		if oldLayers[r.q.Layer] {
			out = append(out, r)
		}
	}
	return out
}

// share is k of n.
type share struct{ k, n int }

func (s *share) add(ok bool) {
	s.n++
	if ok {
		s.k++
	}
}

// v is the share, NaN of none.
func (s share) v() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return float64(s.k) / float64(s.n)
}

func (s share) String() string {
	if s.n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f (%d/%d)", s.v(), s.k, s.n)
}

// honest is the figures over a set of answers.
type honest struct {
	found, partly share // precision
	// notFound: every unanswerable kind together, then each kind.
	unansAll, unans, nearMiss, missingSection share
	namesFirst                                share
	oldAnswered, answered                     share // answered: every answerable question
}

func measureHonest(rs []askRun, high, medium float64) honest {
	var h honest
	for _, r := range rs {
		s := r.statusWith(high, medium)
		switch s {
		case ask.Found:
			h.found.add(r.gold)
		case ask.PartlyFound:
			h.partly.add(r.gold)
		}
		if r.q.Unanswerable() {
			nf := s == ask.NotFound
			h.unansAll.add(nf)
			switch r.q.Kind {
			case answers.KindUnanswerable:
				h.unans.add(nf)
			case answers.KindNearMiss:
				h.nearMiss.add(nf)
			case answers.KindMissingSection:
				h.missingSection.add(nf)
			}
			continue
		}
		ok := s != ask.NotFound && r.gold
		h.answered.add(ok)
		if oldAnswerable(r.q) {
			h.oldAnswered.add(ok)
		}
		if r.q.Kind == answers.KindNamesDoc {
			h.namesFirst.add(r.firstGold)
		}
	}
	return h
}

// honestRow is one figure of a report: its name, its share and its target.
type honestRow struct {
	name   string
	s      share
	target float64
}

func (h honest) rows() []honestRow {
	return []honestRow{
		{"found precision", h.found, 0.95},
		{"partly_found precision", h.partly, 0.80},
		{"not_found, all unanswerable kinds", h.unansAll, 0.85},
		{"not_found, unanswerable (absent words)", h.unans, 0.85},
		{"not_found, near_miss", h.nearMiss, 0.85},
		{"not_found, missing_section", h.missingSection, 1},
		{"names_doc: the document first", h.namesFirst, 0.95},
		{"answered, old questions (old kinds, old layers)", h.oldAnswered, 0.80},
		{"answered, every answerable question", h.answered, 0},
	}
}

func reportHonest(split, mode string, rs []askRun, high, medium float64) {
	fmt.Printf("\nstrata_ask honest statuses, %s split, %s (marks %.2f / %.2f):\n", split, mode, high, medium)
	fmt.Printf("| figure | share (k/n) | target | met |\n|---|---|---|---|\n")
	for _, row := range measureHonest(rs, high, medium).rows() {
		target, met := "–", ""
		if row.target > 0 {
			target = fmt.Sprintf("≥ %.2f", row.target)
			met = "yes"
			if row.s.n > 0 && row.s.v() < row.target-1e-9 {
				met = "NO"
			}
		}
		fmt.Printf("| %s | %s | %s | %s |\n", row.name, row.s, target, met)
	}
}

// reportHonestByLayer prints the figures layer by layer; the answered
// column is every old-kind question of the layer (the layer's own for the
// new layers: their exact, lexical, paraphrase, code and table questions).
func reportHonestByLayer(split, mode string, rs []askRun, layers []string, high, medium float64) {
	by := map[string][]askRun{}
	for _, r := range rs {
		by[r.q.Layer] = append(by[r.q.Layer], r)
	}
	fmt.Printf("\nstrata_ask honest statuses by layer, %s split, %s (marks %.2f / %.2f):\n", split, mode, high, medium)
	fmt.Printf("| layer | found precision | partly precision | unanswerable not_found | near_miss not_found | missing_section not_found | names_doc first | answered (old kinds) |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range layers {
		h := measureHonest(by[l], high, medium)
		var old share
		for _, r := range by[l] {
			if !r.q.Unanswerable() && r.q.Kind != answers.KindNamesDoc {
				old.add(r.statusWith(high, medium) != ask.NotFound && r.gold)
			}
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", l, h.found, h.partly, h.unans, h.nearMiss, h.missingSection, h.namesFirst, old)
	}
}

// The leave-one-corpus-out rule for the marks (issue 26, item 5): on the
// train answers (named and routed) of every layer but one, the marks of
// the grid (high locoHighGrid, medium locoGrid) that keep found precision
// >= 0.95 and the original answerable questions answered >= 0.80 (the
// issue's floor: a mark that keeps its precision by calling answerable
// questions not_found is no more honest), as chooseMarks picks them.
// Simulated (statusWith): a routing fallback that another medium mark
// would start or stop is not run again.
var locoGrid = func() []float64 {
	var g []float64
	for m := 20; m <= 70; m += 5 {
		g = append(g, float64(m)/100)
	}
	return g
}()

var locoHighGrid = []float64{0.80, 0.82, 0.85, 0.87, 0.90, 0.92, 0.93, 0.95, 0.97}

// locoTargets are the rule's targets: the two it must keep, and the two
// it reports the margin to.
const (
	locoFound    = 0.95
	locoAnswered = 0.80
	locoPartly   = 0.80
	locoUnans    = 0.85
	noMarginGap  = 1.0 // the margin of a figure with no answers: nothing imprecise
)

// margin is the least margin of h over the four targets (>= 0: all met).
func (h honest) margin() float64 {
	m := math.Inf(1)
	for _, x := range []struct {
		s      share
		target float64
	}{{h.found, locoFound}, {h.partly, locoPartly}, {h.unansAll, locoUnans}, {h.oldAnswered, locoAnswered}} {
		d := noMarginGap
		if x.s.n > 0 {
			d = x.s.v() - x.target
		}
		m = math.Min(m, d)
	}
	return m
}

// kept reports whether h keeps the two targets the rule must keep.
func (h honest) kept() bool {
	return (h.found.n == 0 || h.found.v() >= locoFound) && (h.oldAnswered.n == 0 || h.oldAnswered.v() >= locoAnswered)
}

// locoChoice is a pair of marks and what they give.
type locoChoice struct {
	high, medium float64
	h            honest
}

// chooseMarks applies the rule to train: the lowest high mark of the grid
// at which some medium mark keeps both targets, found precision on every
// layer of train alone as well as on all of it (the issue prefers marks
// precise on every corpus to marks precise on average), and at it the
// medium mark with the most partly_found precision plus unanswerable
// not_found (a higher high mark only moves found answers to
// partly_found); if no pair keeps them, the pair with the best found
// precision.
func chooseMarks(train []askRun) locoChoice {
	byLayer := map[string][]askRun{}
	for _, r := range train {
		byLayer[r.q.Layer] = append(byLayer[r.q.Layer], r)
	}
	everyLayer := func(hi, m float64) bool {
		for _, rs := range byLayer {
			if f := measureHonest(rs, hi, m).found; f.n > 0 && f.v() < locoFound {
				return false
			}
		}
		return true
	}
	var fallback locoChoice
	bestFound := math.Inf(-1)
	for _, hi := range locoHighGrid {
		var best locoChoice
		bestScore := math.Inf(-1)
		for _, m := range locoGrid {
			if m > hi {
				break
			}
			h := measureHonest(train, hi, m)
			if f := h.found.v(); f > bestFound {
				fallback, bestFound = locoChoice{hi, m, h}, f
			}
			if score := h.partly.v() + h.unansAll.v(); h.kept() && score > bestScore && everyLayer(hi, m) {
				best, bestScore = locoChoice{hi, m, h}, score
			}
		}
		if bestScore > math.Inf(-1) {
			return best
		}
	}
	return fallback
}

// askLOCO runs the rule fold by fold (one fold a layer) and prints each
// fold's mark and the left-out layer's test figures at it, named and
// routed, then the spread over the folds.
func askLOCO(runs map[string]map[string][]askRun, layers []string, high, inUse float64) {
	train := append(append([]askRun(nil), runs["train"]["named"]...), runs["train"]["routed"]...)
	fmt.Printf("\nleave one corpus out: the marks chosen on the other layers' train answers (high %.2f–%.2f, medium %.2f–%.2f; in use %.2f / %.2f), measured on the left-out layer's test split (simulated):\n",
		locoHighGrid[0], locoHighGrid[len(locoHighGrid)-1], locoGrid[0], locoGrid[len(locoGrid)-1], high, inUse)
	fmt.Printf("| fold (left out) | marks | train: found / partly precision, unanswerable not_found, old answered; kept, least margin | mode | found precision | partly precision | unanswerable not_found | near_miss not_found | missing_section not_found | names_doc first | answered |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	type figs map[string][]float64 // figure → one value per fold with answers
	spread := map[string]figs{"named": {}, "routed": {}}
	var marks, highs []float64
	for _, out := range layers {
		var rest []askRun
		for _, r := range train {
			if r.q.Layer != out {
				rest = append(rest, r)
			}
		}
		c := chooseMarks(rest)
		marks = append(marks, c.medium)
		highs = append(highs, c.high)
		met := "no"
		if c.h.kept() {
			met = "yes"
		}
		for _, mode := range []string{"named", "routed"} {
			var test []askRun
			for _, r := range runs["test"][mode] {
				if r.q.Layer == out {
					test = append(test, r)
				}
			}
			h := measureHonest(test, c.high, c.medium)
			fmt.Printf("| %s | %.2f / %.2f | %.3f / %.3f, %.3f, %.3f; %s, %+.3f | %s | %s | %s | %s | %s | %s | %s | %s |\n", out, c.high, c.medium,
				c.h.found.v(), c.h.partly.v(), c.h.unansAll.v(), c.h.oldAnswered.v(), met, c.h.margin(), mode,
				h.found, h.partly, h.unans, h.nearMiss, h.missingSection, h.namesFirst, h.answered)
			for _, x := range []struct {
				name string
				s    share
			}{{"found precision", h.found}, {"partly precision", h.partly}, {"not_found, all unanswerable", h.unansAll},
				{"not_found, near_miss", h.nearMiss}, {"not_found, missing_section", h.missingSection},
				{"names_doc first", h.namesFirst}, {"answered", h.answered}} {
				if x.s.n > 0 {
					spread[mode][x.name] = append(spread[mode][x.name], x.s.v())
				}
			}
		}
	}
	sort.Float64s(marks)
	sort.Float64s(highs)
	fmt.Printf("high marks chosen: min %.2f, median %.2f, max %.2f; medium marks: min %.2f, median %.2f, max %.2f\n",
		highs[0], highs[len(highs)/2], highs[len(highs)-1], marks[0], marks[len(marks)/2], marks[len(marks)-1])
	fmt.Printf("spread over the folds (folds where the figure has answers; min / median / max):\n")
	fmt.Printf("| figure | named | routed |\n|---|---|---|\n")
	for _, name := range []string{"found precision", "partly precision", "not_found, all unanswerable", "not_found, near_miss",
		"not_found, missing_section", "names_doc first", "answered"} {
		cell := func(xs []float64) string {
			if len(xs) == 0 {
				return "–"
			}
			ys := append([]float64(nil), xs...)
			sort.Float64s(ys)
			return fmt.Sprintf("%.2f / %.2f / %.2f (%d folds)", ys[0], median(ys), ys[len(ys)-1], len(ys))
		}
		fmt.Printf("| %s | %s | %s |\n", name, cell(spread["named"][name]), cell(spread["routed"][name]))
	}
}

// honestFigures are the honest figures measured on the test split; each
// floor is one answer under its figure (the figure less 1/n, n the
// answers it is measured over, less 0.005 for rounding), as askFigure's.
type honestFigures struct {
	found, partly, nearMiss, missingSection, namesFirst, oldAnswered float64
}

// Measured on the test split on 6 December 2026 (bge-small-en-v1.5, the
// offline reranker lrank-at5-no-number@8 at its marks 0.85 / 0.35, chosen
// leaving one corpus out: lrank.MeasuredMarks) with the rules of issue
// 26's items 1-3 (named documents, by number, title, parties or the
// words a section reference describes its document with; sections and
// documents that do not exist, a missing document of the layers' own
// series deciding even where another document mentions it; a table's rows
// without the column asked for, or in tables without it while no row of
// the tables with it holds what the question names; parties no document
// holds together; distinctive names; a value the question asks for that
// only poorly matching passages, or none, state; a versioned term the
// passages give only as other versions; the best passage from a document
// without the question's names; a table row the question names). Layer
// named: found precision 1.00 (43 of 43), partly_found 0.900 (81 of 90),
// near_miss not_found 0.885 (46 of 52), missing_section 1.00 (17 of 17),
// names_doc first 1.00 (22 of 22), answered on the old questions 0.823 (93
// of 113). (Before
// documents were named by description, the table and the parties rules:
// 0.956, 0.769, 0.577, 0.941, 1.00, 0.814; before a mentioned missing
// document decided: 1.00, 0.792, 0.654, 1.00, 1.00, 0.814; before the
// other tables' columns: 1.00, 0.808, 0.692, 1.00, 1.00, 0.814; before
// the values and versions: 1.00, 0.816, 0.712, 1.00, 1.00, 0.814; before
// the name-holding documents: 1.00, 0.889, 0.865, 1.00, 1.00, 0.814;
// before the named rows: 1.00, 0.899, 0.885, 1.00, 1.00, 0.814.)
var askHonestNamed = honestFigures{
	found: 1, partly: 0.900, nearMiss: 0.885, missingSection: 1, namesFirst: 1, oldAnswered: 0.823,
}

// Routed: found precision 1.00 (42 of 42), partly_found 0.879 (80 of
// 91), near_miss not_found 0.865 (45 of 52), missing_section 1.00 (17 of
// 17), names_doc first 1.00 (22 of 22), answered on the old questions
// 0.805 (91 of 113). (Before: 0.955, 0.748, 0.538, 0.941, 1.00, 0.805;
// then 1.00, 0.769, 0.615, 1.00, 1.00, 0.805; then 1.00, 0.784, 0.654,
// 1.00, 1.00, 0.805; then 1.00, 0.792, 0.673, 1.00, 1.00, 0.805; then
// 1.00, 0.860, 0.827, 1.00, 1.00, 0.805; then 1.00, 0.879, 0.865, 1.00,
// 1.00, 0.805.)
var askHonestRouted = honestFigures{
	found: 1, partly: 0.879, nearMiss: 0.865, missingSection: 1, namesFirst: 1, oldAnswered: 0.805,
}

// oldAnsweredFloor is the issue's own floor for answered on the old
// questions ("not below today's 0.80"), asserted beside the one-answer
// floor: whichever is higher holds.
const oldAnsweredFloor = 0.80

func (f honestFigures) pairs(h honest) []struct {
	name   string
	s      share
	figure float64
} {
	return []struct {
		name   string
		s      share
		figure float64
	}{
		{"found precision", h.found, f.found},
		{"partly_found precision", h.partly, f.partly},
		{"near_miss not_found", h.nearMiss, f.nearMiss},
		{"missing_section not_found", h.missingSection, f.missingSection},
		{"names_doc first", h.namesFirst, f.namesFirst},
		{"answered on the old questions", h.oldAnswered, f.oldAnswered},
	}
}

// honestFloorMisses names each figure more than one answer under its
// measured figure.
func honestFloorMisses(h honest, f honestFigures) []string {
	var misses []string
	for _, p := range f.pairs(h) {
		if p.s.n == 0 {
			misses = append(misses, p.name+": no answers")
			continue
		}
		floor := p.figure - 1/float64(p.s.n) - 0.005
		if p.name == "answered on the old questions" {
			floor = max(floor, oldAnsweredFloor)
		}
		if p.s.v() < floor {
			misses = append(misses, fmt.Sprintf("%s: %s, floor %.2f (figure %.2f)", p.name, p.s, floor, p.figure))
		}
	}
	return misses
}

func checkHonestFloors(t *testing.T, mode string, h honest, f honestFigures) {
	t.Helper()
	if m := honestFloorMisses(h, f); len(m) > 0 {
		t.Errorf("strata_ask honest statuses on the answer set's test split, %s:\n\t%s", mode, strings.Join(m, "\n\t"))
	}
}

// askMiss says why an answer misses, or "" when it does not: an
// answerable question not answered, or found without a gold passage; an
// unanswerable one not not_found; a names_doc question whose document is
// not first.
func askMiss(r askRun) string {
	first := "no passage"
	if len(r.docs) > 0 {
		first = "first " + r.docs[0][0] + ":" + r.docs[0][1]
	}
	switch {
	case r.q.Unanswerable() && r.status != ask.NotFound:
		return fmt.Sprintf("unanswerable not not_found (%s; notes %q)", first, r.notes)
	case r.q.Unanswerable():
		return ""
	case r.status == ask.Found && !r.gold:
		return "found without a gold passage (" + first + ")"
	case r.status == ask.PartlyFound && !r.gold:
		return "partly_found without a gold passage (" + first + ")"
	case r.status == ask.NotFound && r.gold:
		return fmt.Sprintf("not_found with a gold passage returned (%s; notes %q)", first, r.notes)
	case r.status == ask.NotFound:
		return "not_found, no gold passage returned (" + first + ")"
	case r.q.Kind == answers.KindNamesDoc && !r.firstGold:
		return "the named document is not first (" + first + ")"
	}
	return ""
}

// TestAskHonestFloors runs without STRATA_EVAL: each figure passes its own
// floor, and two answers worse fail it.
func TestAskHonestFloors(t *testing.T) {
	t.Parallel()
	const n = 20
	at := func(x float64) share { return share{k: int(math.Round(x * n)), n: n} }
	for name, f := range map[string]honestFigures{"named": askHonestNamed, "routed": askHonestRouted} {
		h := honest{found: at(f.found), partly: at(f.partly), nearMiss: at(f.nearMiss), missingSection: at(f.missingSection),
			namesFirst: at(f.namesFirst), oldAnswered: at(f.oldAnswered)}
		// The figures rounded to twentieths: the floor allows one in n.
		if m := honestFloorMisses(h, f); len(m) != 0 {
			t.Errorf("%s: the figures miss their own floors: %v", name, m)
		}
		worse := func(s share) share { return share{k: s.k - 2, n: s.n} }
		h2 := honest{found: worse(h.found), partly: worse(h.partly), nearMiss: worse(h.nearMiss),
			missingSection: worse(h.missingSection), namesFirst: worse(h.namesFirst), oldAnswered: worse(h.oldAnswered)}
		if m := honestFloorMisses(h2, f); len(m) != 6 {
			t.Errorf("%s: two answers worse gave %d misses, want 6: %v", name, len(m), m)
		}
	}
}

// TestSectionMissingIn runs without STRATA_EVAL: the notes of
// retrieve/missing.go that decide a section is missing, and the one that
// leaves it undecided.
func TestSectionMissingIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		notes []string
		want  bool
	}{
		{[]string{"RFC 5321 (rfc5321.txt) has no section 8.7: its sections are 1–7, its appendices A–F."}, true},
		{[]string{"rfc4180.txt has no Appendix G: its sections are 1–6 and it has no appendices."}, true},
		{[]string{"No document of the searched layers (standards) has Annex Z."}, true},
		{[]string{"The searched layers (handbook) have no numbered sections, so section 9 could not be looked up by its number."}, false},
		{[]string{"RFC 5321 (rfc5321.txt) has no section 8.7: its sections are 1–7.", "x.md has no numbered sections, so section 2 could not be looked up by its number."}, false},
		{[]string{"The question asks about \"PEP 9999\", which is in none of the returned passages."}, false},
		{nil, false},
	} {
		if got := sectionMissingIn(tc.notes); got != tc.want {
			t.Errorf("sectionMissingIn(%q) = %v, want %v", tc.notes, got, tc.want)
		}
	}
}

// reportCommonNames lists the answers whose status the distinctive-names
// rule changed: those that the names check with every name of the question
// (the rule before issue 26) would have given another status, at the marks
// in use. Extractive answers are left out (their check reads the chosen
// sentences, which the response does not hold).
func reportCommonNames(runs map[string]map[string][]askRun, high, medium float64) {
	fmt.Printf("\nanswers whose status the distinctive-names rule changed (status with every name checked → status now):\n")
	n, common, withNames := 0, 0, 0
	for _, split := range []string{"train", "test"} {
		for _, mode := range []string{"named", "routed"} {
			for _, r := range runs[split][mode] {
				if all := ask.Names(r.q.Question); len(all) > 0 {
					withNames++
					if len(r.names) < len(all) {
						common++
					}
				}
				if r.exact || r.basis != "rerank" || r.best < 0 || r.missingSection || !r.grounded {
					continue
				}
				base := r.scoreStatus(high, medium)
				all := ask.CheckNames(base, ask.Names(r.q.Question), r.sources, false, true).Status
				if now := ask.CheckNames(base, r.names, r.sources, false, true).Status; all != now {
					n++
					fmt.Printf("  %s %s %s %s: %s → %s (gold returned %v): %s\n", split, mode, r.q.ID, r.q.Kind, all, now, r.gold, r.q.Question)
				}
			}
		}
	}
	fmt.Printf("  %d answers; %d of the %d answers to questions with names had a name held by half the searched passages or more\n", n, common, withNames)
}
