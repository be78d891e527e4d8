package ask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// MaxAnswerSentences is the most sentences an extractive answer returns
// besides those of a clause the question names.
const MaxAnswerSentences = 5

// SentenceMark is the score a scored sentence needs to come back after the
// first (which needs the medium mark, as the status does): measured on the
// answer set's train split (docs/ask.md, "Extractive answers").
const SentenceMark = 0.5

// MaxSentenceChars is the longest sentence, in characters, an extractive
// answer quotes: a longer span (an unmarked block, a list run together) is
// never cut and never returned.
const MaxSentenceChars = 2000

// ReingestNote is the note of an extractive answer whose passages were all
// stored before document text was kept.
const ReingestNote = "Re-ingest this layer to enable extractive answers."

// OCRWarning is the warning on a sentence read from OCR text.
const OCRWarning = "This sentence was recognised from a scanned page (OCR): check it against the original page before relying on it."

// AnswerSentence is one sentence of an extractive answer: the document's
// own text, exactly the span ref names, the passage it was read around and
// its citation.
type AnswerSentence struct {
	Text       string   `json:"text"`
	Ref        string   `json:"ref"`
	Passage    string   `json:"passage"`
	Citation   Citation `json:"citation"`
	TextOrigin string   `json:"text_origin"`
	// Warning asks to check an OCR sentence against the original page.
	Warning string `json:"warning,omitempty"`
	// Score is its score against the question (detailed only; 1 for a
	// sentence of a clause the question names, quoted without the model).
	Score *float64 `json:"score,omitempty"`
}

// DocumentText reads the stored text around refs; *store.Corpus is one.
type DocumentText interface {
	Windows(ctx context.Context, refs []schema.Ref) ([]store.Window, error)
}

// Receipts issues receipts; *store.Ledger is one.
type Receipts interface {
	IssueReceipt(ctx context.Context, r store.ReceiptRecord) (string, error)
}

// SentenceInput is one candidate sentence to score: its text and, for a
// sentence read around a retrieved passage, that passage's index in the
// candidates handed to the scorer (-1 for none).
type SentenceInput struct {
	Text    string
	Passage int
}

// SentenceScorer scores sentences against a question with the reranking
// model: probabilities in 0..1, one per sentence, in order, judged on the
// rerank marks. cands are the passages the sentences were read around.
type SentenceScorer interface {
	Name() string
	ScoreSentences(ctx context.Context, question string, sents []SentenceInput, cands []retrieve.Candidate) ([]float64, error)
}

// TextSentences scores sentences with a text reranker (an HTTP
// cross-encoder): each sentence is sent as a passage of its own.
type TextSentences struct{ R TextReranker }

// Name is the reranker's.
func (t TextSentences) Name() string { return t.R.Name() }

// ScoreSentences sends the sentences' text.
func (t TextSentences) ScoreSentences(ctx context.Context, q string, sents []SentenceInput, _ []retrieve.Candidate) ([]float64, error) {
	texts := make([]string, len(sents))
	for i, s := range sents {
		texts[i] = s.Text
	}
	return t.R.Rerank(ctx, q, texts)
}

// sentence is one quotable (or too long) sentence found around a passage.
type sentence struct {
	doc        int64
	start, end int // in the document
	text       string
	passage    int // index into the passages handed back
	cand       int // index into the candidates, -1 for a named clause
	clause     int // index of the named clause it belongs to, -1 for none
	origin     string
	page       *int
	lines      string
	clausePath string // the innermost section holding the sentence's start; "" for none
	tooLong    bool
	score      float64
}

// extraction is the extractive answer before the names check.
type extraction struct {
	answer []sentence
	status Status
	notes  []string
	// namesHits are the chunks read to count the names each document
	// holds (namesHeld); nil when the question gives none.
	namesHits []store.Hit
}

// innermostSection is the clause path of the innermost section holding
// byte offset at: the latest-starting one whose span holds it (sections
// nest, so that is the deepest); "" when none does.
func innermostSection(secs []store.SectionSpan, at int) string {
	path, from := "", -1
	for _, s := range secs {
		if s.Start <= at && at < s.End && s.Start >= from {
			path, from = s.Path, s.Start
		}
	}
	return path
}

// exactPassage returns the index among passages of the ci-th exact one.
func exactPassage(passages []Passage, ci int) int {
	n := 0
	for i, p := range passages {
		if p.Match == "exact" {
			if n == ci {
				return i
			}
			n++
		}
	}
	return 0
}

// sentenceLines is the line range of the sentence [start, end), counted
// from the passage's start (at byte pstart, line pline) within the window.
func sentenceLines(w store.Window, pstart, pline, start, end int) string {
	if pline <= 0 {
		return ""
	}
	rel := func(off int) int {
		if off >= pstart {
			return pline + strings.Count(w.Text[pstart-w.Start:off-w.Start], "\n")
		}
		return pline - strings.Count(w.Text[off-w.Start:pstart-w.Start], "\n")
	}
	return fmt.Sprintf("%d-%d", rel(start), rel(end))
}

// sentenceCitation is a sentence's citation: its passage's, with the
// sentence's own lines and page.
func (a *Asker) sentenceCitation(p Passage, s sentence) Citation {
	c := p.Citation
	if s.lines != "" {
		c.Lines = s.lines
	}
	if s.clausePath != "" {
		// A passage may span a clause and its subclauses: the sentence
		// cites the one it is in ("5 Termination > 5.1 Notice").
		c.ClausePath = s.clausePath
	}
	c.Page = s.page
	return c
}

