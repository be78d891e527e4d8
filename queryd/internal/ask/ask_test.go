package ask

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// bow is the shared bag-of-words test embedder.
type bow = testenv.Bow

// overlap is a reranker whose probability is the share of the question's
// words of four letters or more that the passage holds: a stand-in that
// makes the statuses predictable. fail makes it fail.
type overlap struct{ fail error }

func (overlap) Name() string { return "test-overlap" }
func (o overlap) Rerank(_ context.Context, q string, ps []string) ([]float64, error) {
	if o.fail != nil {
		return nil, o.fail
	}
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) >= 4 {
				m[w] = true
			}
		}
		return m
	}
	qw := words(q)
	out := make([]float64, len(ps))
	for i, p := range ps {
		pw := words(p)
		n := 0
		for w := range qw {
			if pw[w] {
				n++
			}
		}
		if len(qw) > 0 {
			out[i] = float64(n) / float64(len(qw))
		}
	}
	return out, nil
}

// memRecorder keeps interactions in memory; the Ledger's own test covers
// the table.
type memRecorder struct {
	mu  sync.Mutex
	got []Interaction
}

func (m *memRecorder) RecordInteraction(_ context.Context, in Interaction) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, in)
	return fmt.Sprintf("int-%d", len(m.got)), nil
}

var contracts = map[string]string{
	"acme-msa.md": "---\ndate: 2026-03-04\n---\n# Acme Master Services Agreement\n\n## 7 Termination\n\n### 7.1 Term\n\n" +
		"This agreement runs for two years from the effective date.\n\n### 7.2 Notice\n\n" +
		"Either party may end this agreement with ninety days' written notice.\n\n## 8 Liability\n\n" +
		"Liability is capped at the fees paid in the last twelve months.\n\n## 9 Services\n\n" +
		strings.Repeat("The supplier shall perform the services with due care and skill, using trained staff. ", 40) + "\n",
	"beta-nda.md": "# Beta Non-Disclosure Agreement\n\n## 7 Disclosure\n\n### 7.2 Notice\n\n" +
		"Notice of any disclosure must be given within ten days.\n\n## 10 Release notes\n\nThis is version 7.2 of the template.\n",
	"old-terms.md":        "# Old terms\n\nPayment is due within sixty days of the invoice.\n",
	"new-terms.md":        "---\nsupersedes: old-terms.md\n---\n# New terms\n\nPayment is due within thirty days of the invoice.\n",
	"archive/2019-sla.md": "# Service levels 2019\n\nUptime of the hosted service is ninety-nine percent each month.\n",
}

var rules = map[string]string{
	"pep-0008.md": "# Style Guide\n\nUse four spaces per indentation level. Limit all lines to a maximum of 79 characters.\n",
	"codes.md":    "# Reason codes\n\nThe reason code AC04 means the account is closed.\n",
}

type fixture struct {
	asker *Asker
	rec   *memRecorder
	st    *store.Corpus
	eng   *retrieve.Engine
}

// fixURL is the fixture database, as the queryd role; TestAsk sets it up.
var fixURL string

// TestAsk ingests the fixture layers once (through the real jobs) and runs
// each case against them.
func TestAsk(t *testing.T) {
	var fixErr error
	func() {
		pool, url := dbtest.NewPool(t)
		dir, err := os.MkdirTemp("", "ask-fixture")
		if err != nil {
			fixErr = err
			return
		}
		for name, files := range map[string]map[string]string{"contracts": contracts, "rules": rules} {
			root := filepath.Join(dir, name)
			for p, c := range files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					fixErr = err
					return
				}
				if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
					fixErr = err
					return
				}
			}
			l := jobs.Layer{Name: name, Root: root, ChunkSize: 400}
			switch name {
			case "contracts":
				l.Archived = []string{"archive/**"}
				l.Description = "Commercial contracts: termination, notice, liability, payment terms."
			case "rules":
				l.AnswerMode = "extractive"
				l.Description = "Coding style rules and payment reason codes."
			}
			ingesttest.Ingest(t, pool, l, ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
		}
		fixURL = dbtest.QuerydURL(t, url)
	}()
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	for name, fn := range map[string]func(*testing.T){
		"ExactClauseInTwoDocuments":    testAskExactClauseInTwoDocuments,
		"BareVersionIsNotAClause":      testAskBareVersionIsNotAClause,
		"CutClause":                    testAskCutClause,
		"MoreClausesThanFit":           testAskMoreClausesThanFit,
		"PassageOverTheBudgetAlone":    testAskPassageOverTheBudgetAlone,
		"Names":                        testAskNames,
		"Labels":                       testAskLabels,
		"Modes":                        testAskModes,
		"Detailed":                     testAskDetailed,
		"LowConfidenceWarns":           testAskLowConfidenceWarns,
		"RerankerDownKeepsFusionOrder": testAskRerankerDownKeepsFusionOrder,
		"VariantsAreMerged":            testAskVariantsAreMerged,
		"Arguments":                    testAskArguments,
		"WithoutAnyBasis":              testAskWithoutAnyBasis,
		"ScrubsRecordedQuestions":      testAskScrubsRecordedQuestions,
	} {
		t.Run(name, fn)
	}
}

