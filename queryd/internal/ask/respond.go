package ask

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/question"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// answer is one answer being built from a search's pass. respond runs its
// stages in the order the spec gives the rules: named clauses first, then
// the best passages that fit, the names passage, the status (by the best
// score, the named clauses, the sentences of an extractive answer, the
// names the question gives and the sections it names that do not exist),
// the confidence and what the detailed answer adds, and the record.
type answer struct {
	a        *Asker
	req      Request
	q        *asked
	variants []string
	p        *pass
	layers   []store.Layer
	fallback *RoutingFallback
	routed   map[string]bool

	sections []retrieve.Section
	cands    []retrieve.Candidate // the pass's candidates less those that repeat a section
	scores   []float64            // their rerank scores; nil without
	docs     map[int64]store.DocInfo
	resp     *Response
	n        int // passage ids handed out
	report   ClauseReport

	// The budget: chars used by the named clauses, then in tokens what is
	// left and used by passages; costs are the candidates' costs.
	usedChars  int
	left, used int
	costs      []int
	keep       []int          // the candidates packed, in order
	kept       map[int]string // candidate index → passage id
	mode       string
	namesChunk int64
	namesNote  string
	distinct   []Name // the question's names that decide (checkNames)
	rareWords  []Name // its proper names' words as rare (checkNames)

	status     Status
	notes      []string
	ex         *extraction
	confidence string
}

// respond builds the answer to a pass over layers.
func (a *Asker) respond(ctx context.Context, req Request, q *asked, variants []string, p *pass, layers []store.Layer,
	fallback *RoutingFallback, routed map[string]bool) (*Response, error) {
	w := &answer{a: a, req: req, q: q, variants: variants, p: p, layers: layers, fallback: fallback, routed: routed,
		resp: &Response{Passages: []Passage{}}, kept: map[int]string{}}
	for _, stage := range []func(context.Context) error{
		w.readCandidates,
		w.packNamedClauses,
		w.packBestPassages,
		w.addGroundedNamesPassage,
		w.statusFromScores,
		w.extractSentences,
		w.checkNamedRow,
		w.checkNames,
		w.checkNameHolders,
		w.checkFields,
		w.checkParties,
		w.checkValue,
		w.checkVersions,
		w.finish,
		w.record,
	} {
		if err := stage(ctx); err != nil {
			return nil, err
		}
	}
	return w.resp, nil
}

func (w *answer) nextID() string { w.n++; return fmt.Sprintf("S%d", w.n) }

// readCandidates drops the candidates that repeat a named section's text
// and reads the dates and labels of every document cited.
func (w *answer) readCandidates(ctx context.Context) error {
	w.sections = w.p.first.Sections
	docIDs := map[int64]bool{}
	for _, s := range w.sections {
		docIDs[s.DocumentID] = true
	}
	for i, c := range w.p.candidates {
		if repeatsSection(c, w.sections) {
			continue
		}
		w.cands = append(w.cands, c)
		if w.p.rerank != nil {
			w.scores = append(w.scores, w.p.rerank[i])
		}
		docIDs[c.DocumentID] = true
	}
	w.docs = map[int64]store.DocInfo{}
	if len(docIDs) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(docIDs))
	for id := range docIDs {
		ids = append(ids, id)
	}
	var err error
	if w.docs, err = w.a.opt.Docs.Documents(ctx, ids); err != nil {
		return store.CallerError(ctx, err, "read the documents' dates and labels")
	}
	return nil
}

