package uie2e

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

type chartSeen struct {
	Label string
	Bars  []struct {
		Row          string
		Value, Width float64
	}
	Marks []struct {
		Row, Mark string
		At        float64
	}
	Rows, Facts []string
	Shown       bool
}

func (c chartSeen) bar(row string) (float64, bool) {
	for _, b := range c.Bars {
		if b.Row == row {
			return b.Value, b.Width > 0
		}
	}
	return 0, false
}

// TestAskExplainAndCite: a question asked with the keyboard on the fixture
// layer comes back with its status and the per-diem passage first; the
// passage's explain chart draws its channels, fusion and score bars and
// the high and medium marks; the page fits 320 px; its citation opens the
// Document page with the cited lines highlighted; the address keeps the
// question; the same words as a search draw a chart of their own.
func TestAskExplainAndCite(t *testing.T) {
	e := setup(t)
	const question = "What is the daily allowance for meals abroad?"
	var got struct {
		seen
		URL    string
		Answer struct {
			Status, Summary string
			Passages        []struct {
				Title, Href, Text string
				Labels            []string
			}
		}
		Chart, SearchChart chartSeen
		Narrow             int
		Doc                struct{ URL, Highlighted string }
		Again              string
		SearchMode         bool
		Results            int
	}
	e.browse(t, "ask", "/ui/ask", &got, "QUESTION="+question)
	got.check(t)
	u, err := url.Parse(got.URL)
	if err != nil || u.Query().Get("q") != question || u.Query().Get("layers") != "explorer" || u.Query().Get("mode") != "ask" {
		t.Errorf("the address does not keep the question: %s", got.URL)
	}
	if !strings.HasPrefix(got.Answer.Status, "Status: ") || !strings.Contains(got.Answer.Summary, "Searched layers") {
		t.Errorf("status %q, summary %q", got.Answer.Status, got.Answer.Summary)
	}
	if len(got.Answer.Passages) == 0 {
		t.Fatalf("no passage came back")
	}
	top := got.Answer.Passages[0]
	if !strings.Contains(top.Title, "travel-policy.md lines") || !strings.Contains(top.Text, "48 euros") ||
		!strings.HasPrefix(top.Href, "/ui/doc/") || !strings.Contains(top.Href, "#r") {
		t.Errorf("the first passage: %+v", top)
	}
	if !slices.Contains(top.Labels, "layer explorer") || !slices.ContainsFunc(top.Labels, func(l string) bool { return strings.HasPrefix(l, "dated 2026-03-02") }) {
		t.Errorf("the first passage's labels: %q", top.Labels)
	}
	c := got.Chart
	if !c.Shown || !slices.Equal(c.Rows, []string{"lexical", "vector", "fusion", "rerank"}) {
		t.Errorf("the chart's rows: %q (shown %v)", c.Rows, c.Shown)
	}
	for _, row := range []string{"fusion", "rerank"} {
		if _, ok := c.bar(row); !ok {
			t.Errorf("the chart has no %s bar: %+v", row, c.Bars)
		}
	}
	if _, lex := c.bar("lexical"); !lex {
		if _, vec := c.bar("vector"); !vec {
			t.Errorf("no channel bar: %+v", c.Bars)
		}
	}
	var marks []string
	for _, m := range c.Marks {
		if m.Row == "rerank" && m.At > 0 && m.At < 1 {
			marks = append(marks, m.Mark)
		}
	}
	if !slices.Equal(marks, []string{"high", "medium"}) {
		t.Errorf("the score row's marks: %+v, want high and medium", c.Marks)
	}
	for _, want := range []string{"Placement: ", "Keyword slot: ", "Exact match: ", "Names check: "} {
		if !slices.ContainsFunc(c.Facts, func(f string) bool { return strings.HasPrefix(f, want) }) {
			t.Errorf("the chart does not say %s: %q", want, c.Facts)
		}
	}
	if got.Narrow > 320 {
		t.Errorf("at 320 px the page is %d px wide", got.Narrow)
	}
	if got.Doc.URL != top.Href || !strings.Contains(got.Doc.Highlighted, "48 euros") {
		t.Errorf("the citation %s opened %s highlighting:\n%s", top.Href, got.Doc.URL, got.Doc.Highlighted)
	}
	if got.Again != question {
		t.Errorf("back from the document, the question box holds %q", got.Again)
	}
	if !got.SearchMode || got.Results == 0 || got.Results > 3 {
		t.Errorf("the search: mode=search checked %v, %d results (top_k 3)", got.SearchMode, got.Results)
	}
	sc := got.SearchChart
	if _, ok := sc.bar("fusion"); !ok || !slices.Contains(sc.Rows, "similarity") {
		t.Errorf("the search's chart: %+v", sc)
	}
	if _, lex := sc.bar("lexical"); !lex {
		t.Errorf("the search's first result has no lexical bar: %+v", sc.Bars)
	}
	t.Logf("status %q; chart bars %+v marks %+v", got.Answer.Status, c.Bars, c.Marks)
}