// newAsker returns an Asker over the fixture, reading as the queryd role.
func newAsker(t *testing.T, opt func(*Options)) *fixture {
	t.Helper()
	st, err := store.OpenCorpus(context.Background(), fixURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	eng := retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1})
	f := &fixture{rec: &memRecorder{}, st: st, eng: eng}
	o := Options{Engine: eng, Docs: st, Reranker: Texts{overlap{}}, Recorder: f.rec}
	if opt != nil {
		opt(&o)
	}
	f.asker = New(o)
	return f
}

// writeFolder writes docs (path: content) into a new folder named name
// under the test's temporary folder and returns its path.
func writeFolder(t *testing.T, name string, docs map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	testenv.WriteFiles(t, root, docs)
	return root
}

func ask(t *testing.T, a *Asker, req Request) *Response {
	t.Helper()
	resp, err := a.Ask(context.Background(), req)
	if err != nil {
		t.Fatalf("ask %q: %v", req.Question, err)
	}
	return resp
}

func files(r *Response) []string {
	var out []string
	for _, p := range r.Passages {
		out = append(out, p.Citation.File)
	}
	return out
}

func testAskExactClauseInTwoDocuments(t *testing.T) {
	f := newAsker(t, nil)
	r := ask(t, f.asker, Request{Question: "What does clause 7.2 say?", Layers: []string{"contracts"}})
	if r.Status != string(Found) {
		t.Fatalf("status %s, want found; notes %q", r.Status, r.Notes)
	}
	if len(r.Passages) < 2 || r.Passages[0].Match != "exact" || r.Passages[1].Match != "exact" {
		t.Fatalf("passages %q, want the two 7.2 sections first", files(r))
	}
	if r.Passages[0].Citation.File != "acme-msa.md" || r.Passages[1].Citation.File != "beta-nda.md" {
		t.Errorf("exact passages by file path: %q", files(r))
	}
	if !strings.Contains(r.Passages[0].Text, "ninety days") || r.Passages[0].Citation.ClausePath == "" {
		t.Errorf("first passage: %+v", r.Passages[0])
	}
	if r.Passages[0].ID != "S1" || r.Passages[1].ID != "S2" {
		t.Errorf("ids %s %s", r.Passages[0].ID, r.Passages[1].ID)
	}
	// The dated document's citation carries its front-matter date.
	if d := r.Passages[0].Citation; d.Date == nil || *d.Date != "2026-03-04" || d.DateSource == nil || *d.DateSource != "front_matter" {
		t.Errorf("citation date %+v", d)
	}
	// The exact section does not come back a second time inside a chunk.
	for _, p := range r.Passages[2:] {
		if strings.Contains(p.Text, "ninety days' written notice") {
			t.Errorf("passage %s repeats the exact section", p.ID)
		}
	}
	if r.InteractionID == "" || len(f.rec.got) != 1 || f.rec.got[0].Question != "What does clause 7.2 say?" {
		t.Fatalf("interaction %q recorded %+v", r.InteractionID, f.rec.got)
	}
	// The interaction says which passage is which chunk, and which are
	// named clauses without one (strata_feedback rates by passage id).
	in := f.rec.got[0]
	for _, p := range r.Passages {
		c, chunked := in.PassageChunks[p.ID]
		exact := slices.Contains(in.ExactPassages, p.ID)
		if exact != (p.Match == "exact") || chunked == exact || (chunked && !slices.Contains(in.ChunkIDs, c)) {
			t.Errorf("passage %s (match %q): chunk %d %v, exact %v in %+v", p.ID, p.Match, c, chunked, exact, in)
		}
	}
}

