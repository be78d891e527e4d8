package ask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/chunker"
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

// extract chooses the documents' own sentences for an extractive answer:
// whole sentences around each passage handed back, the sentences of a
// clause the question names first (in order, up to the budget, without the
// model), then the best scored ones at or above the medium mark, up to
// MaxAnswerSentences in all, within the budget. passages are the
// passages handed back; passageCand maps a passage's index to its
// candidate's index in cands (absent for a named clause); passageScores
// are the reranker's scores of cands (nil without one); report says which
// named clauses came back.
func (a *Asker) extract(ctx context.Context, question string, passages []Passage, kept map[int]string,
	cands []retrieve.Candidate, passageScores []float64, report ClauseReport) (*extraction, error) {
	passageCand := map[int]int{}
	for ci, id := range kept {
		for pi, p := range passages {
			if p.ID == id {
				passageCand[pi] = ci
			}
		}
	}
	if a.opt.SentencesError != nil {
		return nil, fmt.Errorf("extractive answers need the reranking model to score sentences, and it cannot load: %w", a.opt.SentencesError)
	}
	if a.opt.Sentences == nil {
		return nil, errors.New("extractive answers need the reranking model to score sentences, and none is configured (RERANKING_MODEL)")
	}
	if a.opt.Text == nil {
		return nil, errors.New("extractive answers need the stored document text, and this server has no reader for it")
	}
	refs := make([]schema.Ref, len(passages))
	for i, p := range passages {
		r, err := schema.ParseRef(p.Ref)
		if err != nil {
			return nil, fmt.Errorf("passage %s: %w", p.ID, err)
		}
		refs[i] = r
	}
	wins, err := a.opt.Text.Windows(ctx, refs)
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the documents' text")
	}
	// The named clauses that came back, in the order of the exact passages.
	var clauseLabels []NamedClause
	for _, c := range report.Clauses {
		if !c.Fit.LeftOut {
			clauseLabels = append(clauseLabels, c)
		}
	}
	ex := &extraction{}
	var sents []sentence
	seen := map[[3]int64]bool{}
	withText, exact := 0, 0
	for i, w := range wins {
		p := passages[i]
		clause, cand := -1, -1
		if p.Match == "exact" {
			clause = exact
			exact++
		} else if c, ok := passageCand[i]; ok {
			cand = c
		}
		if !w.Found || !w.TextKept {
			continue
		}
		withText++
		r := refs[i]
		lineStart := 0
		fmt.Sscanf(p.Citation.Lines, "%d", &lineStart)
		for _, s := range chunker.Touching(w.Text, r.Start-w.Start, r.End-w.Start) {
			if s.Heading {
				continue
			}
			start, end := w.Start+s.Start, w.Start+s.End
			key := [3]int64{r.DocumentID, int64(start), int64(end)}
			if seen[key] {
				continue
			}
			seen[key] = true
			text := w.Text[s.Start:s.End]
			st := sentence{doc: r.DocumentID, start: start, end: end, text: text, passage: i, cand: cand, clause: clause,
				origin: schema.OriginText, page: p.Citation.Page, tooLong: utf8.RuneCountInString(text) > MaxSentenceChars}
			for _, pg := range w.Pages {
				if pg.End > start && pg.Start < end {
					if st.page == nil || pg.Start <= start {
						n := pg.Number
						st.page = &n
					}
					if pg.TextOrigin == schema.OriginOCR {
						st.origin = schema.OriginOCR
					}
				}
			}
			st.lines = sentenceLines(w, r.Start, lineStart, start, end)
			st.clausePath = innermostSection(w.Sections, start)
			sents = append(sents, st)
		}
	}
	if withText == 0 {
		ex.status = NotFound
		ex.notes = append(ex.notes, ReingestNote)
		return ex, nil
	}

	// Score the sentences of retrieved passages (not those of a named
	// clause, which are quoted without the model).
	var inputs []SentenceInput
	var scored []int
	for i, s := range sents {
		if s.clause < 0 && !s.tooLong {
			inputs = append(inputs, SentenceInput{Text: s.text, Passage: s.cand})
			scored = append(scored, i)
		}
	}
	if len(inputs) > 0 {
		scorer := a.opt.Sentences
		if o, ok := scorer.(OfflineSentences); ok {
			if o.MinPassage == 0 {
				o.MinPassage = a.opt.RerankMedium
			}
			// A sentence never scores above its passage as the reranker
			// scored it, when the reranker is the same model.
			if r, ok := a.opt.Reranker.(Offline); ok && r.Model.Version == o.Model.Version && len(passageScores) == len(cands) {
				o.PassageScores = passageScores
			}
			scorer = o
		}
		scores, err := scorer.ScoreSentences(ctx, question, inputs, cands)
		if err == nil && len(scores) != len(inputs) {
			err = fmt.Errorf("it returned %d scores for %d sentences", len(scores), len(inputs))
		}
		if err != nil {
			return nil, fmt.Errorf("score the sentences with %s: %w", a.opt.Sentences.Name(), err)
		}
		for k, i := range scored {
			sents[i].score = scores[k]
		}
	}

	budget := a.opt.Budget
	used := 0
	cost := func(s sentence) int {
		c := a.sentenceCitation(passages[s.passage], s)
		return Tokens(s.text) + (overhead(passages[s.passage].ID, schema.Ref{DocumentID: s.doc, Start: s.start, End: s.end}.String(), c)+CharsPerToken-1)/CharsPerToken
	}
	// Named clauses first, sentence by sentence, in document order.
	clauseWhy := map[int]string{}
	clauseQuoted := false
	for i := range sents {
		s := sents[i]
		if s.clause < 0 {
			continue
		}
		if _, stop := clauseWhy[s.clause]; stop {
			continue
		}
		if s.tooLong {
			clauseWhy[s.clause] = fmt.Sprintf("a sentence of it is over %d characters and is never quoted", MaxSentenceChars)
			continue
		}
		c := cost(s)
		if len(ex.answer) > 0 && used+c > budget {
			clauseWhy[s.clause] = "the rest is over the answer budget"
			continue
		}
		s.score = 1
		ex.answer = append(ex.answer, s)
		used += c
		clauseQuoted = true
	}
	for ci := 0; ci < exact; ci++ {
		if _, ok := clauseWhy[ci]; !ok && passages[exactPassage(passages, ci)].Cut {
			clauseWhy[ci] = "it is longer than its share of the answer budget, so only its start was read"
		}
	}
	for ci := 0; ci < exact; ci++ {
		why, ok := clauseWhy[ci]
		if !ok {
			continue
		}
		label, file := "the named clause", passages[exactPassage(passages, ci)].Citation.File
		if ci < len(clauseLabels) {
			label, file = clauseLabels[ci].Label, clauseLabels[ci].File
		}
		ex.notes = append(ex.notes, fmt.Sprintf("Part of %s of %s is not quoted: %s. Read the whole clause in the file.", label, file, why))
	}

	// Then the best scored sentences at or above the medium mark, from
	// the documents that hold the most of the names the question gives
	// when some document holds any: a clause of another agreement is not
	// the answer to a question that names the parties.
	order := make([]int, 0, len(scored))
	order = append(order, scored...)
	if names := Names(question); len(names) > 0 && len(order) > 0 {
		held, hits, err := namesHeld(ctx, a.opt.Docs, names, passages)
		if err != nil {
			return nil, err
		}
		ex.namesHits = hits
		most := 0
		for _, i := range order {
			most = max(most, held[sents[i].doc])
		}
		if most > 0 {
			order = slices.DeleteFunc(order, func(i int) bool { return held[sents[i].doc] < most })
		}
	}
	sort.SliceStable(order, func(x, y int) bool { return sents[order[x]].score > sents[order[y]].score })
	best := 0.0
	for _, i := range order {
		best = max(best, sents[i].score)
	}
	chosen := 0
	for _, i := range order {
		s := sents[i]
		mark := a.opt.RerankMedium
		if chosen > 0 {
			mark = max(mark, SentenceMark)
		}
		if s.score < mark || len(ex.answer) >= MaxAnswerSentences {
			break
		}
		c := cost(s)
		if len(ex.answer) > 0 && used+c > budget {
			continue
		}
		ex.answer = append(ex.answer, s)
		used += c
		chosen++
	}

	switch {
	case clauseQuoted:
		ex.status = Found
	default:
		ex.status = StatusFor(best, a.opt.RerankHigh, a.opt.RerankMedium)
	}
	if ex.status == Found && len(clauseWhy) > 0 {
		ex.status = PartlyFound
	}
	if len(ex.answer) == 0 {
		ex.status = NotFound
		tooLong := false
		for _, s := range sents {
			tooLong = tooLong || s.tooLong
		}
		if tooLong && !clauseQuoted {
			ex.notes = append(ex.notes, fmt.Sprintf("Some matching text runs on for more than %d characters without a sentence end (a list, a table, a log) and is never quoted.", MaxSentenceChars))
		}
	}
	if withText < len(wins) {
		ex.notes = append(ex.notes, "Some passages were stored before document text was kept and cannot be quoted. "+ReingestNote)
	}
	return ex, nil
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
		as := AnswerSentence{Text: s.text, Ref: schema.Ref{DocumentID: s.doc, Start: s.start, End: s.end}.String(),
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
