package rewrite

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stratakb/stratakb/internal/provider"
)

// SystemPrompt tells the model its task. It is the same for every provider.
const SystemPrompt = `You help a search engine find passages in a document collection.
You are given a question and a short description of each collection of documents that will be searched.
Write up to 3 alternative search queries for the question, each using the words and terms the documents
themselves are likely to use (their jargon, codes, formal names, and spelled-out abbreviations), so that
a keyword and meaning search finds the passages that answer the question.
Keep each query short: one line, no explanations, no numbering.
Do not answer the question. Do not invent facts, names or numbers that the question does not imply.
Reply with a JSON array of strings and nothing else, for example: ["first query", "second query"]`

// UserPrompt is the message that carries the question and the layers.
// Layer descriptions are clipped and at most maxLayersInPrompt layers are
// listed, so the prompt stays small whatever the configuration holds.
func UserPrompt(question string, layers []LayerInfo) string {
	var b strings.Builder
	b.WriteString("Collections searched:\n")
	if len(layers) == 0 {
		b.WriteString("- (no description)\n")
	}
	for i, l := range layers {
		if i == maxLayersInPrompt {
			fmt.Fprintf(&b, "- and %d more\n", len(layers)-i)
			break
		}
		desc := strings.Join(strings.Fields(l.Description), " ")
		if desc == "" {
			desc = "(no description)"
		}
		fmt.Fprintf(&b, "- %s: %s\n", oneLine(l.Name), provider.Clip(desc, maxDescriptionBytes))
	}
	// The question is quoted as JSON so that nothing in it reads as an
	// instruction boundary.
	q, _ := json.Marshal(provider.Clip(strings.TrimSpace(question), maxQuestionBytes))
	fmt.Fprintf(&b, "\nQuestion: %s\n\nReply with the JSON array of search queries.", q)
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxCandidates and maxScan bound ParseList's work on a large reply.
const (
	maxCandidates = 200
	maxScan       = 64 << 10
)

// ParseList returns the first JSON array of strings in reply: bare, inside a
// code fence or inside prose. A bracket that opens no valid JSON array is
// skipped; an array holding anything but strings is skipped whole, and the
// search goes on after it. Brackets and quotes inside JSON strings are
// read as the strings' text. ok is false when there is no such array.
func ParseList(reply string) (list []string, ok bool) {
	for i, tried := 0, 0; i < len(reply) && tried < maxCandidates; {
		j := strings.IndexByte(reply[i:], '[')
		if j < 0 {
			break
		}
		start := i + j
		tried++
		end, closed := matchBracket(reply, start)
		if !closed {
			i = start + 1
			continue
		}
		var items []any
		if err := json.Unmarshal([]byte(reply[start:end]), &items); err != nil {
			i = start + 1 // prose such as "[see above]"; a list may sit inside
			continue
		}
		strs := make([]string, 0, len(items))
		for _, it := range items {
			s, isStr := it.(string)
			if !isStr {
				strs = nil
				break
			}
			strs = append(strs, s)
		}
		if strs == nil && len(items) > 0 {
			i = end // a list, but not of strings: skip it whole
			continue
		}
		return strs, true
	}
	return nil, false
}

// matchBracket finds the end (one past the closing ']') of the bracket
// opened at s[start], reading JSON strings as text. It gives up after
// maxScan bytes.
func matchBracket(s string, start int) (end int, ok bool) {
	depth, inStr, esc := 0, false, false
	limit := min(len(s), start+maxScan)
	for k := start; k < limit; k++ {
		c := s[k]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				return k + 1, c == ']'
			}
		}
	}
	return 0, false
}
