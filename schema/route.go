package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// Routing patterns choose a layer for a query that names no layers. A
// pattern written between slashes (/pacs\.\d+/) is a regular expression
// (Go's RE2 syntax) matched ignoring case; any other pattern is a keyword or
// phrase matched as whole words ignoring case, however many spaces separate
// its words in the query. queryd matches with RoutePattern and ingestd
// refuses, when a layer is added, a pattern that RoutePattern rejects, so
// the two cannot disagree on the syntax.

// RoutePattern compiles a routing pattern into the expression that matches
// it. It fails for an empty pattern and for a slashed pattern that is not a
// valid regular expression, naming the pattern and the reason.
func RoutePattern(p string) (*regexp.Regexp, error) {
	t := strings.TrimSpace(p)
	if t == "" {
		return nil, fmt.Errorf("routing pattern %q is empty", p)
	}
	if len(t) >= 2 && strings.HasPrefix(t, "/") && strings.HasSuffix(t, "/") {
		if len(t) == 2 {
			return nil, fmt.Errorf("routing pattern %q: the expression between the slashes is empty", p)
		}
		re, err := regexp.Compile("(?i)" + t[1:len(t)-1])
		if err != nil {
			return nil, fmt.Errorf("routing pattern %q is not a valid regular expression: %w", p, err)
		}
		return re, nil
	}
	words := strings.Fields(t)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.Compile(`(?i)(?:^|[^\pL\pN])` + strings.Join(words, `\s+`) + `(?:$|[^\pL\pN])`)
}