// packNamedClauses hands back the clauses the question names first, each
// within its share of the budget, and reports what became of them.
func (w *answer) packNamedClauses(context.Context) error {
	budgetChars := w.a.opt.Budget * CharsPerToken
	clauses := make([]Clause, len(w.sections))
	cites := make([]Citation, len(w.sections))
	for i, s := range w.sections {
		cites[i] = citation(s.Layer, s.File, s.Page, s.LineStart, s.LineEnd, s.ClausePath, w.docs[s.DocumentID])
		clauses[i] = Clause{Text: s.Text, Overhead: overhead(fmt.Sprintf("S%d", i+1), s.Ref(), cites[i])}
	}
	fits, usedChars := FitClauses(clauses, budgetChars)
	w.usedChars = usedChars
	lk := w.p.first.Exact
	w.report = ClauseReport{References: lk.LookedUp, Ignored: lk.Skipped, LayersNamed: len(w.req.Layers) > 0, AtLeast: lk.LimitHit}
	if lk.Found > len(w.sections) {
		w.report.Unread = lk.Found - len(w.sections)
	}
	for i, s := range w.sections {
		w.report.Clauses = append(w.report.Clauses, NamedClause{Label: s.Reference, File: s.File, Fit: fits[i]})
		if fits[i].LeftOut {
			continue
		}
		ref := schema.Ref{DocumentID: s.DocumentID, Start: s.Start, End: s.Start + len(fits[i].Text)}.WithText(fits[i].Text)
		if !fits[i].Cut {
			ref = schema.Ref{DocumentID: s.DocumentID, Start: s.Start, End: s.End}.WithText(s.Text)
		}
		w.resp.Passages = append(w.resp.Passages, Passage{ID: w.nextID(), Ref: ref.String(), Text: fits[i].Text,
			Citation: cites[i], Match: "exact", Cut: fits[i].Cut || s.Cut, OutsideRouting: w.outside(s.Layer)})
	}
	return nil
}

// outside says whether a passage of layer came in only through a routing
// fallback.
func (w *answer) outside(layer string) bool { return len(w.routed) > 0 && !w.routed[layer] }

// packBestPassages adds the best candidates that fit what is left of the
// budget, in order.
func (w *answer) packBestPassages(context.Context) error {
	w.costs = make([]int, len(w.cands))
	cites := make([]Citation, len(w.cands))
	for i, c := range w.cands {
		cites[i] = citation(c.Layer, c.File, c.Page, c.LineStart, c.LineEnd, c.ClausePath, w.docs[c.DocumentID])
		w.costs[i] = Tokens(c.Text) + (overhead(fmt.Sprintf("S%d", w.n+i+1), c.Ref(), cites[i])+CharsPerToken-1)/CharsPerToken
	}
	w.left = w.a.opt.Budget - (w.usedChars+CharsPerToken-1)/CharsPerToken
	w.keep, w.used = Pack(w.costs, w.left, MaxPassages-len(w.resp.Passages), len(w.resp.Passages) == 0)
	for _, i := range w.keep {
		c := w.cands[i]
		id := w.nextID()
		w.kept[i] = id
		w.resp.Passages = append(w.resp.Passages, Passage{ID: id, Ref: c.Ref(), Text: c.Text, Citation: cites[i],
			OutsideRouting: w.outside(c.Layer)})
	}
	layerByName := map[string]store.Layer{}
	for _, l := range w.layers {
		layerByName[l.Name] = l
	}
	w.mode = answerMode(w.req, w.resp.Passages, w.layers, layerByName)
	return nil
}

// room is the budget left, in characters, for the names passage.
func (w *answer) room() int { return (w.left - w.used) * CharsPerToken }

// giveWay returns what drops the weakest packed passage to make room for
// the names passage, never the first passage nor one that stay says must
// stay, and reports whether one gave way.
func (w *answer) giveWay(stay func(i int) bool) func() bool {
	return func() bool {
		last := len(w.resp.Passages) - 1
		if len(w.keep) == 0 || last < 1 || stay(last) {
			return false
		}
		ci := w.keep[len(w.keep)-1]
		w.keep = w.keep[:len(w.keep)-1]
		delete(w.kept, ci)
		w.resp.Passages = w.resp.Passages[:last]
		w.used -= w.costs[ci]
		w.n--
		return true
	}
}

