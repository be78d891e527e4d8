package ask

import "fmt"

// Status is an answer's status.
type Status string

// The answer statuses: the best passage (or, in extractive mode, sentence)
// scored high, medium, or low or nothing came back.
const (
	Found       Status = "found"
	PartlyFound Status = "partly_found"
	NotFound    Status = "not_found"
)

// Rank orders the statuses: not_found 0, partly_found 1, found 2.
func (s Status) Rank() int {
	switch s {
	case Found:
		return 2
	case PartlyFound:
		return 1
	}
	return 0
}

// NamesCheck is the outcome of checking the names a question asks about
// against what an answer returns.
type NamesCheck struct {
	Status  Status
	Missing []Name
	// Note explains the change, or is empty when every name is there.
	Note string
}

// CheckNames applies the names rule to status: when some names are in no
// source, found becomes partly_found; when none is anywhere, the answer is
// not_found, unless the question also named a clause that came back
// (clauseReturned). grounded says whether the answer is grounded: a
// grounded not_found that still hands back passages says they are related
// text only.
func CheckNames(status Status, names []Name, sources []NameSource, clauseReturned, grounded bool) NamesCheck {
	missing := Missing(names, sources)
	c := NamesCheck{Status: status, Missing: missing}
	if len(missing) == 0 {
		return c
	}
	switch {
	case len(missing) == len(names) && !clauseReturned:
		c.Status = NotFound
	case status == Found:
		c.Status = PartlyFound
	}
	what := "is"
	if len(missing) > 1 {
		what = "are"
	}
	c.Note = fmt.Sprintf("The question asks about %s, which %s in none of the returned passages.", quoteNames(missing), what)
	if c.Status == NotFound && grounded && len(sources) > 0 {
		c.Note += " The passages are related text, not the answer."
	}
	return c
}
