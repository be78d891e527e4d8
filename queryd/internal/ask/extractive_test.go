package ask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/chunker"
	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// The extractive fixture: a contract whose clause 7.2 has a wrapped line,
// an abbreviation and a clause number inside its sentences, a long clause
// 9, German text, a price list without end marks over 2,000 characters, a
// page read by OCR, and a layer whose text was not kept.
var extractiveDocs = map[string]string{
	"msa.md": "# Master Agreement\n\n## 7 Termination\n\n### 7.2 Notice\n\n" +
		"Either party may end this agreement\nwith ninety days' written notice. " +
		"The notice must be sent by registered mail to the address in No. 4 of the schedule, as set out in clause 7.1 above. " +
		"Notice by e-mail is not enough, e.g. a message to the support desk does not count.\n\n" +
		"## 8 Codes\n\nThe reason code AC04 means the account is closed. Payments to a closed account are returned within two days.\n\n" +
		"## 9 Services\n\n" +
		strings.Repeat("The supplier shall perform the services with due care and skill, using trained staff on site. ", 16) + "\n",
	"agb-de.md": "# Allgemeine Bedingungen\n\n" +
		"Für Verträge über 5.000 € gelten längere Fristen für die Kündigung durch beide Seiten. " +
		"Die Kündigungsfrist beträgt neunzig Tage für Verträge über 5.000 €. " +
		"Änderungen müssen schriftlich erfolgen.\n",
	"prices.md": "# Price list\n\n" + strings.Repeat("Zirconium widget grade A   twelve euro a unit\n", 60),
	"scan.md":   "# Scanned letter\n\nThe warehouse inventory count happens every quarter on the first Monday.\n",
}

var legacyDocs = map[string]string{
	"old.md": "# Old rules\n\nThe legacy warranty lasts eighteen months from delivery.\n",
}

type exFixture struct {
	pool  *pgxpool.Pool
	url   string
	st    *store.Corpus
	led   *store.Ledger
	eng   *retrieve.Engine
	bodys map[int64]string
}

