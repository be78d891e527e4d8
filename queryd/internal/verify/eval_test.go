package verify_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/eval/answers"
	verifyeval "github.com/stratakb/stratakb/eval/verify"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/queryd/internal/verify"
)

// Floors of the evaluation, from its measurement (docs/ask.md,
// "Verification evaluation"): every changed fact, altered quote and wrong
// citation flagged, and at most 5 % false flags on correct drafts.
const (
	minDrafts       = 150
	minRecall       = 1.0  // flagged share of kinds fact_changed, quote_altered, wrong_passage
	maxFalseFlags   = 0.05 // flagged share of kinds correct and other_form
	minKindAccuracy = 0.95 // per kind: verdict as expected (and the flag names the fact)
)

// TestEvalDrafts runs strata_verify's checks on the drafts built from the
// answer eval set's gold passages (eval/verify) and asserts the floors.
// STRATA_EVAL_VERIFY_UPDATE=1 rewrites eval/verify/drafts.jsonl.
func TestEvalDrafts(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to run the verification evaluation")
	}
	ds := evalDrafts(t)
	// The drafts are kept in eval/verify/drafts.jsonl for review: a change
	// to the generator shows there.
	golden := filepath.Join(evalDir, "verify", "drafts.jsonl")
	if os.Getenv("STRATA_EVAL_VERIFY_UPDATE") == "1" {
		if err := verifyeval.WriteJSONL(golden, ds); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(t.TempDir(), "drafts.jsonl")
	if err := verifyeval.WriteJSONL(tmp, ds); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(tmp); string(got) != string(want) {
		t.Errorf("the drafts differ from %s: rerun with STRATA_EVAL_VERIFY_UPDATE=1 and review the diff", golden)
	}
	if len(ds) < minDrafts {
		t.Fatalf("%d drafts, want at least %d", len(ds), minDrafts)
	}
	type tally struct{ n, right, flagged int }
	per := map[string]*tally{}
	for _, k := range verifyeval.Kinds {
		per[k] = &tally{}
	}
	shown := map[string]int{}
	for _, d := range ds {
		r := verify.Check(d.Draft, d.Passages)
		tl := per[d.Kind]
		tl.n++
		if r.Status == verify.Flagged {
			tl.flagged++
		}
		ok := r.Status == d.Expect && (d.Flag == "" || flagNames(r, d.Flag))
		if ok {
			tl.right++
		} else if shown[d.Kind] < 40 {
			shown[d.Kind]++
			t.Logf("MISS %s %s (%s): want %s naming %q, got %s %s\n  draft: %s", d.Kind, d.ID, d.Note, d.Expect, d.Flag, r.Status, flagTexts(r), d.Draft)
		}
	}
	t.Logf("%-17s %6s %8s %8s", "kind", "drafts", "expected", "flagged")
	var changed, changedFlagged, correct, correctFlagged int
	for _, k := range verifyeval.Kinds {
		tl := per[k]
		t.Logf("%-17s %6d %7.1f%% %7.1f%%", k, tl.n, pct(tl.right, tl.n), pct(tl.flagged, tl.n))
		switch k {
		case verifyeval.KindFactChanged, verifyeval.KindQuoteAlter, verifyeval.KindWrongSource:
			changed += tl.n
			changedFlagged += tl.right
		case verifyeval.KindCorrect, verifyeval.KindOtherForm:
			correct += tl.n
			correctFlagged += tl.flagged
		}
		if tl.n == 0 {
			t.Errorf("no drafts of kind %s", k)
		} else if float64(tl.right)/float64(tl.n) < minKindAccuracy {
			t.Errorf("kind %s: %.1f%% as expected, floor %.0f%%", k, pct(tl.right, tl.n), 100*minKindAccuracy)
		}
	}
	t.Logf("%d drafts; changed facts and quotes flagged (naming them): %d/%d = %.1f%%; false flags on correct drafts: %d/%d = %.1f%%",
		len(ds), changedFlagged, changed, pct(changedFlagged, changed), correctFlagged, correct, pct(correctFlagged, correct))
	if float64(changedFlagged) < minRecall*float64(changed) {
		t.Errorf("recall of changed facts %.1f%%, floor %.0f%%", pct(changedFlagged, changed), 100*minRecall)
	}
	if float64(correctFlagged) > maxFalseFlags*float64(correct) {
		t.Errorf("false flags %.1f%%, at most %.0f%%", pct(correctFlagged, correct), 100*maxFalseFlags)
	}
}

// evalDrafts builds the drafts over the answer set's gold passages (each
// question's first gold quote with 300 bytes either side), and the
// hand-written ones.
func evalDrafts(t *testing.T) []verifyeval.Draft {
	t.Helper()
	corpora := filepath.Join(testenv.SharedDir(t), "corpora")
	testenv.Require(t, corpora, "the shared corpora")
	dir := filepath.Join(evalDir, "answers")
	layers, err := answers.LoadLayers(filepath.Join(dir, "layers.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := answers.LoadQuestions(filepath.Join(dir, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := answers.NewSet(layers, qs, dir, corpora)
	if err != nil {
		t.Fatal(err)
	}
	var items []verifyeval.Item
	for _, q := range qs {
		if len(q.Gold) == 0 {
			continue
		}
		g := q.Gold[0]
		doc, err := set.Doc(q.Layer, g.File)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := verifyeval.PassageAround(doc.Text, g.Quote, 300)
		if !ok {
			t.Fatalf("%s: gold quote not in %s", q.ID, g.File)
		}
		items = append(items, verifyeval.Item{ID: q.ID, Passage: p, Quote: g.Quote})
	}
	ds := verifyeval.Generate(items)
	hs, err := verifyeval.LoadHandwritten(filepath.Join(evalDir, "verify", "handwritten.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := verifyeval.HandwrittenDrafts(hs, items)
	if err != nil {
		t.Fatal(err)
	}
	return append(ds, more...)
}

// evalDir is the repository's eval folder.
var evalDir = filepath.Join("..", "..", "..", "eval")

func flagNames(r verify.Result, text string) bool {
	for _, f := range r.Flags {
		if strings.Contains(f.Text, text) || strings.Contains(text, f.Text) && f.Text != "" {
			return true
		}
	}
	return false
}

func flagTexts(r verify.Result) string {
	var b strings.Builder
	for _, f := range r.Flags {
		fmt.Fprintf(&b, "[%s %q]", f.Kind, f.Text)
	}
	return b.String()
}

func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}
