package question

import (
	"regexp"
	"strings"
)

// RowKey is a row of a table a question names by its key and the kind of
// thing the table lists: "warning 318", "status RJCT", "error E42".
type RowKey struct {
	Raw  string // as written: "warning 318"
	Kind string // the word before the key, lower case: "warning"
	Key  string // the key as written: "318"
}

// rowKeyRE matches a word and a key after it: three or more digits, or a
// code of capitals and digits with at least two capitals ("RJCT", "AC04").
var rowKeyRE = regexp.MustCompile(`\b([A-Za-z]{3,})\s+(\d{3,}|[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*)\b`)

// numberNext matches a number right after a key.
var numberNext = regexp.MustCompile(`^\s+\d`)

// notRowKind are words before a number that name no kind of row: parts of
// a document (their own rule looks them up), document series, units and
// quantities, and question words.
var notRowKind = map[string]bool{
	"section": true, "sections": true, "article": true, "articles": true, "annex": true, "appendix": true,
	"chapter": true, "clause": true, "clauses": true, "paragraph": true, "part": true, "page": true,
	"pages": true, "schedule": true, "exhibit": true, "step": true, "table": true, "figure": true,
	"item": true, "line": true, "lines": true, "pep": true, "rfc": true, "iso": true, "version": true,
	"release": true, "year": true, "years": true, "since": true, "from": true, "until": true, "before": true,
	"after": true, "than": true, "about": true, "over": true, "under": true, "least": true, "most": true,
	"and": true, "the": true, "what": true, "which": true, "does": true, "with": true, "for": true,
	"are": true, "was": true, "were": true, "has": true, "have": true, "into": true, "per": true,
	"dollars": true, "euros": true, "days": true, "hours": true, "minutes": true, "seconds": true,
	"bytes": true, "octets": true, "percent": true, "times": true, "number": true,
	"did": true, "can": true, "will": true, "should": true, "would": true, "could": true,
	"must": true, "may": true, "not": true, "use": true, "uses": true, "using": true,
}

// RowKeys returns the rows text names by kind and key, in order.
func RowKeys(text string) []RowKey {
	var out []RowKey
	for _, m := range rowKeyRE.FindAllStringSubmatchIndex(text, -1) {
		kind := strings.ToLower(text[m[2]:m[3]])
		// A key followed by a number is a series ("PEP 572"), not a row.
		if notRowKind[kind] || numberNext.MatchString(text[m[1]:]) {
			continue
		}
		out = append(out, RowKey{Raw: text[m[0]:m[1]], Kind: kind, Key: text[m[4]:m[5]]})
	}
	return out
}

// tableRowRE matches a Markdown table row and captures its first cell.
var tableRowRE = regexp.MustCompile(`(?m)^\|\s*([^|\n]*?)\s*\|`)

// RowIn reports whether text holds the row: a table line whose first cell
// is the key, where text or section (the passage's heading path) names
// the kind ("Warning codes" for a warning).
func (k RowKey) RowIn(text, section string) bool {
	found := false
	for _, m := range tableRowRE.FindAllStringSubmatch(text, -1) {
		if m[1] == k.Key {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	words := " " + strings.ToLower(section+" "+text) + " "
	words = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return ' '
	}, words)
	return strings.Contains(words, " "+k.Kind+" ") || strings.Contains(words, " "+k.Kind+"s ")
}