// addGroundedNamesPassage: when the question names something (a
// contract's parties) that no returned passage holds but their documents
// do, the part of the document that holds it comes back too, so a grounded
// answer shows which document it is from.
func (w *answer) addGroundedNamesPassage(ctx context.Context) error {
	if w.mode != ModeGrounded || len(w.resp.Passages) == 0 {
		return nil
	}
	var order []int64
	returned := map[int64]bool{}
	for _, s := range w.sections {
		order = append(order, s.DocumentID)
	}
	for _, i := range w.keep {
		order = append(order, w.cands[i].DocumentID)
		returned[w.cands[i].ChunkID] = true
	}
	var err error
	w.namesChunk, w.namesNote, err = w.a.addNamesPassage(ctx, w.q.names, w.resp, passageSources(w.resp.Passages), nil, order,
		returned, w.docs, w.room, w.giveWay(func(int) bool { return false }), w.nextID)
	return err
}

// statusFromScores: an exact section the question names is a found
// answer; otherwise the best returned passage's score on the basis. The
// named clauses' report and the sections that are not there add notes.
func (w *answer) statusFromScores(context.Context) error {
	p := w.p
	switch {
	case w.report.Returned():
		w.status = Found
	case len(w.keep) == 0:
		w.status = NotFound
	case p.basis == basisNone:
		// Passages came back but nothing can say how well they match: not
		// found would hide them, found would claim too much.
		w.status = PartlyFound
		w.resp.Warning = "How well these passages answer the question could not be judged: there is no reranker and no query vector, so they are ranked by their words only. Read them before relying on them."
	default:
		best := 0.0
		for _, i := range w.keep {
			best = math.Max(best, scoreOf(p, w.cands, w.scores, i))
		}
		w.status = StatusFor(best, p.high, p.med)
	}
	w.status, w.notes = w.report.Apply(w.status)
	w.notes = append(w.notes, p.first.Exact.MissingNotes...)
	if w.req.Mode == ModeGrounded && w.mode == ModeExtractive && len(w.resp.Passages) > 0 {
		w.notes = append(w.notes, "The answer stays extractive: a returned passage comes from a layer whose answer mode is extractive, which mode grounded cannot loosen.")
	}
	return nil
}

// extractSentences: an extractive answer's status is judged on the
// sentences it quotes (extractive.go), and its names passage comes from
// the documents of those sentences, within what is left of the budget;
// only a passage no chosen sentence comes from gives way to it.
func (w *answer) extractSentences(ctx context.Context) error {
	if w.mode != ModeExtractive || len(w.resp.Passages) == 0 {
		return nil
	}
	ex, err := w.a.extract(ctx, w.q, w.resp.Passages, w.kept, w.cands, w.scores, w.report)
	if err != nil {
		return err
	}
	w.ex = ex
	w.status, _ = w.report.Apply(ex.status)
	w.notes = append(w.notes, ex.notes...)
	order, returned := ex.documents(w.resp.Passages, w.kept, w.cands)
	w.namesChunk, w.namesNote, err = w.a.addNamesPassage(ctx, w.q.names, w.resp, ex.nameSources(w.resp.Passages), ex.namesHits,
		order, returned, w.docs, w.room, w.giveWay(ex.uses), w.nextID)
	return err
}

// checkNamedRow: a question that names a row of a table by its kind and
// key ("What does warning 318 say?") is answered by a returned passage
// that holds the row, a table line whose first cell is the key in a
// passage or section that names the kind ("Warning codes"), however
// poorly it scores against the question: the answer is at least
// partly_found, with a note. The rules after it still apply (a value the
// row does not state, a name it lacks). An extractive answer is left as
// it is: it shows only the sentences it quotes, and a table row is none.
func (w *answer) checkNamedRow(context.Context) error {
	if w.status != NotFound || len(w.q.Rows) == 0 || len(w.keep) == 0 || w.mode != ModeGrounded {
		return nil
	}
	for _, k := range w.q.Rows {
		for _, i := range w.keep {
			c := w.cands[i]
			if k.RowIn(c.Text, c.ClausePath) {
				w.status = PartlyFound
				w.notes = append(w.notes, fmt.Sprintf("A returned passage (%s) holds the row of %s the question names: read it.", w.kept[i], k.Raw))
				return nil
			}
		}
	}
	return nil
}