func testAskBareVersionIsNotAClause(t *testing.T) {
	f := newAsker(t, nil)
	r := ask(t, f.asker, Request{Question: "Which template is version 7.2?", Layers: []string{"contracts"}})
	for _, p := range r.Passages {
		if p.Match == "exact" {
			t.Fatalf("version 7.2 looked up as a clause: %+v", p)
		}
	}
}

func testAskCutClause(t *testing.T) {
	f := newAsker(t, func(o *Options) { o.Budget = 200 })
	r := ask(t, f.asker, Request{Question: "What does clause 9 require?", Layers: []string{"contracts"}})
	if len(r.Passages) == 0 || !r.Passages[0].Cut || r.Passages[0].Match != "exact" {
		t.Fatalf("passages %+v, want clause 9 cut", r.Passages)
	}
	if r.Status != string(PartlyFound) || !strings.Contains(strings.Join(r.Notes, " "), "acme-msa.md") {
		t.Errorf("status %s notes %q, want partly_found naming the file", r.Status, r.Notes)
	}
	// The ref names exactly the text returned.
	p := r.Passages[0]
	var doc int64
	var s, e int
	if _, err := fmt.Sscanf(p.Ref, "d%d:%d-%d", &doc, &s, &e); err != nil || e-s != len(p.Text) {
		t.Errorf("ref %s for %d bytes of text (%v)", p.Ref, len(p.Text), err)
	}
}

func testAskMoreClausesThanFit(t *testing.T) {
	f := newAsker(t, func(o *Options) { o.Budget = 120 })
	r := ask(t, f.asker, Request{Question: "Compare clause 9 with clause 7.1 and clause 8", Layers: []string{"contracts"}})
	notes := strings.Join(r.Notes, " ")
	if r.Status != string(PartlyFound) || !strings.Contains(notes, "did not fit") {
		t.Fatalf("status %s notes %q, want partly_found with the left-out clauses", r.Status, r.Notes)
	}
}

func testAskPassageOverTheBudgetAlone(t *testing.T) {
	f := newAsker(t, func(o *Options) { o.Budget = 10 })
	r := ask(t, f.asker, Request{Question: "How must the supplier perform the services?", Layers: []string{"contracts"}})
	if len(r.Passages) != 1 {
		t.Fatalf("%d passages, want exactly the first one despite the budget", len(r.Passages))
	}
}

func testAskNames(t *testing.T) {
	f := newAsker(t, nil)
	// PEP 8 is found through the file path pep-0008.md.
	r := ask(t, f.asker, Request{Question: "How many spaces per indentation level does PEP 8 want?", Layers: []string{"rules"}})
	if r.Status == string(NotFound) || strings.Contains(strings.Join(r.Notes, " "), "PEP 8") {
		t.Errorf("PEP 8: status %s notes %q", r.Status, r.Notes)
	}
	// A code no passage holds makes it not_found, with the note.
	r = ask(t, f.asker, Request{Question: "What does the reason code ZZ99 mean?", Layers: []string{"rules"}})
	if r.Status != string(NotFound) || !strings.Contains(strings.Join(r.Notes, " "), `"ZZ99"`) {
		t.Errorf("ZZ99: status %s notes %q", r.Status, r.Notes)
	}
	if r.NextStep == "" {
		t.Errorf("not_found without next_step")
	}
	// A question in capitals: no word is a name for its capitals alone.
	r = ask(t, f.asker, Request{Question: "WHAT DOES THE REASON CODE AC04 MEAN", Layers: []string{"rules"}})
	if r.Status == string(NotFound) {
		t.Errorf("capitals: status %s notes %q", r.Status, r.Notes)
	}
}

