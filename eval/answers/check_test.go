package answers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
)

// TestQuestionSet checks every entry of questions.jsonl against the corpora
// and the code tables: quotes, sections, paraphrases, absences, the split.
func TestQuestionSet(t *testing.T) {
	corpora := filepath.Join(testenv.SharedDir(t), "corpora")
	testenv.Require(t, corpora, "the shared corpora")
	layers, err := LoadLayers("layers.json")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQuestions("questions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(layers, qs, ".", corpora)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		for _, err := range set.CheckEntry(q) {
			t.Error(err)
		}
	}
	for _, err := range CheckSet(qs, 250, 0.15) {
		t.Error(err)
	}
	count := map[string][2]int{}
	for _, q := range qs {
		c := count[q.Kind]
		if q.Split == "test" {
			c[0]++
		} else {
			c[1]++
		}
		count[q.Kind] = c
	}
	for _, k := range Kinds {
		t.Logf("%-13s test %3d  train %3d", k, count[k][0], count[k][1])
	}
}

// TestCheckCatchesBrokenEntries proves the checks can fail: each broken
// entry must be reported, each good one must pass.
func TestCheckCatchesBrokenEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "# Leave policy\n\n## 1. Carry-over\n\nUnused leave days may be carried over until the end of March.\n\n" +
		"## 2. Sick days\n\nA doctor's note is required after three days of illness.\n\n" +
		strings.Repeat("Filler words about the office parking and the lifts. ", 40) + "\n\nThe kitchen closes at noon on Fridays.\n"
	if err := os.WriteFile(filepath.Join(dir, "docs", "policy.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	layer := Layer{Name: "hr", Base: "eval", Root: "docs", Generic: []string{"policy"}}
	set, err := NewSet([]Layer{layer}, nil, dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := set.Doc("hr", "policy.md")
	if err != nil {
		t.Fatal(err)
	}
	quote := "Unused leave days may be carried over until the end of March."
	at := strings.Index(doc.Text, quote)
	section := doc.SectionAt(at, at+len(quote))
	if section == "" {
		t.Fatal("the fixture's quote lies in no section")
	}
	good := Question{ID: "g", Kind: KindLexical, Split: "test", Layer: "hr", Question: "Can unused leave days be carried over?",
		Gold: []Gold{{File: "policy.md", Quote: quote, Section: section}}}
	with := func(f func(*Question)) Question {
		q := good
		q.Gold = append([]Gold(nil), good.Gold...)
		f(&q)
		return q
	}
	cases := []struct {
		name  string
		q     Question
		fails string // part of the error; empty: passes
	}{
		{"good lexical", good, ""},
		{"quote not in file", with(func(q *Question) { q.Gold[0].Quote = "Unused leave days expire." }), "not an exact substring"},
		{"quote with other whitespace", with(func(q *Question) { q.Gold[0].Quote = strings.Replace(quote, " ", "  ", 1) }), "not an exact substring"},
		{"wrong section", with(func(q *Question) { q.Gold[0].Section = "2. Sick days" }), "structure map puts"},
		{"file not in layer", with(func(q *Question) { q.Gold[0].File = "other.md" }), "not in layer"},
		{"unknown layer", with(func(q *Question) { q.Layer = "finance" }), "unknown layer"},
		{"unknown kind", with(func(q *Question) { q.Kind = "trivia" }), "unknown kind"},
		{"no split", with(func(q *Question) { q.Split = "" }), "neither train nor test"},
		{"no gold", with(func(q *Question) { q.Gold = nil }), "no gold"},
		{"good paraphrase", with(func(q *Question) {
			q.Kind, q.Question, q.Terms = KindParaphrase, "May holidays I did not take roll into the next year?", []string{"unused", "leave", "carried over"}
		}), ""},
		{"paraphrase sharing a stem", with(func(q *Question) {
			q.Kind, q.Question, q.Terms = KindParaphrase, "May holidays I did not take be carrying into next year?", []string{"unused", "leave", "carried over"}
		}), "shares the stem"},
		{"paraphrase key term not in passage", with(func(q *Question) {
			q.Kind, q.Question, q.Terms = KindParaphrase, "May holidays I did not take roll into the next year?", []string{"unused", "leave", "vacation"}
		}), "not in the gold passage"},
		{"paraphrase without key terms", with(func(q *Question) { q.Kind, q.Terms = KindParaphrase, nil }), "at least 3 key terms"},
		{"good unanswerable", Question{ID: "u", Kind: KindUnanswerable, Split: "test", Layer: "hr",
			Question: "Is parental leave paid at full salary?", Terms: []string{"parental", "salary"}}, ""},
		{"unanswerable whose words occur together", Question{ID: "u", Kind: KindUnanswerable, Split: "test", Layer: "hr",
			Question: "When does the kitchen close on Fridays?", Terms: []string{"kitchen", "Fridays"}}, "occur together"},
		{"words far apart are not together", Question{ID: "u", Kind: KindUnanswerable, Split: "test", Layer: "hr",
			Question: "Does a doctor check the kitchen?", Terms: []string{"doctor", "kitchen"}}, ""},
		{"unanswerable key word is generic", Question{ID: "u", Kind: KindUnanswerable, Split: "test", Layer: "hr",
			Question: "Is the parental policy paid?", Terms: []string{"parental", "policy"}}, "generic words"},
		{"unanswerable key word not in question", Question{ID: "u", Kind: KindUnanswerable, Split: "test", Layer: "hr",
			Question: "Is parental leave paid?", Terms: []string{"parental", "salary"}}, "not in the question"},
		{"unanswerable with gold", Question{ID: "u", Kind: KindUnanswerable, Split: "test", Layer: "hr",
			Question: "Is parental leave paid at full salary?", Terms: []string{"parental", "salary"}, Gold: good.Gold}, "has gold"},
	}
	for _, c := range cases {
		errs := set.CheckEntry(c.q)
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		all := strings.Join(msgs, "; ")
		switch {
		case c.fails == "" && len(errs) > 0:
			t.Errorf("%s: want no error, got %s", c.name, all)
		case c.fails != "" && !strings.Contains(all, c.fails):
			t.Errorf("%s: want an error with %q, got %q", c.name, c.fails, all)
		}
	}
}

// TestCheckSet: counts and the fixed split.
func TestCheckSet(t *testing.T) {
	var qs []Question
	for _, k := range Kinds {
		for i := range 4 {
			qs = append(qs, Question{ID: k + string(rune('a'+i)), Kind: k})
		}
	}
	split := SplitOf(qs)
	for i := range qs {
		qs[i].Split = split[qs[i].ID]
	}
	if errs := CheckSet(qs, len(qs), 0.1); len(errs) > 0 {
		t.Fatalf("a balanced set fails: %v", errs)
	}
	n := map[string]int{}
	for _, q := range qs {
		if q.Split == "test" {
			n[q.Kind]++
		}
	}
	for _, k := range Kinds {
		if n[k] != 2 {
			t.Errorf("kind %s: %d of 4 in test, want 2", k, n[k])
		}
	}
	swapped := append([]Question(nil), qs...)
	swapped[0].Split = map[string]string{"test": "train", "train": "test"}[swapped[0].Split]
	if errs := CheckSet(swapped, len(qs), 0.1); len(errs) != 1 || !strings.Contains(errs[0].Error(), "fixed assignment") {
		t.Errorf("a moved question: want one split error, got %v", errs)
	}
	dup := append(append([]Question(nil), qs...), qs[0])
	if errs := CheckSet(dup, len(qs), 0.1); len(errs) == 0 {
		t.Error("a repeated id passes")
	}
	if errs := CheckSet(qs, len(qs)+1, 0.5); len(errs) != 2 {
		t.Errorf("too few questions and unanswerable ones: want 2 errors, got %v", errs)
	}
}

// TestDumpSections prints the structure map and text of files
// (STRATA_ANSWERS_DUMP=layer:file|...), a help for writing questions.
func TestDumpSections(t *testing.T) {
	spec := os.Getenv("STRATA_ANSWERS_DUMP")
	if spec == "" {
		t.Skip("set STRATA_ANSWERS_DUMP=layer:file|... to print files' sections")
	}
	corpora := filepath.Join(testenv.SharedDir(t), "corpora")
	layers, err := LoadLayers("layers.json")
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(layers, nil, ".", corpora)
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("STRATA_ANSWERS_DUMP_DIR")
	for _, item := range strings.Split(spec, "|") {
		layer, file, _ := strings.Cut(item, ":")
		doc, err := set.Doc(layer, file)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, s := range doc.Sections {
			fmt.Fprintf(&b, "%d\t%d\t%d\t%s\n", s.Start, s.HeadingEnd, s.End, s.Path)
		}
		base := filepath.Join(out, filepath.Base(file))
		if err := os.WriteFile(base+".sections", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+".text", []byte(doc.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