// sources are what the names check reads: every returned passage and its
// file path, the names passage among them, in either mode (the spec's
// rule; issue 27, item 4: an extractive answer whose first passage is
// pep-0008.txt holds "PEP 8" whichever document its sentences come from).
func (w *answer) sources() []NameSource { return passageSources(w.resp.Passages) }

// checkNames applies the names rule with the question's distinctive names
// (a name most passages of the layers hold does not decide), then the
// rules of sections and documents that do not exist: a section the
// question names that is not there, or a document it names by number in a
// series the layers hold that none of them is and no passage mentions,
// makes the answer not_found, whatever the passages say.
func (w *answer) checkNames(ctx context.Context) error {
	names, rareWords, err := w.a.distinctiveNames(ctx, w.q.names, w.q.Parties, w.layers)
	if err != nil {
		return err
	}
	w.distinct, w.rareWords = names, rareWords
	nc := CheckNames(w.status, names, w.sources(), w.report.Returned(), w.mode == ModeGrounded)
	w.status = nc.Status
	if nc.Note != "" {
		w.notes = append(w.notes, nc.Note)
	}
	if w.namesNote != "" {
		w.notes = append(w.notes, w.namesNote)
	}
	if sectionMissing(w.p.first.Exact) && !w.report.Returned() {
		w.status = NotFound
	}
	if note := absentNote(w.p.first.Absent, w.sources()); note != "" {
		w.status = NotFound
		w.notes = append(w.notes, note)
	}
	return nil
}

// checkNameHolders: when some returned passages' documents hold a name
// the question gives and better-scoring passages come from documents that
// hold none, the better ones are about something else that shares the
// question's other words ("When was the Euro withdrawn?" scored highest on
// "This PEP is withdrawn"): the status is the one the best passage of a
// document holding a name scores. The names are the distinctive ones of
// the names rule and the words of the proper names it writes that are as
// rare (both read by checkNames). A document holds a name when one of its returned
// passages, or its file path, does (a contract's clause and its preamble
// naming the parties). A clause the question names that came back decides
// instead.
func (w *answer) checkNameHolders(context.Context) error {
	names := slices.Concat(w.distinct, w.rareWords)
	if w.status == NotFound || w.report.Returned() || w.p.basis == basisNone || len(names) == 0 {
		return nil
	}
	type doc struct{ layer, file string }
	holds := map[doc]bool{}
	for _, ps := range w.resp.Passages {
		if len(Missing(names, []NameSource{{Text: ps.Text, File: ps.Citation.File}})) < len(names) {
			holds[doc{ps.Citation.Layer, ps.Citation.File}] = true
		}
	}
	best, held := w.bestWhere(func(c *retrieve.Candidate) bool { return holds[doc{c.Layer, c.File}] })
	if held {
		w.lowerTo(best, fmt.Sprintf("The passages of documents that hold %s score %.2f; the better-scoring ones come from documents that hold none of it: the status is theirs.", quoteNames(names), best))
	}
	return nil
}

// bestWhere returns the best score of the kept passages for which ok
// holds, and whether any does.
func (w *answer) bestWhere(ok func(*retrieve.Candidate) bool) (float64, bool) {
	best, found := math.Inf(-1), false
	for _, i := range w.keep {
		if ok(&w.cands[i]) {
			found = true
			best = math.Max(best, scoreOf(w.p, w.cands, w.scores, i))
		}
	}
	return best, found
}

// lowerTo lowers the status to the one score gives, with note, when that
// is lower.
func (w *answer) lowerTo(score float64, note string) {
	if s := StatusFor(score, w.p.high, w.p.med); s.Rank() < w.status.Rank() {
		w.status = s
		w.notes = append(w.notes, note)
	}
}