func testAskLabels(t *testing.T) {
	f := newAsker(t, nil)
	r := ask(t, f.asker, Request{Question: "When is payment due after the invoice?", Layers: []string{"contracts"}})
	var old, new bool
	for _, p := range r.Passages {
		switch p.Citation.File {
		case "old-terms.md":
			old = true
			if p.Citation.ReplacedBy != "new-terms.md" {
				t.Errorf("old-terms.md replaced_by %q", p.Citation.ReplacedBy)
			}
		case "new-terms.md":
			new = true
			if p.Citation.ReplacedBy != "" {
				t.Errorf("new-terms.md replaced_by %q", p.Citation.ReplacedBy)
			}
		}
	}
	if !old || !new {
		t.Fatalf("passages %q, want both terms", files(r))
	}
	r = ask(t, f.asker, Request{Question: "What uptime does the hosted service have each month?", Layers: []string{"contracts"}})
	if len(r.Passages) == 0 || r.Passages[0].Citation.File != "archive/2019-sla.md" || !r.Passages[0].Citation.Archived {
		t.Errorf("archived: %+v", r.Passages)
	}
}

func testAskModes(t *testing.T) {
	f := newAsker(t, nil)
	r := ask(t, f.asker, Request{Question: "How many spaces per indentation level?", Layers: []string{"rules"}})
	if r.Mode != ModeExtractive {
		t.Errorf("extractive layer: mode %s", r.Mode)
	}
	r = ask(t, f.asker, Request{Question: "How many spaces per indentation level?", Layers: []string{"rules"}, Mode: ModeGrounded})
	if r.Mode != ModeExtractive || !strings.Contains(strings.Join(r.Notes, " "), "cannot loosen") {
		t.Errorf("grounded asked on an extractive passage: mode %s notes %q", r.Mode, r.Notes)
	}
	r = ask(t, f.asker, Request{Question: "What is the notice period?", Layers: []string{"contracts"}, Mode: ModeExtractive})
	if r.Mode != ModeExtractive {
		t.Errorf("extractive asked: mode %s", r.Mode)
	}
	r = ask(t, f.asker, Request{Question: "What is the notice period?", Layers: []string{"contracts"}})
	if r.Mode != ModeGrounded {
		t.Errorf("grounded layer: mode %s", r.Mode)
	}
}

func testAskDetailed(t *testing.T) {
	f := newAsker(t, nil)
	r := ask(t, f.asker, Request{Question: "Who can end this agreement with written notice?", Layers: []string{"contracts"}, ResponseFormat: FormatDetailed})
	if r.Status != "ok" || r.AnswerStatus == "" || r.Basis != "rerank" || r.Confidence == "" {
		t.Fatalf("detailed: status %s answer_status %s basis %s confidence %s", r.Status, r.AnswerStatus, r.Basis, r.Confidence)
	}
	if len(r.RetrievedChunks) == 0 || len(r.Sources) != len(r.Passages) || len(r.QueryVariants) != 1 {
		t.Fatalf("detailed: %d chunks, %d sources for %d passages, variants %q", len(r.RetrievedChunks), len(r.Sources), len(r.Passages), r.QueryVariants)
	}
	top := 0.0
	for _, c := range r.RetrievedChunks {
		top = max(top, c.Score)
		if c.RerankScore == nil {
			t.Errorf("chunk %d without rerank_score", c.ChunkID)
		}
	}
	if top != 1 {
		t.Errorf("best merged score %v, want 1", top)
	}
	no := false
	r = ask(t, f.asker, Request{Question: "Who can end this agreement?", Layers: []string{"contracts"}, ResponseFormat: FormatDetailed, IncludeSources: &no})
	if r.Sources != nil {
		t.Errorf("include_sources false: %d sources", len(r.Sources))
	}
}

// testAskLowConfidenceWarns: a detailed answer whose passages reach no
// medium mark has confidence low and a warning, passages or not; one at
// high confidence has none.
func testAskLowConfidenceWarns(t *testing.T) {
	f := newAsker(t, nil)
	r := ask(t, f.asker, Request{Question: "What does hosted uptime cost for zebra quokka platypus wombats?",
		Layers: []string{"contracts"}, ResponseFormat: FormatDetailed})
	if r.Confidence != "low" || len(r.Passages) == 0 {
		t.Fatalf("confidence %s with %d passages, want low with passages", r.Confidence, len(r.Passages))
	}
	if !strings.Contains(r.Warning, "another layer") {
		t.Errorf("low confidence with passages: warning %q", r.Warning)
	}
	r = ask(t, f.asker, Request{Question: "What does clause 7.2 say?", Layers: []string{"contracts"}, ResponseFormat: FormatDetailed})
	if r.Confidence != "high" || r.Warning != "" {
		t.Errorf("high confidence: confidence %s warning %q", r.Confidence, r.Warning)
	}
}

