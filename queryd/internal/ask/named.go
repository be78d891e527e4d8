package ask

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/question"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/route"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// asked is the question of one Ask, parsed once (question.Parse), with the
// names it gives (Names): what routing, the searches, the names passage,
// the names check and the status rules read.
type asked struct {
	*question.Question
	names []Name
}

func parseAsked(text string) *asked {
	q := question.Parse(text)
	return &asked{Question: q, names: namesWith(text, q.References)}
}

// route chooses the layers of a question that names none: the layers of
// the documents it names ("PEP 572"), else routing's patterns, learned
// affinities, descriptions and words.
func (a *Asker) route(ctx context.Context, snap *retrieve.Snapshot, q *asked, all []store.Layer) (route.Decision, error) {
	docs, err := snap.NamedDocuments(ctx, q.Question, all)
	if err != nil {
		return route.Decision{}, store.CallerError(ctx, err, "find the documents the question names")
	}
	if len(docs) > 0 {
		files := map[int64][]string{}
		for _, d := range docs {
			files[d.LayerID] = append(files[d.LayerID], d.File)
		}
		if d := route.ByDocument(all, files); d.Routed {
			return d, nil
		}
	}
	return route.DecideWith(q.Text, all, a.affinities(ctx, q.Text), snap.LayerWords(ctx, q.Text, all, func(err error) {
		a.log.Warn("layer_words_unavailable", "err", err.Error())
	})), nil
}

// namedFirst puts the best scored passage of a document the question
// names first (the reranker may have put another document's passage that
// only mentions it above it): cands and scores are in score order.
func namedFirst(named []retrieve.NamedDoc, cands []retrieve.Candidate, scores []float64) {
	if len(named) == 0 {
		return
	}
	for i, c := range cands {
		if !slices.ContainsFunc(named, func(d retrieve.NamedDoc) bool { return d.DocumentID == c.DocumentID }) {
			continue
		}
		if i > 0 {
			c.Placement = retrieve.PlacedNamed
			copy(cands[1:i+1], cands[:i])
			cands[0] = c
			s := scores[i]
			copy(scores[1:i+1], scores[:i])
			scores[0] = s
		}
		return
	}
}

// sectionMissing reports whether the question names a section (an explicit
// reference: "Article 41", "section 8.7") that the documents it names, or
// else the searched layers, were found not to have.
func sectionMissing(lk retrieve.ExactLookup) bool {
	return lk.MissingDecided && len(lk.Missing) > 0
}

// commonNameShare is the share of the searched layers' passages at or
// above which a name is the collection's own (a standard's name in each
// row of its code list, the project's name in every page): such a name
// says nothing about which passage answers, so it does not decide the
// status (issue 26). The share is measured on the name's rarest word, an
// upper bound of the name's own.
const commonNameShare = 0.5

// distinctiveNames returns the names of the question, and the words of
// its proper names ("Euro", "Norway"), that are not common in the layers
// searched (commonNameShare), in order; one query reads how common they
// all are. Without layers no word is distinctive.
func (a *Asker) distinctiveNames(ctx context.Context, names []Name, words []string, layers []store.Layer) (rare, rareWords []Name, err error) {
	if len(layers) == 0 {
		words = nil
	}
	if len(names)+len(words) == 0 {
		return names, nil, nil
	}
	texts := make([]string, 0, len(names)+len(words))
	for _, n := range names {
		texts = append(texts, n.Text)
	}
	texts = append(texts, words...)
	shares, err := a.opt.Docs.NameShares(ctx, texts, store.LayerIDs(layers))
	if err != nil {
		return nil, nil, store.CallerError(ctx, err, "read how common the question's names are")
	}
	for i, n := range names {
		if shares[i] < commonNameShare {
			rare = append(rare, n)
		}
	}
	for i, wd := range words {
		if shares[len(names)+i] < commonNameShare {
			rareWords = append(rareWords, Name{Text: wd, key: fold(wd)})
		}
	}
	return rare, rareWords, nil
}

// absentNote says which documents the question names by number are not
// among the searched layers' documents of that series ("RFC 5246"): those
// no source mentions, and those that are the question's subject
// (AbsentDoc.Subject) even where a passage of another document mentions
// them; "" when there are none such. Such an answer is not_found: what the
// question asks about is not there.
func absentNote(absent []retrieve.AbsentDoc, sources []NameSource) string {
	var notes []string
	for _, d := range absent {
		key := fold(d.Raw)
		mentioned := false
		for _, s := range sources {
			mentioned = mentioned || foldText(s.Text).contains(key) || foldText(s.File).contains(key)
		}
		if mentioned && !d.Subject {
			continue
		}
		ks := make([]string, len(d.Held))
		for i, k := range d.Held {
			sr, num, _ := strings.Cut(k, " ")
			ks[i] = strings.ToUpper(sr) + " " + num
		}
		more := ""
		if len(ks) == 8 {
			more = ", …"
		}
		said := "which no returned passage mentions"
		if mentioned {
			said = "which the returned passages only mention: they are other documents"
		}
		notes = append(notes, fmt.Sprintf("The question names %s, which is not among the documents searched (they hold %s%s) and %s.",
			d.Raw, strings.Join(ks, ", "), more, said))
	}
	return strings.Join(notes, " ")
}