// checkFields applies the table rule (fields.go): a question asking for a
// column of the rows it names, when the returned rows that hold what it
// names have no value in that column, is not answered by them.
func (w *answer) checkFields(ctx context.Context) error {
	if w.report.Returned() {
		return nil
	}
	columns := map[string][]string{}
	spelled := map[string]string{}
	var rows []tableRow
	for _, i := range w.keep {
		c := w.cands[i]
		cs := headerColumns(w.docs[c.DocumentID].TableHeader, spelled)
		if cs == nil {
			continue
		}
		columns[c.File] = cs
		rows = append(rows, parseRows(c.File, c.LineStart, c.Text)...)
	}
	if len(rows) == 0 {
		return nil
	}
	gaps, column := missingField(w.q.Folded, rows, columns)
	if len(gaps) > 0 {
		w.status = NotFound
		w.notes = append(w.notes, fieldNote(gaps, spelled))
		return nil
	}
	if column != "" {
		return nil
	}
	note, err := w.otherTablesGap(ctx, rows, columns, spelled)
	if err != nil || note == "" {
		return err
	}
	w.status = NotFound
	w.notes = append(w.notes, note)
	return nil
}

// otherTablesGap: a question may ask for a column that only another table
// of the layers has ("Which TLD does the Arab Monetary Fund use?": TLD is
// a column of the country codes, the fund a row of the currency codes).
// When the returned rows that hold what it names are all in tables without
// that column, and no row of the tables that have it holds it, the tables
// do not give it: the note says so; "" otherwise.
func (w *answer) otherTablesGap(ctx context.Context, rows []tableRow, returned map[string][]string, spelled map[string]string) (string, error) {
	tables, err := w.a.opt.Docs.TablesOf(ctx, store.LayerIDs(w.layers), maxOtherTables+1)
	if err != nil {
		return "", store.CallerError(ctx, err, "read the layers' tables")
	}
	if len(tables) > maxOtherTables {
		return "", nil // some tables unread: one of them may hold the row
	}
	others := map[string][]string{}
	for _, t := range tables {
		if _, ok := returned[t.File]; !ok {
			others[t.File] = headerColumns(t.Header, spelled)
		}
	}
	gap := otherColumnGap(w.q.Folded, rows, returned, others)
	if gap.column == "" {
		return "", nil
	}
	var ids []int64
	for _, t := range tables {
		if slices.Contains(gap.tables, t.File) {
			ids = append(ids, t.ID)
		}
	}
	hits, err := w.a.opt.Docs.ChunksHoldingAll(ctx, ids, gap.words, maxOtherTableChunks+1)
	if err != nil {
		return "", store.CallerError(ctx, err, "read the rows of the tables that have the column asked for")
	}
	if len(hits) > maxOtherTableChunks {
		return "", nil // too many candidate rows to read: decide nothing
	}
	for _, h := range hits {
		for _, r := range parseRows(h.File, h.LineStart, h.Text) {
			if r.holds(gap.words) {
				return "", nil // another table's row may answer it
			}
		}
	}
	return gap.note(spelled), nil
}

// checkParties: the names a question gives of two or more parties ("the
// distributor agreement between Cisco and Comware") must come together in
// some document of the searched layers. When no document holds them all,
// the documents do not cover what it asks about, however well a passage on
// the same topic scores: the answer is not_found, with a note. One name
// alone does not decide (the names check and the reranker weigh it), nor
// does a title the question quotes; a section the question names that was
// found decides instead.
func (w *answer) checkParties(ctx context.Context) error {
	if w.report.Returned() || len(w.q.PartyGroups) < 2 || len(w.layers) == 0 {
		return nil
	}
	var words []string
	for _, g := range w.q.PartyGroups {
		words = append(words, g...)
	}
	ok, err := w.a.opt.Docs.NamesTogether(ctx, store.LayerIDs(w.layers), words)
	if err != nil {
		return store.CallerError(ctx, err, "check the question's names")
	}
	if !ok {
		w.status = NotFound
		w.notes = append(w.notes, partiesNote(w.q.PartyGroups, w.layers))
	}
	return nil
}

