package ask

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// The stages of respond (respond.go) and extract (extract.go), each on a
// value built by hand: what each decides, without a database.

func stageAnswer(p *pass, req Request) *answer {
	a := New(Options{})
	return &answer{a: a, req: req, q: parseAsked(req.Question), p: p, resp: &Response{Passages: []Passage{}},
		kept: map[int]string{}, docs: map[int64]store.DocInfo{}}
}

func candidate(id int64, text string) retrieve.Candidate {
	return retrieve.Candidate{ChunkID: id, DocumentID: id, Layer: "l", File: "f.md", Text: text, LineStart: 1, LineEnd: 1, End: len(text)}
}

func TestStagePackBestPassages(t *testing.T) {
	p := &pass{first: &retrieve.Outcome{}}
	w := stageAnswer(p, Request{Question: "q"})
	w.a.opt.Budget = 40 // tokens: the second passage does not fit
	w.cands = []retrieve.Candidate{candidate(1, strings.Repeat("word ", 20)), candidate(2, strings.Repeat("more ", 40))}
	if err := w.packBestPassages(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(w.resp.Passages) != 1 || w.resp.Passages[0].ID != "S1" || w.kept[0] != "S1" {
		t.Fatalf("passages %+v kept %v", w.resp.Passages, w.kept)
	}
	if w.mode != ModeGrounded {
		t.Errorf("mode %s", w.mode)
	}
}

func TestStageStatusFromScores(t *testing.T) {
	cases := []struct {
		name   string
		p      *pass
		keep   []int
		scores []float64
		report ClauseReport
		want   Status
	}{
		{"nothing kept", &pass{basis: "rerank", high: 0.8, med: 0.5}, nil, nil, ClauseReport{}, NotFound},
		{"high", &pass{basis: "rerank", high: 0.8, med: 0.5}, []int{0}, []float64{0.9}, ClauseReport{}, Found},
		{"medium", &pass{basis: "rerank", high: 0.8, med: 0.5}, []int{0}, []float64{0.6}, ClauseReport{}, PartlyFound},
		{"low", &pass{basis: "rerank", high: 0.8, med: 0.5}, []int{0}, []float64{0.1}, ClauseReport{}, NotFound},
		{"no basis", &pass{basis: basisNone}, []int{0}, nil, ClauseReport{}, PartlyFound},
		{"named clause back", &pass{basis: "rerank", high: 0.8, med: 0.5}, nil, nil,
			ClauseReport{Clauses: []NamedClause{{Label: "clause 7", File: "f.md"}}}, Found},
	}
	for _, c := range cases {
		c.p.first = &retrieve.Outcome{Exact: retrieve.ExactLookup{MissingNotes: []string{"x has no y."}}}
		c.p.rerank = c.scores
		w := stageAnswer(c.p, Request{Question: "q"})
		w.keep, w.scores, w.report = c.keep, c.scores, c.report
		for range c.scores {
			w.cands = append(w.cands, candidate(1, "t"))
		}
		if err := w.statusFromScores(context.Background()); err != nil {
			t.Fatal(err)
		}
		if w.status != c.want {
			t.Errorf("%s: %s, want %s", c.name, w.status, c.want)
		}
		if !strings.Contains(strings.Join(w.notes, " "), "x has no y.") {
			t.Errorf("%s: the missing sections' notes are not passed on: %q", c.name, w.notes)
		}
	}
}

func TestStageDegraded(t *testing.T) {
	w := stageAnswer(&pass{first: &retrieve.Outcome{MissingVectors: []string{"peps"}}}, Request{Question: "q"})
	got := strings.Join(w.degraded(), " | ")
	if !strings.Contains(got, "reranking is off") || !strings.Contains(got, "searched by their words only: peps") {
		t.Errorf("degraded %q", got)
	}
	w.a.opt.Reranker = Texts{overlap{}}
	w.p.rerankErr = errors.New("down")
	if got := strings.Join(w.degraded(), " | "); !strings.Contains(got, "failed (down)") {
		t.Errorf("degraded %q", got)
	}
}

func TestStageDetailWarnsOnLow(t *testing.T) {
	p := &pass{first: &retrieve.Outcome{}, basis: "rerank", med: 0.5}
	w := stageAnswer(p, Request{Question: "q", ResponseFormat: FormatDetailed})
	w.status, w.confidence = NotFound, "low"
	w.detail()
	if w.resp.AnswerStatus != string(NotFound) || !strings.Contains(w.resp.Warning, "medium mark (rerank 0.50)") {
		t.Errorf("status %s warning %q", w.resp.AnswerStatus, w.resp.Warning)
	}
}

func TestStageSourcesOfExtractiveAnswer(t *testing.T) {
	w := stageAnswer(&pass{first: &retrieve.Outcome{}}, Request{Question: "What does PEP 8 say about tabs?"})
	w.resp.Passages = []Passage{
		{ID: "S1", Ref: schema.Ref{DocumentID: 8, End: 10}.String(), Text: "Spaces are the preferred indentation method.", Citation: Citation{File: "pep-0008.txt"}},
		{ID: "S2", Ref: schema.Ref{DocumentID: 7, End: 10}.String(), Text: "Tabs should be used solely to remain consistent.", Citation: Citation{File: "style.md"}},
	}
	// The sentences quoted come from S2's document; the names check still
	// reads every passage and its path, as in a grounded answer (issue
	// 27, item 4): S1's file is pep-0008.txt, which holds "PEP 8".
	w.ex = &extraction{answer: []sentence{{doc: 7, passage: 1, text: "Tabs should be used solely to remain consistent."}}}
	if got := w.sources(); len(got) != 2 {
		t.Errorf("extractive sources %+v, want every passage", got)
	}
	if nc := CheckNames(Found, w.q.names, w.sources(), false, false); nc.Status != Found || nc.Note != "" {
		t.Errorf("names check %+v: PEP 8 is S1's file", nc)
	}
}

func stagePicking(sents []sentence, scored []int) *picking {
	a := New(Options{RerankHigh: 0.8, RerankMedium: 0.5})
	ps := []Passage{{ID: "S1", Ref: schema.Ref{DocumentID: 1, End: 100}.String(), Citation: Citation{File: "a.md"}}}
	return &picking{a: a, q: parseAsked("q"), passages: ps, sents: sents, scored: scored,
		clauseWhy: map[int]string{}, ex: &extraction{}, withText: 1, wins: make([]store.Window, 1)}
}

func TestStageQuoteBestSentences(t *testing.T) {
	sents := []sentence{
		{doc: 1, text: "Weak sentence.", clause: -1, score: 0.3},
		{doc: 1, text: "Best sentence.", clause: -1, score: 0.9},
		{doc: 1, text: "Second sentence.", clause: -1, score: 0.6},
	}
	k := stagePicking(sents, []int{0, 1, 2})
	if err := k.quoteBestSentences(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The second needs SentenceMark as well as the medium mark.
	want := []string{"Best sentence."}
	if SentenceMark <= 0.6 {
		want = append(want, "Second sentence.")
	}
	var got []string
	for _, s := range k.ex.answer {
		got = append(got, s.text)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") || k.best != 0.9 {
		t.Errorf("quoted %q (best %.1f), want %q", got, k.best, want)
	}
}

func TestStageJudgeExtraction(t *testing.T) {
	k := stagePicking(nil, nil)
	k.best = 0.6
	k.ex.answer = []sentence{{text: "s"}}
	k.judge()
	if k.ex.status != PartlyFound {
		t.Errorf("best 0.6: %s", k.ex.status)
	}
	k = stagePicking(nil, nil)
	k.clauseQuoted, k.clauseWhy[0] = true, "cut"
	k.ex.answer = []sentence{{text: "s"}}
	k.judge()
	if k.ex.status != PartlyFound {
		t.Errorf("a named clause partly quoted: %s", k.ex.status)
	}
	k = stagePicking([]sentence{{tooLong: true}}, nil)
	k.best = 0.99
	k.judge()
	if k.ex.status != NotFound || len(k.ex.notes) == 0 {
		t.Errorf("nothing quoted: %s %q", k.ex.status, k.ex.notes)
	}
}

func TestStagePlaceOnPages(t *testing.T) {
	st := sentence{start: 120, end: 180, origin: schema.OriginText}
	placeOnPages(&st, []store.PageOrigin{{Number: 1, Start: 0, End: 100}, {Number: 2, Start: 100, End: 200, TextOrigin: schema.OriginOCR}})
	if st.page == nil || *st.page != 2 || st.origin != schema.OriginOCR {
		t.Errorf("page %v origin %s", st.page, st.origin)
	}
}
