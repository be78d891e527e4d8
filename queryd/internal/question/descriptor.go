package question

import (
	"regexp"
	"strings"

	"github.com/stratakb/stratakb/structure"
)

// descriptorRe finds what a section reference is "of" when the question
// describes its document in its own words: "section 7 of the TS/SCI
// clearance upgrade process" → "TS/SCI clearance upgrade process". The
// phrase ends at the clause's end.
var descriptorRe = regexp.MustCompile(`(?i)\b(?:section|clause|article|annex|appendix|part|step|paragraph|schedule|exhibit|chapter)s?\s+[0-9A-Za-z][0-9A-Za-z.()]*\s+of\s+(?:the\s+|this\s+|that\s+|our\s+)?([^?,;:!]+)`)

// auxRe: a question asked with an auxiliary ("What does section 4 of the
// password page require?") ends its descriptor with the verb.
var auxRe = regexp.MustCompile(`(?i)^\s*(?:what|which|how|where|when|who|why)\s+(?:does|do|did|should|must|can|will|would|shall|may)\b|^\s*(?:does|do|did|should|must|can|will|would|shall|may|is|are)\b`)

// descriptorSkip are words a description of a document may use that its
// text need not hold: function words and names of kinds of document.
var descriptorSkip = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "into": true, "about": true,
	"that": true, "this": true, "its": true, "our": true, "your": true, "their": true, "between": true,
	"page": true, "pages": true, "document": true, "doc": true, "docs": true, "agreement": true,
	"contract": true, "policy": true, "guide": true, "post": true, "handbook": true, "text": true,
	"say": true, "says": true, "state": true, "states": true, "list": true, "lists": true,
}

// descriptor returns the words of the phrase a section reference of text
// is "of", folded (structure.FoldWords), at least three characters long,
// without descriptorSkip's words and without the closing verb of a
// question asked with an auxiliary; nil when it names none or only a
// numbered document ("section 4 of RFC 5321" is a number, not a
// description).
func descriptor(text string) []string {
	m := descriptorRe.FindStringSubmatch(text)
	if m == nil || len(structure.NamedNumbers(m[1])) > 0 {
		return nil
	}
	words := strings.Fields(structure.FoldWords(m[1]))
	if auxRe.MatchString(text) && len(words) > 1 && strings.HasSuffix(strings.TrimSpace(text), "?") {
		words = words[:len(words)-1]
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		if len(w) < 3 || descriptorSkip[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}