// checkValue: a question that asks for a kind of value whose form can be
// told in text (an amount of money, a percentage, a frequency, a data
// rate, how much faster) is answered only by the passages that state one:
// the status is the one the best of them scores, and not_found when none
// states one, however well the others match its topic. A clause the
// question names that came back decides instead.
func (w *answer) checkValue(context.Context) error {
	v := w.q.Wants
	if v.Value == question.ValueNone || w.status == NotFound || w.report.Returned() {
		return nil
	}
	best, stated := w.bestWhere(func(c *retrieve.Candidate) bool { return v.StatedIn(c.Text) })
	if !stated {
		w.status = NotFound
		w.notes = append(w.notes, fmt.Sprintf("The question asks for %s, and no returned passage states one: the passages are related text, not the answer.", v))
		return nil
	}
	if w.p.basis == basisNone {
		return nil
	}
	w.lowerTo(best, fmt.Sprintf("The question asks for %s; the passages that state one score %.2f, lower than the best passage: the status is theirs.", v, best))
	return nil
}

// checkVersions: a question about a term of one version ("server push
// over HTTP/3", "the WASI preview 2 component model") answered by passages
// that give the term only with other numbers ("HTTP/2", "preview 1") is
// answered about another version: the answer is not_found, with a note.
// The passages' file paths count as their text ("go1.26.md"). A clause
// the question names that came back decides instead.
func (w *answer) checkVersions(context.Context) error {
	if len(w.q.Versioned) == 0 || w.status == NotFound || w.report.Returned() {
		return nil
	}
	var b strings.Builder
	for _, s := range w.sources() {
		b.WriteString(s.File)
		b.WriteByte('\n')
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	text := b.String()
	for _, v := range w.q.Versioned {
		if others := v.OtherVersions(text); others != nil {
			w.status = NotFound
			w.notes = append(w.notes, fmt.Sprintf("The question asks about %s; the returned passages give %q only as %s: they are about another version.",
				v.Raw, v.Word, strings.Join(others, ", ")))
			return nil
		}
	}
	return nil
}

// partiesNote says that no document holds the names together.
func partiesNote(groups [][]string, layers []store.Layer) string {
	quoted := make([]string, len(groups))
	for i, g := range groups {
		quoted[i] = fmt.Sprintf("%q", strings.Join(g, " "))
	}
	return fmt.Sprintf("No document of the searched layers (%s) holds the names %s and %s together: the documents do not cover what the question names.",
		strings.Join(store.LayerNames(layers), ", "), strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1])
}

// finish quotes the extractive answer's sentences, and sets the mode,
// notes, next step, confidence and, for the detailed format, the rest.
func (w *answer) finish(ctx context.Context) error {
	if w.ex != nil {
		if err := w.a.finishExtractive(ctx, w.req, w.resp, w.ex, w.status); err != nil {
			return err
		}
	}
	resp, p := w.resp, w.p
	resp.Mode = w.mode
	resp.Notes = w.notes
	resp.NextStep = NextStep(w.status, store.LayerNames(w.layers), len(w.req.Layers) > 0, len(w.req.Layers) > 0 || w.fallback == nil)
	w.confidence = "low"
	switch {
	case w.report.Returned():
		w.confidence = "high"
	case p.best >= p.high && p.atMedium >= 3:
		w.confidence = "high"
	case p.best >= p.med:
		w.confidence = "medium"
	}
	if w.status == NotFound && len(resp.Passages) == 0 {
		resp.Warning = "Nothing in the searched layers matched the question."
	}
	if w.req.ResponseFormat != FormatDetailed {
		resp.Status = string(w.status)
		return nil
	}
	w.detail()
	return nil
}

// degraded says what the answer was judged without.
func (w *answer) degraded() []string {
	a, p := w.a, w.p
	var out []string
	if a.opt.Reranker == nil {
		why := a.opt.NoReranker
		if why == "" {
			why = "reranking is off (RERANKING_ENABLED=false)"
		}
		out = append(out, why+": passages keep the fusion order and confidence is judged on similarity")
	} else if p.rerankErr != nil {
		out = append(out, fmt.Sprintf("the reranker %s failed (%v): passages keep the fusion order and confidence is judged on similarity", a.opt.Reranker.Name(), p.rerankErr))
	}
	if e := p.first.EmbedError; e != nil {
		out = append(out, e.Error()+": passages come from the lexical channel only")
	}
	if len(p.first.MissingVectors) > 0 {
		out = append(out, "layers without complete vectors, searched by their words only: "+strings.Join(p.first.MissingVectors, ", "))
	}
	return out
}