func newExFixture(t *testing.T) *exFixture {
	pool, url := dbtest.NewPool(t)
	for name, docs := range map[string]map[string]string{"clauses": extractiveDocs, "legacy": legacyDocs} {
		root := writeFolder(t, name, docs)
		ingesttest.Ingest(t, pool, jobs.Layer{Name: name, Root: root, ChunkSize: 200, AnswerMode: "extractive"},
			ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	}
	ctx := context.Background()
	// scan.md's page came from OCR; legacy was stored before text was kept.
	if _, err := pool.Exec(ctx, `INSERT INTO strata.pages (document_id, number, start_off, end_off, text_origin)
		SELECT id, 1, 0, octet_length(body), 'ocr' FROM strata.documents WHERE path = 'scan.md'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE strata.documents SET body = NULL WHERE layer_id = (SELECT id FROM strata.layers WHERE name = 'legacy')`); err != nil {
		t.Fatal(err)
	}
	qurl := dbtest.QuerydURL(t, url)
	st, err := store.OpenCorpus(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	led, err := store.OpenLedger(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(led.Close)
	f := &exFixture{pool: pool, url: qurl, st: st, led: led, bodys: map[int64]string{},
		eng: retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1})}
	rows, err := pool.Query(ctx, `SELECT id, body FROM strata.documents WHERE body IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var body string
		if err := rows.Scan(&id, &body); err != nil {
			t.Fatal(err)
		}
		f.bodys[id] = body
	}
	return f
}

func (f *exFixture) asker(opt func(*Options)) *Asker {
	o := Options{Engine: f.eng, Docs: f.st, Reranker: Texts{overlap{}}, Receipts: f.led}
	if opt != nil {
		opt(&o)
	}
	return New(o)
}

// body returns the stored text of a sentence's document.
func (f *exFixture) body(t *testing.T, ref string) (string, schema.Ref) {
	t.Helper()
	r, err := schema.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := f.bodys[r.DocumentID]
	if !ok {
		t.Fatalf("no body for %s", ref)
	}
	return b, r
}

// checkSentences asserts the rules every answer sentence keeps: its text is
// the stored span its ref names (read back through Spans, bytes exact), it
// is one whole non-heading sentence of the chunker's splitter over the
// whole document, and it is at most 2,000 characters.
func (f *exFixture) checkSentences(t *testing.T, r *Response) {
	t.Helper()
	refs := make([]schema.Ref, len(r.Answer))
	for i, s := range r.Answer {
		body, ref := f.body(t, s.Ref)
		refs[i] = ref
		whole := false
		for _, sp := range chunker.Sentences(body, 0, len(body)) {
			if sp.Start == ref.Start && sp.End == ref.End && !sp.Heading {
				whole = true
			}
		}
		if !whole {
			t.Errorf("sentence %q (%s) is not a whole sentence of its document", s.Text, s.Ref)
		}
		if utf8.RuneCountInString(s.Text) > MaxSentenceChars {
			t.Errorf("sentence of %d characters returned", utf8.RuneCountInString(s.Text))
		}
		if s.Passage == "" || s.Citation.File == "" || s.TextOrigin == "" {
			t.Errorf("sentence without passage, citation or origin: %+v", s)
		}
	}
	spans, err := f.st.Spans(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range spans {
		if string(sp.Bytes) != r.Answer[i].Text {
			t.Errorf("sentence %d: text %q, the store holds %q at %s", i, r.Answer[i].Text, sp.Bytes, r.Answer[i].Ref)
		}
	}
	if len(r.Answer) > 0 && !store.ValidReceiptID(r.ReceiptID) {
		t.Errorf("answer with sentences and receipt %q", r.ReceiptID)
	}
	if len(r.Answer) > 0 && store.ValidReceiptID(r.ReceiptID) {
		f.checkReceiptSentences(t, r)
	}
	if len(r.Answer) == 0 && r.ReceiptID != "" {
		t.Errorf("receipt %s without a sentence", r.ReceiptID)
	}
}

// checkReceiptSentences: an extractive receipt's checks are its answer's
// sentences, each quoted whole from its passage (issue 27, item 8).
func (f *exFixture) checkReceiptSentences(t *testing.T, r *Response) {
	t.Helper()
	rec, err := f.led.Receipt(context.Background(), r.ReceiptID)
	if err != nil {
		t.Fatal(err)
	}
	var checks []struct {
		Kind, Text, Passage string
		Sentence, Start     int
		End                 int
	}
	if err := json.Unmarshal(rec.Checks, &checks); err != nil {
		t.Fatal(err)
	}
	if rec.Checked != len(r.Answer) || len(checks) != len(r.Answer) {
		t.Fatalf("receipt checked %d with %d checks for %d sentences", rec.Checked, len(checks), len(r.Answer))
	}
	for i, c := range checks {
		a := r.Answer[i]
		if c.Kind != ReceiptSentence || c.Text != a.Text || c.Passage != a.Passage || c.Sentence != i+1 || c.Start != 0 || c.End != len(a.Text) {
			t.Errorf("receipt check %d = %+v, want sentence %q of %s", i, c, a.Text, a.Passage)
		}
	}
}

func exAsk(t *testing.T, a *Asker, req Request) *Response {
	t.Helper()
	r, err := a.Ask(context.Background(), req)
	if err != nil {
		t.Fatalf("ask %q: %v", req.Question, err)
	}
	return r
}

func answerTexts(r *Response) []string {
	var out []string
	for _, s := range r.Answer {
		out = append(out, s.Text)
	}
	return out
}

// countScorer counts the calls to the sentence scorer it wraps.
type countScorer struct {
	SentenceScorer
	n *int
}

func (c countScorer) ScoreSentences(ctx context.Context, q string, s []SentenceInput, cs []retrieve.Candidate) ([]float64, error) {
	*c.n++
	return c.SentenceScorer.ScoreSentences(ctx, q, s, cs)
}

func TestExtractive(t *testing.T) {
	f := newExFixture(t)
	ctx := context.Background()
	layers := []string{"clauses"}

	t.Run("WholeSentencesAcrossPassageBoundaries", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "How can either party end this agreement with written notice?", Layers: layers})
		if r.Mode != ModeExtractive || r.Status != string(Found) || len(r.Answer) == 0 {
			t.Fatalf("mode %s status %s answer %q notes %q", r.Mode, r.Status, answerTexts(r), r.Notes)
		}
		want := "Either party may end this agreement\nwith ninety days' written notice."
		if r.Answer[0].Text != want {
			t.Errorf("first sentence %q, want the wrapped sentence %q", r.Answer[0].Text, want)
		}
		f.checkSentences(t, r)
		// With chunks of 200 characters some sentence reaches past the
		// passage it was read around: it comes back whole.
		outside := false
		for _, s := range r.Answer {
			for _, p := range r.Passages {
				if p.ID != s.Passage {
					continue
				}
				pr, _ := schema.ParseRef(p.Ref)
				sr, _ := schema.ParseRef(s.Ref)
				if sr.Start < pr.Start || sr.End > pr.End {
					outside = true
				}
			}
		}
		if !outside {
			t.Logf("no sentence crossed its passage's bounds in this answer (the chunker cuts at sentences): %q", answerTexts(r))
		}
		// The receipt holds the sentences as read, with their hashes.
		rec, err := f.led.Receipt(ctx, r.ReceiptID)
		if err != nil {
			t.Fatal(err)
		}
		var ps []struct{ Ref, Text, SHA256 string }
		if err := json.Unmarshal(rec.Passages, &ps); err != nil {
			t.Fatal(err)
		}
		if rec.Tool != "strata_ask" || rec.Status != string(Found) || len(ps) != len(r.Answer) {
			t.Fatalf("receipt %+v", rec)
		}
		// Its checks are the sentences quoted (checkReceiptSentences).
		f.checkReceiptSentences(t, r)
		for i, p := range ps {
			sum := sha256.Sum256([]byte(r.Answer[i].Text))
			if p.Ref != r.Answer[i].Ref || p.Text != r.Answer[i].Text || p.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("receipt passage %d: %+v", i, p)
			}
		}
	})

	t.Run("PassageCutInsideSentences", func(t *testing.T) {
		// A passage from inside the first sentence of 7.2 to inside the
		// second: both come back whole, with refs outside the passage's.
		var id int64
		var body string
		for d, b := range f.bodys {
			if strings.HasPrefix(b, "# Master Agreement") {
				id, body = d, b
			}
		}
		from := strings.Index(body, "party may end")
		to := strings.Index(body, "registered mail")
		if id == 0 || from < 0 || to < 0 {
			t.Fatal("msa.md is not in the fixture")
		}
		ref := schema.Ref{DocumentID: id, Start: from, End: to}
		ps := []Passage{{ID: "S1", Ref: ref.String(), Text: body[from:to], Citation: Citation{File: "msa.md", Lines: "7-8", Layer: "clauses"}}}
		c := retrieve.Candidate{DocumentID: id, Start: from, End: to, Text: body[from:to], File: "msa.md", Layer: "clauses"}
		ex, err := f.asker(nil).extract(ctx, parseAsked("Either party notice registered mail?"), ps,
			map[int]string{0: "S1"}, []retrieve.Candidate{c}, nil, ClauseReport{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range ex.answer {
			got = append(got, s.text)
			if body[s.start:s.end] != s.text {
				t.Errorf("sentence %q is not the stored text at %d-%d", s.text, s.start, s.end)
			}
		}
		want := []string{"Either party may end this agreement\nwith ninety days' written notice.",
			"The notice must be sent by registered mail to the address in No. 4 of the schedule, as set out in clause 7.1 above."}
		if strings.Join(got, "|") != strings.Join(want, "|") && strings.Join(got, "|") != want[1]+"|"+want[0] {
			t.Errorf("sentences %q, want %q", got, want)
		}
		for _, s := range ex.answer {
			if s.start >= from && s.end <= to {
				t.Errorf("sentence %q lies inside the passage: it was not widened", s.text)
			}
		}
	})

	t.Run("NamedClauseSentenceBySentence", func(t *testing.T) {
		n := 0
		a := f.asker(func(o *Options) { o.Sentences = countScorer{TextSentences{overlap{}}, &n} })
		r := exAsk(t, a, Request{Question: "What does clause 7.2 say?", Layers: layers})
		if r.Status != string(Found) {
			t.Fatalf("status %s notes %q", r.Status, r.Notes)
		}
		got := answerTexts(r)
		want := []string{
			"Either party may end this agreement\nwith ninety days' written notice.",
			"The notice must be sent by registered mail to the address in No. 4 of the schedule, as set out in clause 7.1 above.",
			"Notice by e-mail is not enough, e.g. a message to the support desk does not count.",
		}
		if len(got) < len(want) {
			t.Fatalf("answer %q, want the clause's three sentences first", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("sentence %d: %q, want %q (abbreviations and clause numbers end no sentence; headings are left out)", i, got[i], want[i])
			}
		}
		for _, s := range got {
			if strings.Contains(s, "7.2 Notice") || strings.HasPrefix(s, "#") {
				t.Errorf("a heading was quoted: %q", s)
			}
		}
		f.checkSentences(t, r)
	})

	t.Run("NamedClauseOverTheBudget", func(t *testing.T) {
		a := f.asker(func(o *Options) { o.Budget = 150 })
		r := exAsk(t, a, Request{Question: "What does clause 9 require?", Layers: layers})
		notes := strings.Join(r.Notes, " ")
		if r.Status != string(PartlyFound) || !strings.Contains(notes, "clause 9") || !strings.Contains(notes, "msa.md") {
			t.Fatalf("status %s notes %q, want partly_found naming clause 9 of msa.md", r.Status, r.Notes)
		}
		if len(r.Answer) == 0 || !strings.HasPrefix(r.Answer[0].Text, "The supplier shall perform") {
			t.Fatalf("answer %q", answerTexts(r))
		}
		chars := 0
		for _, s := range r.Answer {
			chars += utf8.RuneCountInString(s.Text)
		}
		if chars > 150*CharsPerToken {
			t.Errorf("%d characters of sentences over a budget of 150 tokens", chars)
		}
		f.checkSentences(t, r)
	})

	t.Run("MultiByte", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "Welche Kündigungsfrist gilt für Verträge?", Layers: layers})
		found := false
		for _, s := range r.Answer {
			if s.Text == "Die Kündigungsfrist beträgt neunzig Tage für Verträge über 5.000 €." {
				found = true
			}
		}
		if !found {
			t.Fatalf("status %s answer %q notes %q", r.Status, answerTexts(r), r.Notes)
		}
		f.checkSentences(t, r)
	})

	t.Run("LongUnmarkedBlockIsNeverReturned", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "Zirconium widget grade euro unit?", Layers: layers})
		for _, s := range r.Answer {
			if strings.Contains(s.Text, "Zirconium") {
				t.Fatalf("a block of %d characters was quoted", utf8.RuneCountInString(s.Text))
			}
		}
		if r.Status != string(NotFound) || r.ReceiptID != "" || len(r.Answer) != 0 {
			t.Errorf("status %s receipt %q answer %q, want not_found with no answer", r.Status, r.ReceiptID, answerTexts(r))
		}
		if len(r.Passages) == 0 || !strings.Contains(strings.Join(r.Notes, " "), "2000 characters") {
			t.Errorf("passages %d notes %q", len(r.Passages), r.Notes)
		}
	})

	t.Run("OCR", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "When does the warehouse inventory count happen?", Layers: layers})
		if len(r.Answer) == 0 || r.Answer[0].TextOrigin != schema.OriginOCR || r.Answer[0].Warning == "" {
			t.Fatalf("answer %+v", r.Answer)
		}
		f.checkSentences(t, r)
	})

	t.Run("NamesCountThePassages", func(t *testing.T) {
		// The passage holds AC04 and the sentence that answers does not:
		// the names check reads the passages the sentences come from, so
		// the answer stands. A code no passage holds still makes it
		// not_found.
		r := exAsk(t, f.asker(nil), Request{Question: "Within how many days are payments to a closed account returned for AC04?", Layers: layers})
		if r.Status == string(NotFound) || len(r.Answer) == 0 || strings.Contains(strings.Join(r.Notes, " "), `"AC04"`) {
			t.Errorf("status %s notes %q answer %q", r.Status, r.Notes, answerTexts(r))
		}
		for _, a := range r.Answer {
			if strings.Contains(a.Text, "AC04") {
				t.Errorf("a chosen sentence holds AC04: the case tests nothing")
			}
		}
		r = exAsk(t, f.asker(nil), Request{Question: "Within how many days are payments to a closed account returned for ZX99?", Layers: layers})
		if r.Status != string(NotFound) || !strings.Contains(strings.Join(r.Notes, " "), `"ZX99"`) || len(r.Answer) != 0 || r.ReceiptID != "" {
			t.Errorf("ZX99 in no passage: status %s notes %q answer %q receipt %q", r.Status, r.Notes, answerTexts(r), r.ReceiptID)
		}
	})

	t.Run("NothingAtTheMediumMark", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "Which colour has the supplier logo?", Layers: layers})
		if r.Status != string(NotFound) || len(r.Answer) != 0 || r.ReceiptID != "" {
			t.Errorf("status %s answer %q receipt %q", r.Status, answerTexts(r), r.ReceiptID)
		}
	})

	t.Run("TextNotKept", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "How long does the legacy warranty last?", Layers: []string{"legacy"}})
		if len(r.Passages) == 0 || r.Status != string(NotFound) || !strings.Contains(strings.Join(r.Notes, " "), ReingestNote) || r.ReceiptID != "" {
			t.Errorf("passages %d status %s notes %q receipt %q", len(r.Passages), r.Status, r.Notes, r.ReceiptID)
		}
	})

	t.Run("Detailed", func(t *testing.T) {
		r := exAsk(t, f.asker(nil), Request{Question: "How can either party end this agreement with written notice?", Layers: layers, ResponseFormat: FormatDetailed})
		if r.Status != "ok" || r.AnswerStatus != string(Found) || len(r.Answer) == 0 || len(r.Passages) == 0 || len(r.RetrievedChunks) == 0 {
			t.Fatalf("detailed: status %s answer_status %s %d sentences", r.Status, r.AnswerStatus, len(r.Answer))
		}
		for _, s := range r.Answer {
			if s.Score == nil || *s.Score < RerankMedium {
				t.Errorf("sentence %q score %v", s.Text, s.Score)
			}
		}
		concise := exAsk(t, f.asker(nil), Request{Question: "How can either party end this agreement with written notice?", Layers: layers})
		if concise.Answer[0].Score != nil {
			t.Errorf("concise answer with a score")
		}
		// The concise answer is the sentences, not the passages; the
		// detailed one holds both.
		for _, c := range []struct {
			r        *Response
			passages bool
		}{{concise, false}, {r, true}} {
			b, err := json.Marshal(c.r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			_, has := m["passages"]
			if has != c.passages || m["answer"] == nil || m["mode"] == nil || m["status"] == nil {
				t.Errorf("%s response: passages %v, want %v: %s", c.r.Status, has, c.passages, b)
			}
		}
		grounded, err := json.Marshal(&Response{Status: "not_found", Mode: ModeGrounded, Passages: []Passage{}})
		if err != nil || !strings.Contains(string(grounded), `"passages":[]`) {
			t.Errorf("grounded response %s (%v)", grounded, err)
		}
	})

	t.Run("ModeAskedOnAGroundedResult", func(t *testing.T) {
		// The budget and sentence cap hold for mode extractive too.
		r := exAsk(t, f.asker(nil), Request{Question: "How must the supplier perform the services with trained staff?", Layers: layers, Mode: ModeExtractive})
		if len(r.Answer) > MaxAnswerSentences {
			t.Errorf("%d sentences", len(r.Answer))
		}
		f.checkSentences(t, r)
	})

	t.Run("OfflineScorerWithRerankingOff", func(t *testing.T) {
		n := 0
		a := f.asker(func(o *Options) {
			o.Reranker = nil
			o.Sentences = countScorer{OfflineSentences{Model: lrank.Default, Embedder: bow{}}, &n}
		})
		r := exAsk(t, a, Request{Question: "How can either party end this agreement with written notice?", Layers: layers, ResponseFormat: FormatDetailed})
		if n != 1 {
			t.Fatalf("the sentence scorer ran %d times with reranking off", n)
		}
		f.checkSentences(t, r)
		for _, s := range r.Answer {
			if s.Score == nil || *s.Score < RerankMedium || *s.Score > 1 {
				t.Errorf("offline sentence score %v", s.Score)
			}
		}
	})

	t.Run("ScorerCannotLoad", func(t *testing.T) {
		a := f.asker(func(o *Options) { o.Sentences, o.SentencesError = nil, errors.New("weights missing") })
		_, err := a.Ask(ctx, Request{Question: "How can either party end this agreement?", Layers: layers})
		if err == nil || !strings.Contains(err.Error(), "weights missing") || !strings.Contains(err.Error(), "cannot load") {
			t.Errorf("err %v, want a clear error", err)
		}
		// mode grounded cannot loosen an extractive layer's answer, so it
		// needs the scorer too.
		if _, err := a.Ask(ctx, Request{Question: "How can either party end this agreement?", Layers: layers, Mode: ModeGrounded}); err == nil {
			t.Errorf("mode grounded on an extractive layer answered without the scorer")
		}
	})
}

func TestSentenceFeatures(t *testing.T) {
	q := "written notice period"
	sents := []string{
		"Either party may end this agreement with ninety days' written notice.",
		"Payments are due within thirty days.",
		"The written notice period is ninety days.",
	}
	fs := SentenceFeatures(q, sents, []int{0, 0, 1}, nil, []float64{0.5, -0.2, 0.25})
	if len(fs) != 3 || len(fs[0]) != len(SentenceFeatureNames) {
		t.Fatalf("features %v", fs)
	}
	// BM25 relative to the best of its passage, coverage, cosine relative
	// to the best of its passage (a negative cosine counts as 0).
	if fs[0][0] != 1 || fs[1][0] != 0 || fs[1][2] != 0 || fs[2][0] != 1 {
		t.Errorf("bm25_rel / coverage: %v", fs)
	}
	if fs[2][2] <= fs[0][2] {
		t.Errorf("coverage: the sentence with every term %v, with two %v", fs[2][2], fs[0][2])
	}
	if fs[0][3] != 1 || fs[1][3] != 0 || fs[2][3] != 1 || fs[1][4] != -0.2 {
		t.Errorf("cosine features %v", fs)
	}
	// A sentence without a vector (NaN) has no cosine features.
	if nan := SentenceFeatures(q, sents, []int{0, 0, 1}, nil, []float64{0.5, -0.2, math.NaN()}); nan[2][3] != 0 || nan[2][4] != 0 || nan[0][3] != 1 {
		t.Errorf("a sentence without a vector: %v", nan)
	}
	if fs[0][6] != 1 || fs[1][6] != 0 || fs[2][6] != 1 || fs[0][7] != 0 || fs[1][7] != 1 || fs[2][7] != 0 {
		t.Errorf("place features %v", fs)
	}
	if nc := SentenceFeatures(q, sents, []int{0, 0, 1}, nil, nil); nc[0][3] != 0 || nc[0][4] != 0 {
		t.Errorf("without vectors the cosine features are %v", nc[0])
	}
	// Clause words: the share of their distinct stemmed terms the sentence
	// holds ("notices" is "notice" stemmed, "days" counted once), 0 without
	// any.
	for i, f := range fs {
		if f[8] != 0 {
			t.Errorf("sentence %d without clause words: clause_words %v", i, f[8])
		}
	}
	cw := SentenceFeatures(q, sents, []int{0, 0, 1}, []string{"notices days party terminate", "days days", ""}, nil)
	if cw[0][8] != 0.75 || cw[1][8] != 1 || cw[2][8] != 0 {
		t.Errorf("clause_words %v, %v, %v; want 0.75, 1, 0", cw[0][8], cw[1][8], cw[2][8])
	}
	// The shipped models: the sentence that holds the question's words
	// scores higher than one that holds none.
	for name, m := range map[string]SentenceModel{"with cosine": DefaultSentenceModel.WithCosine, "lexical": DefaultSentenceModel.Lexical} {
		if p := m.Probs(fs); !(p[0] > p[1] && p[2] > p[1]) || p[0] <= 0 || p[0] >= 1 {
			t.Errorf("%s: probabilities %v", name, p)
		}
	}
}

func TestDefaultSentenceModel(t *testing.T) {
	for name, m := range map[string]SentenceModel{"with cosine": DefaultSentenceModel.WithCosine, "lexical": DefaultSentenceModel.Lexical} {
		if err := m.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if DefaultSentenceModel.Lexical.Weights[3] != 0 || DefaultSentenceModel.Lexical.Weights[4] != 0 {
		t.Errorf("the lexical model weighs the cosine: %v", DefaultSentenceModel.Lexical.Weights)
	}
	if !strings.Contains(OfflineSentences{Model: lrank.Default}.Name(), DefaultSentenceModel.Version) {
		t.Errorf("the scorer's name does not say the sentence model's version")
	}
}

func TestCombineSentences(t *testing.T) {
	in := []SentenceInput{{Passage: 0}, {Passage: 0}, {Passage: 1}, {Passage: -1}}
	got := CombineSentences(in, []float64{0.9, 0.6}, []float64{0.2, 0.1, 0.05, 0.5})
	// The best sentence of each passage keeps its passage's probability,
	// the others their odds relative to it; no passage, no score.
	want := []float64{0.9, 0.45, 0.6, 0}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("scores %v, want %v", got, want)
			break
		}
	}
}

// fixedScorer gives the sentences fixed scores, best first in order.
type fixedScorer []float64

func (fixedScorer) Name() string { return "fixed" }
func (f fixedScorer) ScoreSentences(_ context.Context, _ string, s []SentenceInput, _ []retrieve.Candidate) ([]float64, error) {
	out := make([]float64, len(s))
	for i := range out {
		if i < len(f) {
			out[i] = f[i]
		}
	}
	return out, nil
}

func TestSentenceMark(t *testing.T) {
	f := newExFixture(t)
	q := Request{Question: "How can either party end this agreement with written notice?", Layers: []string{"clauses"}}
	// The first sentence needs the medium mark, the others SentenceMark.
	for _, c := range []struct {
		scores []float64
		n      int
		status Status
	}{
		{[]float64{0.9, SentenceMark, SentenceMark - 0.01}, 2, Found},
		{[]float64{RerankMedium, max(RerankMedium, SentenceMark) - 0.01}, 1, PartlyFound},
		{[]float64{RerankMedium - 0.01, RerankMedium - 0.01}, 0, NotFound},
	} {
		r := exAsk(t, f.asker(func(o *Options) { o.Sentences = fixedScorer(c.scores) }), q)
		if len(r.Answer) != c.n || r.Status != string(c.status) {
			t.Errorf("scores %v: %d sentences, status %s; want %d, %s", c.scores, len(r.Answer), r.Status, c.n, c.status)
		}
	}
}

func TestSentenceBM25(t *testing.T) {
	s := SentenceBM25("written notice period", []string{
		"Either party may end this agreement with ninety days' written notice.",
		"Payments are due within thirty days.",
		"Notice by e-mail is not enough.",
	})
	if !(s[0] > s[2] && s[2] > s[1] && s[1] == 0) {
		t.Errorf("scores %v", s)
	}
}

// countEmbedder counts the texts it embeds.
type countEmbedder struct {
	bow
	n *int
}

func (c countEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	*c.n += len(texts)
	return c.bow.Embed(ctx, texts)
}

func TestOfflineSentencesMinPassage(t *testing.T) {
	q := "How long is the written notice period?"
	cands := []retrieve.Candidate{
		{Text: "Either party may end this agreement with ninety days' written notice. The notice period is ninety days.", Similarity: 0.8, FusedRank: 1,
			Lexical: &retrieve.ChannelHit{Rank: 1, Score: 9}, Vector: &retrieve.ChannelHit{Rank: 1}},
		{Text: "Payments are due within thirty days.", Similarity: 0.1, FusedRank: 2},
	}
	sents := []SentenceInput{
		{Text: "Either party may end this agreement with ninety days' written notice.", Passage: 0},
		{Text: "The notice period is ninety days.", Passage: 0},
		{Text: "Payments are due within thirty days.", Passage: 1},
	}
	pp := OfflineSentences{Model: lrank.Default}.PassageProbs(q, cands)
	if !(pp[0] > pp[1]) {
		t.Fatalf("passage probabilities %v", pp)
	}
	mid := (pp[0] + pp[1]) / 2
	for _, c := range []struct {
		min  float64
		want int // texts embedded: the question and the sentences
	}{{0, 4}, {mid, 3}, {1.01, 0}} {
		n := 0
		o := OfflineSentences{Model: lrank.Default, Embedder: countEmbedder{bow{}, &n}, MinPassage: c.min}
		got, err := o.ScoreSentences(context.Background(), q, sents, cands)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("MinPassage %.2f: %d texts embedded, want %d", c.min, n, c.want)
		}
		// Every sentence is scored, none above its passage, and the best
		// of each passage keeps its passage's probability.
		if len(got) != 3 || got[0] > pp[0]+1e-9 || got[1] > pp[0]+1e-9 || math.Abs(max(got[0], got[1])-pp[0]) > 1e-9 || math.Abs(got[2]-pp[1]) > 1e-9 {
			t.Errorf("MinPassage %.2f: scores %v for passages %v", c.min, got, pp)
		}
	}
}

// A contract question rarely shares its words with the clause that answers
// it: the sentence model reads the drafting words of the clause type asked
// about (retrieve.ClauseWords, carried by a contracts-preset candidate), so
// within the passage the governing-law sentence comes before one that
// merely holds more of the question's words.
func TestOfflineSentencesClauseWords(t *testing.T) {
	q := "Which law governs this agreement?"
	words := retrieve.ClauseWords(q)
	if words == "" {
		t.Fatalf("no clause words for %q", q)
	}
	sents := []SentenceInput{
		{Text: "Each party shall comply with all laws that govern its business.", Passage: 0},
		{Text: "This Agreement shall be construed and interpreted in accordance with the laws of the State of New York, without regard to its conflict of laws principles.", Passage: 0},
		{Text: "Notices under this Agreement shall be given in writing.", Passage: 0},
	}
	var text []string
	for _, s := range sents {
		text = append(text, s.Text)
	}
	cand := retrieve.Candidate{Text: strings.Join(text, " "), Layer: "contracts", Similarity: 0.6, FusedRank: 1,
		Lexical: &retrieve.ChannelHit{Rank: 1, Score: 9}, Vector: &retrieve.ChannelHit{Rank: 1}}
	// Both sentence models: without vectors (lexical) and with a cosine.
	for name, emb := range map[string]embed.Embedder{"lexical": nil, "with cosine": bow{}} {
		score := func(clauseWords string) []float64 {
			t.Helper()
			c := cand
			c.ClauseWords = clauseWords
			got, err := OfflineSentences{Model: lrank.Default, Embedder: emb}.ScoreSentences(context.Background(), q, sents, []retrieve.Candidate{c})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		// Without the clause words (a layer of another preset) the
		// sentence that holds every word of the question comes first: the
		// case the feature is for.
		if s := score(""); !(s[0] > s[1]) {
			t.Fatalf("%s: without clause words the governing-law sentence already comes first: %v", name, s)
		}
		if s := score(words); !(s[1] > s[0] && s[1] > s[2]) {
			t.Errorf("%s: with clause words %q: scores %v, want the governing-law sentence first", name, words, s)
		}
	}
}

// TestSentenceCitesItsClause: a sentence cites the innermost section that
// holds it, not the clause path of the passage it was read around (a
// passage that starts in "7 Termination" may hold 7.2's sentences).
func TestSentenceCitesItsClause(t *testing.T) {
	f := newExFixture(t)
	ctx := context.Background()
	var id int64
	var body string
	for d, b := range f.bodys {
		if strings.HasPrefix(b, "# Master Agreement") {
			id, body = d, b
		}
	}
	var want string
	if err := f.pool.QueryRow(ctx, `SELECT clause_path FROM strata.sections WHERE document_id = $1 AND title = 'Notice'`, id).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, "7.2") {
		t.Fatalf("the fixture's clause 7.2 has path %q", want)
	}
	// A passage from clause 7's heading into 7.2's first sentence, cited
	// as clause 7.
	from := strings.Index(body, "## 7 Termination")
	to := strings.Index(body, "written notice.") + len("written notice.")
	ref := schema.Ref{DocumentID: id, Start: from, End: to}
	ps := []Passage{{ID: "S1", Ref: ref.String(), Text: body[from:to],
		Citation: Citation{File: "msa.md", Lines: "3-8", Layer: "clauses", ClausePath: "Master Agreement > 7 Termination"}}}
	c := retrieve.Candidate{DocumentID: id, Start: from, End: to, Text: body[from:to], File: "msa.md", Layer: "clauses"}
	a := f.asker(nil)
	ex, err := a.extract(ctx, parseAsked("How can either party end this agreement with written notice?"), ps,
		map[int]string{0: "S1"}, []retrieve.Candidate{c}, nil, ClauseReport{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.answer) == 0 {
		t.Fatalf("no sentence chosen (status %s, notes %q)", ex.status, ex.notes)
	}
	for _, s := range a.answerSentences(ps, ex.answer, false) {
		if s.Citation.ClausePath != want {
			t.Errorf("sentence %q cites %q, want its clause %q", s.Text, s.Citation.ClausePath, want)
		}
	}
}

func TestInnermostSection(t *testing.T) {
	secs := []store.SectionSpan{{Start: 0, End: 100, Path: "7"}, {Start: 10, End: 50, Path: "7 > 7.1"}, {Start: 50, End: 100, Path: "7 > 7.2"}}
	for at, want := range map[int]string{5: "7", 10: "7 > 7.1", 49: "7 > 7.1", 50: "7 > 7.2", 99: "7 > 7.2", 100: ""} {
		if got := innermostSection(secs, at); got != want {
			t.Errorf("at %d: %q, want %q", at, got, want)
		}
	}
}
