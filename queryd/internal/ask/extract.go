package ask

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/stratakb/stratakb/chunker"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// picking is an extractive answer being chosen: the sentences around the
// passages handed back, their scores, and what is quoted so far.
type picking struct {
	a        *Asker
	q        *asked
	passages []Passage
	// passageCand maps a passage's index to its candidate's index in
	// cands (absent for a named clause); passageScores are the reranker's
	// scores of cands (nil without one); report says which named clauses
	// came back.
	passageCand   map[int]int
	cands         []retrieve.Candidate
	passageScores []float64
	report        ClauseReport

	wins     []store.Window
	refs     []schema.Ref
	sents    []sentence
	withText int // passages whose text is kept
	exact    int // named clauses among the passages
	scored   []int
	used     int // tokens quoted

	clauseWhy    map[int]string // named clause → why part of it is not quoted
	clauseQuoted bool
	best         float64 // the best score of a scored sentence
	ex           *extraction
}

// extract chooses the documents' own sentences for an extractive answer:
// whole sentences around each passage handed back, the sentences of a
// clause the question names first (in order, up to the budget, without the
// model), then the best scored ones at or above the medium mark, up to
// MaxAnswerSentences in all, within the budget; and judges its status on
// them.
func (a *Asker) extract(ctx context.Context, q *asked, passages []Passage, kept map[int]string,
	cands []retrieve.Candidate, passageScores []float64, report ClauseReport) (*extraction, error) {
	if err := a.canExtract(); err != nil {
		return nil, err
	}
	k := &picking{a: a, q: q, passages: passages, passageCand: map[int]int{}, cands: cands,
		passageScores: passageScores, report: report, clauseWhy: map[int]string{}, ex: &extraction{}}
	for ci, id := range kept {
		for pi, p := range passages {
			if p.ID == id {
				k.passageCand[pi] = ci
			}
		}
	}
	if err := k.readWindows(ctx); err != nil {
		return nil, err
	}
	k.splitSentences()
	if k.withText == 0 {
		k.ex.status = NotFound
		k.ex.notes = append(k.ex.notes, ReingestNote)
		return k.ex, nil
	}
	if err := k.scoreSentences(ctx); err != nil {
		return nil, err
	}
	k.quoteNamedClauses()
	if err := k.quoteBestSentences(ctx); err != nil {
		return nil, err
	}
	k.judge()
	return k.ex, nil
}

// canExtract says what an extractive answer lacks on this server.
func (a *Asker) canExtract() error {
	switch {
	case a.opt.SentencesError != nil:
		return fmt.Errorf("extractive answers need the reranking model to score sentences, and it cannot load: %w", a.opt.SentencesError)
	case a.opt.Sentences == nil:
		return errors.New("extractive answers need the reranking model to score sentences, and none is configured (RERANKING_MODEL)")
	case a.opt.Text == nil:
		return errors.New("extractive answers need the stored document text, and this server has no reader for it")
	}
	return nil
}

// readWindows reads the stored text around each passage.
func (k *picking) readWindows(ctx context.Context) error {
	k.refs = make([]schema.Ref, len(k.passages))
	for i, p := range k.passages {
		r, err := schema.ParseRef(p.Ref)
		if err != nil {
			return fmt.Errorf("passage %s: %w", p.ID, err)
		}
		k.refs[i] = r
	}
	var err error
	if k.wins, err = k.a.opt.Text.Windows(ctx, k.refs); err != nil {
		return store.CallerError(ctx, err, "read the documents' text")
	}
	return nil
}

