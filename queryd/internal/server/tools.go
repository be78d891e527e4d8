package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
	"github.com/stratakb/stratakb/queryd/internal/verify"
)

// Tool is one tool, served over MCP and, when HTTPPath is set, as an HTTP
// JSON endpoint (POST HTTPPath with the same arguments as the body).
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // the JSON schema of the arguments
	// OutputSchema is the JSON schema of the result's structuredContent
	// (MCP outputSchema); nil declares none.
	OutputSchema json.RawMessage
	AdminOnly    bool // readers are refused
	Bounded      bool // takes one of the QUERYD_MAX_CONCURRENT_SEARCHES slots
	HTTPPath     string
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

// toolDefs lists every tool queryd can serve, in the order clients see
// them, and is what the OpenAPI document describes. A tool whose
// dependency is not configured is left out of a server (with the
// instructions that concern it). A new tool is a toolSpec and one line
// here; doc.go says how.
var toolDefs = []toolDef{
	askSpec.def(),
	searchSpec.def(),
	verifySpec.def(),
	receiptSpec.def(),
	feedbackSpec.def(),
	statsSpec.def(),
	resetSpec.def(),
}

// toolSpec defines one tool whose arguments are the struct A (see package
// toolargs): its schema is derived from A, and its Call decodes the
// arguments into A the same way on every transport before Run's function
// sees them.
type toolSpec[A toolargs.Described] struct {
	// Tool gives the name, description, role and limits; Schema and Call
	// are filled in from A and Run.
	Tool
	// Summary is the OpenAPI operation's one line.
	Summary string
	// Component names the tool's OpenAPI schemas: "Search" gives
	// SearchRequest (generated) and SearchResponse (in openapi_base.json).
	Component string
	// Response is the Go type of Outcome.Value; a test holds the
	// documented response schema to its JSON fields.
	Response reflect.Type
	// Logged is what the request log shows (scrubbed) as the query, for
	// refused calls too; nil logs none.
	Logged func(A) string
	// Run returns the tool's function on the server's dependencies, or
	// false when one it needs is not configured.
	Run func(*Server) (func(context.Context, A) (Outcome, error), bool)
}

// toolDef is a toolSpec with its argument type erased, ready to be bound
// to a server.
type toolDef struct {
	tool      Tool // Call is nil
	summary   string
	component string
	response  reflect.Type
	err       error // the schema could not be derived: New fails with it
	bind      func(*Server) (func(context.Context, json.RawMessage) (Outcome, error), bool)
}

func (sp toolSpec[A]) def() toolDef {
	d := toolDef{tool: sp.Tool, summary: sp.Summary, component: sp.Component, response: sp.Response}
	schema, err := toolargs.Schema[A]()
	if err == nil {
		d.tool.Schema, err = json.Marshal(schema)
	}
	if err == nil && sp.Component != "" {
		d.tool.OutputSchema, err = outputSchema(sp.Component)
	}
	if err != nil {
		d.err = fmt.Errorf("tool %s: %w", sp.Name, err)
		return d
	}
	d.bind = func(s *Server) (func(context.Context, json.RawMessage) (Outcome, error), bool) {
		run, ok := sp.Run(s)
		if !ok {
			return nil, false
		}
		return func(ctx context.Context, raw json.RawMessage) (Outcome, error) {
			args, err := toolargs.Decode[A](raw)
			var logged string
			if sp.Logged != nil {
				logged = sp.Logged(args)
			}
			if err != nil {
				return Outcome{Query: logged}, err
			}
			out, err := run(ctx, args)
			if out.Query == "" {
				out.Query = logged
			}
			return out, err
		}, true
	}
	return d
}

// Searcher runs strata_search; *search.Searcher is one.
type Searcher interface {
	Search(ctx context.Context, req search.Request) (*search.Response, error)
}

var _ Searcher = (*search.Searcher)(nil)