// detail fills what the detailed format adds: status and confidence with
// their basis, the searches, the layers, each candidate and each source.
func (w *answer) detail() {
	resp, p := w.resp, w.p
	resp.Status, resp.AnswerStatus = "ok", string(w.status)
	resp.Confidence, resp.Basis = w.confidence, p.basis
	if p.basis != basisNone {
		resp.Marks = &Marks{High: round(p.high), Medium: round(p.med)}
	}
	if w.confidence == "low" && resp.Warning == "" {
		// Low confidence carries a warning (the spec's Confidence table),
		// with passages or without.
		resp.Warning = fmt.Sprintf("Confidence is low: no passage reaches the medium mark (%s %.2f). The knowledge base probably does not cover this: try other terms or another layer.", p.basis, p.med)
	}
	resp.QueryVariants = w.variants
	resp.SearchedLayers = store.LayerNames(w.layers)
	resp.RoutingFallback = w.fallback
	resp.Degraded = w.degraded()
	top := 0.0
	for _, c := range w.cands {
		top = math.Max(top, c.Fused)
	}
	for i, c := range w.cands {
		rc := RetrievedChunk{ChunkID: c.ChunkID, Ref: c.Ref(), Layer: c.Layer, File: c.File,
			Similarity: round(c.Similarity), Passage: w.kept[i], Explain: explain(c)}
		if why := p.placed[c.ChunkID]; why != "" {
			rc.Explain += ", " + why
		}
		if top > 0 {
			rc.Score = round(c.Fused / top)
		}
		if w.scores != nil {
			s := round(w.scores[i])
			rc.RerankScore = &s
		}
		resp.RetrievedChunks = append(resp.RetrievedChunks, rc)
	}
	if !w.req.sources() {
		return
	}
	for _, ps := range resp.Passages {
		ss := SourceScore{Passage: ps.ID, File: ps.Citation.File, Layer: ps.Citation.Layer}
		for i, id := range w.kept {
			if id == ps.ID {
				ss.RelevanceScore = round(scoreOf(p, w.cands, w.scores, i))
			}
		}
		if ps.Match == "exact" {
			ss.RelevanceScore = 1
		}
		resp.Sources = append(resp.Sources, ss)
	}
}

// record stores the interaction for the learning loop, the question
// scrubbed unless raw queries are kept.
func (w *answer) record(ctx context.Context) error {
	a := w.a
	if a.opt.Recorder == nil {
		return nil
	}
	q, vs := w.req.Question, slices.Clone(w.variants)
	if !a.opt.RawQueries {
		q = scrub.Text(q)
		for i := range vs {
			vs[i] = scrub.Text(vs[i])
		}
	}
	in := Interaction{Caller: caller.From(ctx), Tool: "strata_ask", Question: q,
		Layers: store.LayerNames(w.layers), Variants: vs, Status: string(w.status), Confidence: w.confidence}
	in.PassageChunks = map[string]int64{}
	for _, i := range w.keep {
		in.ChunkIDs = append(in.ChunkIDs, w.cands[i].ChunkID)
		in.PassageChunks[w.kept[i]] = w.cands[i].ChunkID
	}
	for _, ps := range w.resp.Passages {
		switch ps.Match {
		case MatchNames:
			in.ChunkIDs = append(in.ChunkIDs, w.namesChunk)
			in.PassageChunks[ps.ID] = w.namesChunk
		case "exact":
			in.ExactPassages = append(in.ExactPassages, ps.ID)
		}
	}
	id, err := a.opt.Recorder.RecordInteraction(ctx, in)
	if err != nil {
		a.log.Warn("interaction_not_recorded", "err", err.Error())
	} else {
		w.resp.InteractionID = id
	}
	return nil
}