// splitSentences finds the whole sentences touching each passage, each
// once, with its page, lines, clause path and origin.
func (k *picking) splitSentences() {
	seen := map[[3]int64]bool{}
	for i, w := range k.wins {
		p := k.passages[i]
		clause, cand := -1, -1
		if p.Match == "exact" {
			clause = k.exact
			k.exact++
		} else if c, ok := k.passageCand[i]; ok {
			cand = c
		}
		if !w.Found || !w.TextKept {
			continue
		}
		k.withText++
		r := k.refs[i]
		lineStart := 0
		fmt.Sscanf(p.Citation.Lines, "%d", &lineStart)
		for _, s := range chunker.Touching(w.Text, r.Start-w.Start, r.End-w.Start) {
			start, end := w.Start+s.Start, w.Start+s.End
			key := [3]int64{r.DocumentID, int64(start), int64(end)}
			if s.Heading || seen[key] {
				continue
			}
			seen[key] = true
			text := w.Text[s.Start:s.End]
			st := sentence{doc: r.DocumentID, start: start, end: end, text: text, passage: i, cand: cand, clause: clause,
				origin: schema.OriginText, page: p.Citation.Page, tooLong: utf8.RuneCountInString(text) > MaxSentenceChars}
			placeOnPages(&st, w.Pages)
			st.lines = sentenceLines(w, r.Start, lineStart, start, end)
			st.clausePath = innermostSection(w.Sections, start)
			k.sents = append(k.sents, st)
		}
	}
}

// placeOnPages sets the page a sentence starts on and whether OCR read it.
func placeOnPages(st *sentence, pages []store.PageOrigin) {
	for _, pg := range pages {
		if pg.End > st.start && pg.Start < st.end {
			if st.page == nil || pg.Start <= st.start {
				n := pg.Number
				st.page = &n
			}
			if pg.TextOrigin == schema.OriginOCR {
				st.origin = schema.OriginOCR
			}
		}
	}
}

// scoreSentences scores the sentences of retrieved passages (not those of
// a named clause, which are quoted without the model).
func (k *picking) scoreSentences(ctx context.Context) error {
	var inputs []SentenceInput
	for i, s := range k.sents {
		if s.clause < 0 && !s.tooLong {
			inputs = append(inputs, SentenceInput{Text: s.text, Passage: s.cand})
			k.scored = append(k.scored, i)
		}
	}
	if len(inputs) == 0 {
		return nil
	}
	a := k.a
	scorer := a.opt.Sentences
	if o, ok := scorer.(OfflineSentences); ok {
		if o.MinPassage == 0 {
			o.MinPassage = a.opt.RerankMedium
		}
		// A sentence never scores above its passage as the reranker scored
		// it, when the reranker is the same model.
		if r, ok := a.opt.Reranker.(Offline); ok && r.Model.Version == o.Model.Version && len(k.passageScores) == len(k.cands) {
			o.PassageScores = k.passageScores
		}
		scorer = o
	}
	scores, err := scorer.ScoreSentences(ctx, k.q.Text, inputs, k.cands)
	if err == nil && len(scores) != len(inputs) {
		err = fmt.Errorf("it returned %d scores for %d sentences", len(scores), len(inputs))
	}
	if err != nil {
		return fmt.Errorf("score the sentences with %s: %w", a.opt.Sentences.Name(), err)
	}
	for j, i := range k.scored {
		k.sents[i].score = scores[j]
	}
	return nil
}

// cost is a sentence's cost in the budget, its citation included.
func (k *picking) cost(s sentence) int {
	c := k.a.sentenceCitation(k.passages[s.passage], s)
	ref := schema.Ref{DocumentID: s.doc, Start: s.start, End: s.end}.WithText(s.text).String()
	return Tokens(s.text) + (overhead(k.passages[s.passage].ID, ref, c)+CharsPerToken-1)/CharsPerToken
}