var searchSpec = toolSpec[search.Request]{
	Tool: Tool{
		Name: ToolSearch,
		Description: "Search the indexed documents for an exact term, code or identifier (a reason code, a message name, an error code), " +
			"or for chunks with given metadata. Runs one search and returns the best passages in the documents' own words, " +
			"each with its file, line range, page, clause path and layer. It neither rewrites the query nor reranks.",
		Bounded:  true,
		HTTPPath: "/v1/search",
	},
	Summary:   "Search the indexed documents (strata_search)",
	Component: "Search",
	Response:  reflect.TypeFor[search.Response](),
	Logged:    func(r search.Request) string { return r.Query },
	Run: func(s *Server) (func(context.Context, search.Request) (Outcome, error), bool) {
		if s.deps.Searcher == nil {
			return nil, false
		}
		return func(ctx context.Context, req search.Request) (Outcome, error) {
			resp, err := s.deps.Searcher.Search(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp, Results: len(resp.Results)}, nil
		}, true
	},
}

// Asker runs strata_ask; *ask.Asker is one.
type Asker interface {
	Ask(ctx context.Context, req ask.Request) (*ask.Response, error)
}

var _ Asker = (*ask.Asker)(nil)

var askSpec = toolSpec[ask.Request]{
	Tool: Tool{
		Name: ToolAsk,
		Description: "Answer a question asked in plain language from the indexed documents. Routes it to the layers that cover it, " +
			"searches it (and its rewordings, when a rewrite provider is set up), reranks, puts the clauses and sections it names first, " +
			"and returns the best passages within the answer budget, each with its citation (file, page, lines, clause path, date), " +
			"a status (found, partly_found, not_found), notes on anything missing, and a next step when it found too little.",
		Bounded:  true,
		HTTPPath: "/v1/ask",
	},
	Summary:   "Answer a question from the documents (strata_ask)",
	Component: "Ask",
	Response:  reflect.TypeFor[ask.Response](),
	Logged:    func(r ask.Request) string { return r.Question },
	Run: func(s *Server) (func(context.Context, ask.Request) (Outcome, error), bool) {
		if s.deps.Asker == nil {
			return nil, false
		}
		return func(ctx context.Context, req ask.Request) (Outcome, error) {
			resp, err := s.deps.Asker.Ask(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp, Results: len(resp.Passages)}, nil
		}, true
	},
}

// Verifier runs strata_verify and strata_get_receipt; *verify.Verifier is
// one.
type Verifier interface {
	Verify(ctx context.Context, req verify.Request) (*verify.Response, error)
	GetReceipt(ctx context.Context, req verify.ReceiptRequest) (*verify.ReceiptResponse, error)
}

var _ Verifier = (*verify.Verifier)(nil)

var verifySpec = toolSpec[verify.Request]{
	Tool: Tool{
		Name: ToolVerify,
		Description: "Check a drafted answer against the passages it cites, read from the stored documents: every quoted span must be " +
			"in the passage it cites, and every number, date, amount, percentage, code and clause reference in a passage the same " +
			"sentence cites. Returns verified with a receipt_id, flagged with what did not match, or nothing_checked.",
		Bounded:  true,
		HTTPPath: "/v1/verify",
	},
	Summary:   "Check a drafted answer against its passages (strata_verify)",
	Component: "Verify",
	Response:  reflect.TypeFor[verify.Response](),
	Run: func(s *Server) (func(context.Context, verify.Request) (Outcome, error), bool) {
		if s.deps.Verifier == nil {
			return nil, false
		}
		return func(ctx context.Context, req verify.Request) (Outcome, error) {
			resp, err := s.deps.Verifier.Verify(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp, Results: len(resp.Flags)}, nil
		}, true
	},
}

var receiptSpec = toolSpec[verify.ReceiptRequest]{
	Tool: Tool{
		Name: ToolGetReceipt,
		Description: "Open a receipt strata_verify issued: the draft that was checked and each passage as the server read it, " +
			"with whether the stored document still reads the same.",
		HTTPPath: "/v1/receipt",
	},
	Summary:   "Open a receipt (strata_get_receipt)",
	Component: "Receipt",
	Response:  reflect.TypeFor[verify.ReceiptResponse](),
	Logged:    func(r verify.ReceiptRequest) string { return r.ReceiptID },
	Run: func(s *Server) (func(context.Context, verify.ReceiptRequest) (Outcome, error), bool) {
		if s.deps.Verifier == nil {
			return nil, false
		}
		return func(ctx context.Context, req verify.ReceiptRequest) (Outcome, error) {
			resp, err := s.deps.Verifier.GetReceipt(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp, Results: len(resp.Passages)}, nil
		}, true
	},
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