func testAskRerankerDownKeepsFusionOrder(t *testing.T) {
	f := newAsker(t, func(o *Options) { o.Reranker = Texts{overlap{fail: errors.New("connection refused")}} })
	r := ask(t, f.asker, Request{Question: "Who can end this agreement with written notice?", Layers: []string{"contracts"}, ResponseFormat: FormatDetailed})
	if r.Basis != "similarity" || len(r.Degraded) == 0 || !strings.Contains(strings.Join(r.Degraded, " "), "connection refused") {
		t.Errorf("basis %s degraded %q", r.Basis, r.Degraded)
	}
	if len(r.Passages) == 0 {
		t.Errorf("no passages without the reranker")
	}
}

func testAskVariantsAreMerged(t *testing.T) {
	var gotLayers []string
	f := newAsker(t, func(o *Options) {
		o.Rewriter = func(_ context.Context, q string, ls []store.Layer) ([]string, string) {
			for _, l := range ls {
				gotLayers = append(gotLayers, l.Name)
			}
			return []string{q, "liability capped fees twelve months"}, ""
		}
	})
	r := ask(t, f.asker, Request{Question: "How much can we claim from them at most?", Layers: []string{"contracts"}, ResponseFormat: FormatDetailed})
	if len(r.QueryVariants) != 2 || strings.Join(gotLayers, ",") != "contracts" {
		t.Fatalf("variants %q, rewriter saw layers %q", r.QueryVariants, gotLayers)
	}
	found := false
	for _, p := range r.Passages {
		if strings.Contains(p.Text, "Liability is capped") {
			found = true
		}
	}
	if !found {
		t.Errorf("the second variant's passage is missing: %q", files(r))
	}
}

func testAskArguments(t *testing.T) {
	f := newAsker(t, nil)
	for _, c := range []struct {
		req Request
		arg string
	}{
		{Request{Question: " "}, "question"},
		{Request{Question: "x", TopK: 51}, "top_k"},
		{Request{Question: "x", ResponseFormat: "long"}, "response_format"},
		{Request{Question: "x", Mode: "free"}, "mode"},
		{Request{Question: "x", Layers: []string{"nope"}}, "layers"},
		{Request{Question: "a\x00b"}, "question"},
	} {
		_, err := f.asker.Ask(context.Background(), c.req)
		var qe *qerr.Error
		if !errors.As(err, &qe) || qe.Kind != qerr.Invalid || qe.Arg != c.arg {
			t.Errorf("%+v: %v, want an invalid %s", c.req, err, c.arg)
		}
	}
}

func testAskScrubsRecordedQuestions(t *testing.T) {
	f := newAsker(t, nil)
	q := "Why was the payment to DE89 3704 0044 0532 0130 00 returned?"
	r := ask(t, f.asker, Request{Question: q, Layers: []string{"rules"}, ResponseFormat: FormatDetailed})
	if len(f.rec.got) != 1 || strings.Contains(f.rec.got[0].Question, "3704") || strings.Contains(strings.Join(f.rec.got[0].Variants, " "), "3704") {
		t.Fatalf("recorded %+v", f.rec.got)
	}
	if r.QueryVariants[0] != q {
		t.Errorf("the response's variant was scrubbed too: %q", r.QueryVariants[0])
	}
	raw := newAsker(t, func(o *Options) { o.RawQueries = true })
	ask(t, raw.asker, Request{Question: q, Layers: []string{"rules"}})
	if raw.rec.got[0].Question != q {
		t.Errorf("LEARNING_STORE_RAW_QUERIES: recorded %q", raw.rec.got[0].Question)
	}
}

func testAskWithoutAnyBasis(t *testing.T) {
	f := newAsker(t, nil)
	a := New(Options{Engine: retrieve.New(f.st, retrieve.Options{}), Docs: f.st})
	r := ask(t, a, Request{Question: "When is payment due after the invoice?", Layers: []string{"contracts"}, ResponseFormat: FormatDetailed})
	if r.AnswerStatus != string(PartlyFound) || r.Warning == "" || r.Basis != basisNone || len(r.Passages) == 0 {
		t.Errorf("no reranker, no vectors: status %s basis %s warning %q, %d passages", r.AnswerStatus, r.Basis, r.Warning, len(r.Passages))
	}
}