// answerSentences renders the chosen sentences; detailed adds their
// scores.
func (a *Asker) answerSentences(passages []Passage, chosen []sentence, detailed bool) []AnswerSentence {
	out := make([]AnswerSentence, len(chosen))
	for i, s := range chosen {
		as := AnswerSentence{Text: s.text, Ref: schema.Ref{DocumentID: s.doc, Start: s.start, End: s.end}.WithText(s.text).String(),
			Passage: passages[s.passage].ID, Citation: a.sentenceCitation(passages[s.passage], s), TextOrigin: s.origin}
		if s.origin == schema.OriginOCR {
			as.Warning = OCRWarning
		}
		if detailed {
			sc := round(s.score)
			as.Score = &sc
		}
		out[i] = as
	}
	return out
}

// ReceiptSentence is the kind of an extractive receipt's checks: a
// sentence of the answer, quoted whole from the span its ref names. The
// receipt's draft is then the question asked.
const ReceiptSentence = "sentence"

// issueReceipt stores the answer's sentences, as read, in a receipt.
func (a *Asker) issueReceipt(ctx context.Context, question string, status Status, answer []AnswerSentence) (string, error) {
	if a.opt.Receipts == nil || len(answer) == 0 {
		return "", nil
	}
	type read struct {
		ID     string `json:"id"`
		Ref    string `json:"ref"`
		Layer  string `json:"layer"`
		File   string `json:"file"`
		Text   string `json:"text"`
		SHA256 string `json:"sha256"`
	}
	// Each sentence is quoted whole from the span its ref names: one check
	// per sentence, spanning the text read (issue 27, item 8).
	type check struct {
		Kind     string `json:"kind"`
		Text     string `json:"text"`
		Sentence int    `json:"sentence"`
		Passage  string `json:"passage"`
		Start    int    `json:"start"`
		End      int    `json:"end"`
	}
	rs := make([]read, len(answer))
	cs := make([]check, len(answer))
	for i, s := range answer {
		sum := sha256.Sum256([]byte(s.Text))
		rs[i] = read{ID: s.Passage, Ref: s.Ref, Layer: s.Citation.Layer, File: s.Citation.File, Text: s.Text,
			SHA256: hex.EncodeToString(sum[:])}
		cs[i] = check{Kind: ReceiptSentence, Text: s.Text, Sentence: i + 1, Passage: s.Passage, End: len(s.Text)}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(cs)
	if err != nil {
		return "", err
	}
	if !a.opt.RawQueries {
		question = scrub.Text(question)
	}
	id, err := a.opt.Receipts.IssueReceipt(ctx, store.ReceiptRecord{Caller: caller.From(ctx), Tool: "strata_ask",
		Status: string(status), Draft: question, Passages: b, Checked: len(answer), Checks: cb})
	if err != nil {
		return "", store.CallerError(ctx, err, "store the receipt")
	}
	return id, nil
}

// extractiveDefaults fills in the sentence scorer from the reranker and the
// text reader from Docs when they are not set.
func (o *Options) extractiveDefaults(lg *slog.Logger) {
	if o.Sentences == nil && o.SentencesError == nil {
		switch r := o.Reranker.(type) {
		case Texts:
			o.Sentences = TextSentences(r)
		case Offline:
			o.Sentences = OfflineSentences{Model: r.Model, Embedder: o.Embedder, Logger: lg}
		}
	}
	if o.Text == nil {
		if t, ok := o.Docs.(DocumentText); ok {
			o.Text = t
		}
	}
}

// nameSources are what the names check reads in an extractive answer: the
// returned passages of the documents the chosen sentences come from, with
// their files (the spec's rule, names in the passages). A clause seldom
// repeats the parties' names ("the Licensee"); another passage of its
// document, or its file, is what ties it to the agreement the question
// names. A passage of a document no chosen sentence comes from does not
// count.
func (ex *extraction) nameSources(passages []Passage) []NameSource {
	docs := map[int64]bool{}
	for _, s := range ex.answer {
		docs[s.doc] = true
	}
	var out []NameSource
	for _, p := range passages {
		if r, err := schema.ParseRef(p.Ref); err == nil && docs[r.DocumentID] {
			out = append(out, NameSource{Text: p.Text, File: p.Citation.File})
		}
	}
	return out
}

// uses reports whether a chosen sentence comes from passage i.
func (ex *extraction) uses(i int) bool {
	for _, s := range ex.answer {
		if s.passage == i {
			return true
		}
	}
	return false
}

// finishExtractive hands back the chosen sentences and their receipt,
// after the names check: a not_found answer has no sentence and no
// receipt.
func (a *Asker) finishExtractive(ctx context.Context, req Request, resp *Response, ex *extraction, status Status) error {
	if status == NotFound || len(ex.answer) == 0 {
		return nil
	}
	resp.Answer = a.answerSentences(resp.Passages, ex.answer, req.ResponseFormat == FormatDetailed)
	id, err := a.issueReceipt(ctx, req.Question, status, resp.Answer)
	if err != nil {
		return err
	}
	resp.ReceiptID = id
	return nil
}

// MarshalJSON writes the response, leaving the passages out of a concise
// extractive answer: the short answer is either the passages or, in
// extractive mode, the documents' own sentences (each naming its passage,
// which a detailed response and the receipt hold).
func (r Response) MarshalJSON() ([]byte, error) {
	type plain Response
	if r.Mode == ModeExtractive && r.AnswerStatus == "" {
		return json.Marshal(struct {
			plain
			Passages []Passage `json:"passages,omitempty"`
		}{plain: plain(r)})
	}
	return json.Marshal(plain(r))
}