// quoteNamedClauses quotes the clauses the question names first, sentence
// by sentence in document order, and notes the part of each not quoted.
func (k *picking) quoteNamedClauses() {
	for i := range k.sents {
		s := k.sents[i]
		if s.clause < 0 {
			continue
		}
		if _, stop := k.clauseWhy[s.clause]; stop {
			continue
		}
		if s.tooLong {
			k.clauseWhy[s.clause] = fmt.Sprintf("a sentence of it is over %d characters and is never quoted", MaxSentenceChars)
			continue
		}
		c := k.cost(s)
		if len(k.ex.answer) > 0 && k.used+c > k.a.opt.Budget {
			k.clauseWhy[s.clause] = "the rest is over the answer budget"
			continue
		}
		s.score = 1
		k.ex.answer = append(k.ex.answer, s)
		k.used += c
		k.clauseQuoted = true
	}
	for ci := 0; ci < k.exact; ci++ {
		if _, ok := k.clauseWhy[ci]; !ok && k.passages[exactPassage(k.passages, ci)].Cut {
			k.clauseWhy[ci] = "it is longer than its share of the answer budget, so only its start was read"
		}
	}
	var labels []NamedClause // the named clauses that came back, in order
	for _, c := range k.report.Clauses {
		if !c.Fit.LeftOut {
			labels = append(labels, c)
		}
	}
	for ci := 0; ci < k.exact; ci++ {
		why, ok := k.clauseWhy[ci]
		if !ok {
			continue
		}
		label, file := "the named clause", k.passages[exactPassage(k.passages, ci)].Citation.File
		if ci < len(labels) {
			label, file = labels[ci].Label, labels[ci].File
		}
		k.ex.notes = append(k.ex.notes, fmt.Sprintf("Part of %s of %s is not quoted: %s. Read the whole clause in the file.", label, file, why))
	}
}

// quoteBestSentences then quotes the best scored sentences at or above
// the medium mark (the later ones at SentenceMark too), from the documents
// that hold the most of the names the question gives when some document
// holds any: a clause of another agreement is not the answer to a question
// that names the parties.
func (k *picking) quoteBestSentences(ctx context.Context) error {
	order := slices.Clone(k.scored)
	if names := k.q.names; len(names) > 0 && len(order) > 0 {
		held, hits, err := namesHeld(ctx, k.a.opt.Docs, names, k.passages)
		if err != nil {
			return err
		}
		k.ex.namesHits = hits
		most := 0
		for _, i := range order {
			most = max(most, held[k.sents[i].doc])
		}
		if most > 0 {
			order = slices.DeleteFunc(order, func(i int) bool { return held[k.sents[i].doc] < most })
		}
	}
	sort.SliceStable(order, func(x, y int) bool { return k.sents[order[x]].score > k.sents[order[y]].score })
	for _, i := range order {
		k.best = max(k.best, k.sents[i].score)
	}
	chosen := 0
	for _, i := range order {
		s := k.sents[i]
		mark := k.a.opt.RerankMedium
		if chosen > 0 {
			mark = max(mark, SentenceMark)
		}
		if s.score < mark || len(k.ex.answer) >= MaxAnswerSentences {
			break
		}
		c := k.cost(s)
		if len(k.ex.answer) > 0 && k.used+c > k.a.opt.Budget {
			continue
		}
		k.ex.answer = append(k.ex.answer, s)
		k.used += c
		chosen++
	}
	return nil
}

// judge sets the extractive status: found when a named clause is quoted,
// else the best sentence's score; partly_found when part of a named clause
// is not quoted; not_found when nothing is.
func (k *picking) judge() {
	ex := k.ex
	if k.clauseQuoted {
		ex.status = Found
	} else {
		ex.status = StatusFor(k.best, k.a.opt.RerankHigh, k.a.opt.RerankMedium)
	}
	if ex.status == Found && len(k.clauseWhy) > 0 {
		ex.status = PartlyFound
	}
	if len(ex.answer) == 0 {
		ex.status = NotFound
		tooLong := false
		for _, s := range k.sents {
			tooLong = tooLong || s.tooLong
		}
		if tooLong && !k.clauseQuoted {
			ex.notes = append(ex.notes, fmt.Sprintf("Some matching text runs on for more than %d characters without a sentence end (a list, a table, a log) and is never quoted.", MaxSentenceChars))
		}
	}
	if k.withText < len(k.wins) {
		ex.notes = append(ex.notes, "Some passages were stored before document text was kept and cannot be quoted. "+ReingestNote)
	}
}
