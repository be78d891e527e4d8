package ask

import (
	"fmt"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// The exact lookup's limits are retrieve's: how many matching sections are
// read, how many candidates the lookup counts, how many references it looks
// up.
const (
	MaxClauseMatches    = retrieve.MaxExactResults
	MaxClauseCandidates = retrieve.MaxCandidates
	MaxReferences       = retrieve.MaxReferences
)

// NamedClause is one section a question names, as read for the answer.
type NamedClause struct {
	// Label is the reference as a reader knows it ("clause 7.2").
	Label string
	// File is the section's file, relative to its layer's root.
	File string
	Fit  ClauseFit
}

// ClauseReport is what happened to the clauses a question names.
type ClauseReport struct {
	// Clauses are the matching sections read, in the order of the
	// references and then by file path (at most MaxClauseMatches).
	Clauses []NamedClause
	// Unread counts the matching sections past MaxClauseMatches; AtLeast
	// says the count stopped at MaxClauseCandidates, so there may be more.
	Unread  int
	AtLeast bool
	// References is how many references the question named (those looked
	// up); Ignored are the ones past MaxReferences, as written.
	References int
	Ignored    []string
	// LayersNamed says the caller named the layers searched.
	LayersNamed bool
}

// Returned reports whether any named clause came back (whole or cut).
func (r ClauseReport) Returned() bool {
	for _, c := range r.Clauses {
		if !c.Fit.LeftOut {
			return true
		}
	}
	return false
}

// Apply returns the status after the named clauses and the notes that say
// what is missing. A cut or left-out clause turns found into partly_found;
// a not_found stays not_found and keeps the notes.
func (r ClauseReport) Apply(status Status) (Status, []string) {
	var notes []string
	var cut, left []NamedClause
	for _, c := range r.Clauses {
		switch {
		case c.Fit.LeftOut:
			left = append(left, c)
		case c.Fit.Cut:
			cut = append(cut, c)
		}
	}
	for _, c := range cut {
		notes = append(notes, fmt.Sprintf("%s of %s is longer than its share of the answer budget and comes back cut; what is left out may change its meaning: read the whole clause in the file.", c.Label, c.File))
	}
	if len(left) > 0 {
		names := make([]string, len(left))
		for i, c := range left {
			names[i] = c.Label + " (" + c.File + ")"
		}
		notes = append(notes, fmt.Sprintf("%d named %s did not fit the answer budget and %s left out: %s.",
			len(left), plural(len(left), "section", "sections"), plural(len(left), "was", "were"), strings.Join(names, ", ")))
	}
	if r.Unread > 0 {
		count := fmt.Sprint(r.Unread)
		if r.AtLeast {
			count = "at least " + count
		}
		n := fmt.Sprintf("%s more matching %s %s not read (at most %d are).", count,
			plural(r.Unread, "section", "sections"), plural(r.Unread, "was", "were"), MaxClauseMatches)
		// Both suggestions apply when both hold: the question named
		// several clauses and no layer.
		if r.References > 1 {
			n += " Ask about fewer clauses at a time."
		}
		if !r.LayersNamed {
			n += " Name a layer to narrow the search."
		}
		notes = append(notes, n)
	} else if r.AtLeast {
		notes = append(notes, fmt.Sprintf("The section lookup stopped at %d candidates, so more sections may match.", MaxClauseCandidates))
	}
	if len(r.Ignored) > 0 {
		notes = append(notes, fmt.Sprintf("Only the first %d references were looked up; not looked up: %s.", MaxReferences, strings.Join(r.Ignored, ", ")))
	}
	if status == Found && (len(cut) > 0 || len(left) > 0) {
		status = PartlyFound
	}
	return status, notes
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// StatusFor turns the best score on the active basis into a status: found
// at or above high, partly_found at or above medium, else not_found.
func StatusFor(score, high, medium float64) Status {
	switch {
	case score >= high:
		return Found
	case score >= medium:
		return PartlyFound
	}
	return NotFound
}

// NextStep says what to do after a partly_found or not_found answer; it is
// empty for found. layers are the layers searched; covered is false when no
// layer's routing matched the question and none was named.
func NextStep(status Status, layers []string, layersNamed, covered bool) string {
	switch {
	case status == Found:
		return ""
	case !layersNamed && !covered:
		return "No layer seems to cover this question. Ask again in the documents' own terms, or add a folder that covers it: ingestd add DIR --layer NAME."
	case layersNamed:
		return fmt.Sprintf("Ask again in the words the documents use, or search other layers than %s.", strings.Join(layers, ", "))
	}
	return "Ask again in the words the documents use, or name the layer that should hold the answer."
}
