package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/search"
)

// Tool is one tool, served over MCP and, when HTTPPath is set, as an HTTP
// JSON endpoint (POST HTTPPath with the same arguments as the body).
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // the JSON schema of the arguments
	AdminOnly   bool            // readers are refused
	Bounded     bool            // takes one of the QUERYD_MAX_CONCURRENT_SEARCHES slots
	HTTPPath    string
	// Call decodes the arguments (a JSON object, or null when the caller
	// sent none) and runs the tool. A caller's mistake is a qerr error that
	// names the argument; anything else is an internal fault.
	Call func(ctx context.Context, args json.RawMessage) (Outcome, error)
}

// Outcome is what a tool call produced.
type Outcome struct {
	Value   any    // the response, marshalled with the specification's field names
	Results int    // how many results or passages, for the request log
	Query   string // the query or question, logged scrubbed
}

// toolBuilders lists every tool queryd can serve, in the order clients see
// them. A builder returns false when the dependency its tool needs is not
// configured, and the tool (with the instructions that concern it) is left
// out. A new tool is one line here.
var toolBuilders = []func(*Server) (Tool, bool){
	searchTool,
}

// Searcher runs strata_search; *search.Searcher is one.
type Searcher interface {
	Search(ctx context.Context, req search.Request) (*search.Response, error)
}

var _ Searcher = (*search.Searcher)(nil)

func searchTool(s *Server) (Tool, bool) {
	if s.deps.Searcher == nil {
		return Tool{}, false
	}
	return Tool{
		Name: ToolSearch,
		Description: "Search the indexed documents for an exact term, code or identifier (a reason code, a message name, an error code), " +
			"or for chunks with given metadata. Runs one search and returns the best passages in the documents' own words, " +
			"each with its file, line range, page, clause path and layer. It neither rewrites the query nor reranks.",
		Schema:   searchSchema,
		Bounded:  true,
		HTTPPath: "/v1/search",
		Call: func(ctx context.Context, raw json.RawMessage) (Outcome, error) {
			req, err := decodeSearch(raw)
			if err != nil {
				return Outcome{Query: req.Query}, err
			}
			resp, err := s.deps.Searcher.Search(ctx, req)
			if err != nil {
				return Outcome{Query: req.Query}, err
			}
			return Outcome{Value: resp, Results: len(resp.Results), Query: req.Query}, nil
		},
	}, true
}

var searchSchema = json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "query": {
      "type": "string", "minLength": 1, "maxLength": %d,
      "description": "What to look for: an exact term, code or identifier (pacs.008, AC04, an error message), or a short phrase in the documents' own words."
    },
    "layers": {
      "type": "array", "items": {"type": "string", "minLength": 1},
      "description": "Names of the layers to search. Leave it out to let routing choose: when the routed layers give too little, every layer is searched and the response says so in routing_fallback. Layers named here are never widened."
    },
    "top_k": {
      "type": "integer", "minimum": 1, "maximum": %d, "default": %d,
      "description": "How many results to return, 1 to %d. Keep it small: every result fills the client's context."
    },
    "metadata_filter": {
      "type": "object", "additionalProperties": {"type": "string"},
      "description": "Exact matches on chunk metadata, values as strings, for example {\"page\": \"3\"}. Only chunks matching every entry are returned."
    },
    "explain": {
      "type": "boolean", "default": false,
      "description": "Also show, for each result, which search channels found it, at which ranks, and how fusion moved it."
    }
  },
  "required": ["query"],
  "additionalProperties": false
}`, search.MaxQuery, search.MaxTopK, search.DefaultTopK, search.MaxTopK))

// decodeSearch turns strata_search's arguments into a request. It checks
// each argument's JSON type itself, so a mistake names the argument and what
// was expected, and then applies the request's own checks.
func decodeSearch(raw json.RawMessage) (search.Request, error) {
	var req search.Request
	args, err := objectArgs(raw, "query", "layers", "top_k", "metadata_filter", "explain")
	if err != nil {
		return req, err
	}
	if err := stringArg(args, "query", &req.Query); err != nil {
		return req, err
	}
	if _, ok := args["query"]; !ok {
		return req, qerr.Invalidf("query", "is required")
	}
	if v, ok := args["layers"]; ok {
		if err := json.Unmarshal(v, &req.Layers); err != nil {
			return req, qerr.Invalidf("layers", "must be an array of layer names (strings)")
		}
	}
	if v, ok := args["top_k"]; ok {
		v = bytes.TrimSpace(v)
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if v[0] == '"' || d.Decode(&n) != nil {
			return req, qerr.Invalidf("top_k", "must be a whole number from 1 to %d", search.MaxTopK)
		}
		k, err := n.Int64()
		if err != nil {
			return req, qerr.Invalidf("top_k", "must be a whole number from 1 to %d, got %s", search.MaxTopK, n)
		}
		if k < 1 || k > search.MaxTopK {
			return req, qerr.Invalidf("top_k", "must be from 1 to %d, got %d", search.MaxTopK, k)
		}
		req.TopK = int(k)
	}
	if v, ok := args["metadata_filter"]; ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return req, qerr.Invalidf("metadata_filter", "must be an object of metadata keys to string values, such as {\"page\": \"3\"}")
		}
		req.MetadataFilter = map[string]string{}
		for _, k := range sortedKeys(m) {
			var s string
			if err := json.Unmarshal(m[k], &s); err != nil {
				return req, qerr.Invalidf("metadata_filter", "the value of %q must be a string, such as \"3\"", k)
			}
			req.MetadataFilter[k] = s
		}
	}
	if v, ok := args["explain"]; ok {
		if err := json.Unmarshal(v, &req.Explain); err != nil {
			return req, qerr.Invalidf("explain", "must be true or false")
		}
	}
	if err := req.Validate(); err != nil {
		return req, err
	}
	return req, nil
}

// objectArgs splits a JSON object of arguments, refusing unknown names.
// Arguments given as null count as left out.
func objectArgs(raw json.RawMessage, known ...string) (map[string]json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, qerr.Invalidf("arguments", "must be a JSON object")
	}
	for _, k := range sortedKeys(args) {
		if string(bytes.TrimSpace(args[k])) == "null" {
			delete(args, k)
			continue
		}
		found := false
		for _, n := range known {
			found = found || k == n
		}
		if !found {
			return nil, qerr.Invalidf(k, "is not an argument of this tool (it takes %s)", strings.Join(known, ", "))
		}
	}
	return args, nil
}

func stringArg(args map[string]json.RawMessage, name string, dst *string) error {
	v, ok := args[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return qerr.Invalidf(name, "must be a string")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
