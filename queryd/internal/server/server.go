// Package server serves queryd's tools: over MCP on stdio (`queryd mcp`),
// over MCP streamable HTTP at /mcp and as HTTP JSON (`queryd serve`), with
// roles from bearer tokens, bounded concurrency, request logs and metrics.
//
// Every transport goes through one call path (Server.call): role check,
// concurrency slot, timeout, the tool, then one log line and one metric. The
// error kinds of package qerr map to HTTP status codes in one table
// (errorKinds) and to MCP tool results in one function (toolResultError).
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/server/scrub"
)

// Version is reported to MCP clients as the server's version.
var Version = "dev"

// Pinger checks the database; *pgxpool.Pool is one.
type Pinger interface {
	Ping(ctx context.Context) error
}

// ModelHealth reports the embedding model: its name, and an error when it
// cannot embed. /healthz says "not configured" when there is none.
type ModelHealth interface {
	ModelHealth(ctx context.Context) (name string, err error)
}

// ErrModelNotLoaded is what ModelHealth returns (matched with errors.Is)
// for a model that is loaded on first use and has not been needed yet, or
// is loading: /healthz says "not loaded yet" and the server stays "ok".
var ErrModelNotLoaded = errors.New("the embedding model is not loaded yet")

// Deps are what the tools and health checks run on. A nil dependency leaves
// out the tools that need it.
type Deps struct {
	Searcher Searcher
	DB       Pinger      // for /healthz
	Model    ModelHealth // for /healthz; optional
	Logger   *slog.Logger
	Metrics  *Metrics // optional; a fresh set when nil
}

// Server serves the registered tools over every transport.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	metrics *Metrics
	limiter *limiter
	tools   []Tool
	byName  map[string]Tool
}

// New builds a server with every tool whose dependencies are present.
func New(cfg Config, deps Deps) (*Server, error) {
	return newServer(cfg, deps, nil)
}

// newServer also registers extra tools; tests use it for tools that do not
// exist yet (an admin-only one).
func newServer(cfg Config, deps Deps, extra []Tool) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Tokens == nil {
		cfg.Tokens = &Tokens{}
	}
	s := &Server{cfg: cfg, deps: deps, log: deps.Logger, metrics: deps.Metrics, byName: map[string]Tool{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	s.limiter = newLimiter(cfg.MaxConcurrent, cfg.QueueWait)
	for _, b := range toolBuilders {
		if t, ok := b(s); ok {
			s.tools = append(s.tools, t)
		}
	}
	s.tools = append(s.tools, extra...)
	for _, t := range s.tools {
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("tool %s registered twice", t.Name)
		}
		s.byName[t.Name] = t
	}
	return s, nil
}

// Metrics returns the server's metrics, for search to count cache hits and
// channel timings.
func (s *Server) Metrics() *Metrics { return s.metrics }

// ToolNames returns the registered tools' names in the order clients see
// them.
func (s *Server) ToolNames() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name
	}
	return names
}

// has reports whether a tool is registered.
func (s *Server) has(name string) bool {
	_, ok := s.byName[name]
	return ok
}

// Instructions returns the instructions this server sends at connect.
func (s *Server) Instructions() string { return Instructions(s.has) }

type transportKey struct{}

// The transports, as they appear in logs and metrics.
const (
	transportStdio = "mcp-stdio"
	transportMCP   = "mcp-http"
	transportHTTP  = "http"
)

func withTransport(ctx context.Context, t string) context.Context {
	return context.WithValue(ctx, transportKey{}, t)
}

func transportFrom(ctx context.Context) string {
	t, _ := ctx.Value(transportKey{}).(string)
	return t
}

// Constant attribute keys of the request log.
const (
	logTool      = "tool"
	logTransport = "transport"
	logRole      = "role"
	logStatus    = "status"
	logDuration  = "duration_ms"
	logResults   = "results"
	logQuery     = "query"
	logError     = "error"
)

// call runs one tool call on any transport: role check, a concurrency slot
// for bounded tools, the request timeout, the tool, then one log line and the
// metrics. A panic in a tool becomes an internal fault.
func (s *Server) call(ctx context.Context, t Tool, args json.RawMessage) (out Outcome, err error) {
	start := time.Now()
	role := RoleFrom(ctx)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in tool %s: %v\n%s", t.Name, r, debug.Stack())
		}
		s.record(ctx, t.Name, role, start, out, err)
	}()
	if t.AdminOnly {
		if err := RequireAdmin(ctx, t.Name); err != nil {
			return Outcome{}, err
		}
	}
	if t.Bounded {
		release, err := s.limiter.acquire(ctx)
		if err != nil {
			return Outcome{}, err
		}
		defer release()
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	out, err = t.Call(ctx, args)
	if err != nil && qerr.KindOf(err) == qerr.Internal && ctx.Err() != nil {
		// The tool gave up because the request ran out of time or the
		// caller went away: tell the caller so, not "internal error".
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = qerr.Unavailablef(err, "the request took longer than %s", s.cfg.RequestTimeout)
		} else {
			err = qerr.Unavailablef(err, "the request was cancelled")
		}
	}
	return out, err
}

func roleName(r Role) string {
	if r == RoleNone {
		return "caller without a role"
	}
	return string(r)
}

// record writes the request log line and the metrics of one call. The log
// never holds a token, and the query is scrubbed of bank identifiers unless
// LEARNING_STORE_RAW_QUERIES=true.
func (s *Server) record(ctx context.Context, tool string, role Role, start time.Time, out Outcome, err error) {
	d := time.Since(start)
	status := "ok"
	if err != nil {
		status = errorKinds[qerr.KindOf(err)].code
	}
	s.metrics.observe(tool, transportFrom(ctx), status, d)
	q := out.Query
	if !s.cfg.RawQueries {
		q = scrub.Text(q)
	}
	attrs := []slog.Attr{
		slog.String(logTool, tool),
		slog.String(logTransport, transportFrom(ctx)),
		slog.String(logRole, string(role)),
		slog.String(logStatus, status),
		slog.Float64(logDuration, float64(d.Microseconds())/1000),
		slog.Int(logResults, out.Results),
		slog.String(logQuery, q),
	}
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, slog.String(logError, err.Error()))
		if qerr.KindOf(err) == qerr.Internal {
			level = slog.LevelError
		}
	}
	s.log.LogAttrs(context.WithoutCancel(ctx), level, "tool call", attrs...)
}

// errorKind is how one error kind reaches callers.
type errorKind struct {
	code   string // the "code" field of error bodies, and the status label of metrics
	status int    // the HTTP status code
}

// errorKinds is the one table from error kinds to HTTP status codes.
var errorKinds = map[qerr.Kind]errorKind{
	qerr.Invalid:      {"invalid_argument", 400},
	qerr.Unauthorized: {"unauthorized", 401},
	qerr.Forbidden:    {"forbidden", 403},
	qerr.NotFound:     {"not_found", 404},
	qerr.Unavailable:  {"unavailable", 503},
	qerr.Internal:     {"internal", 500},
}

// apiError is the body of an error, over HTTP and in MCP tool results.
type apiError struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Argument string `json:"argument,omitempty"`
}

// publicError is what a caller may see of err: the kind, the argument and the
// message written for the caller, never a wrapped cause (SQL, file paths) or
// a stack. Internal faults say only that the server log has the details.
func publicError(err error) apiError {
	var e *qerr.Error
	if errors.As(err, &e) && e.Kind != qerr.Internal {
		msg := e.Msg
		if e.Arg != "" {
			msg = e.Arg + ": " + msg
		}
		return apiError{Code: errorKinds[e.Kind].code, Message: msg, Argument: e.Arg}
	}
	return apiError{Code: errorKinds[qerr.Internal].code, Message: "internal error; the server log has the details"}
}

// toolResultError is the one place where errors become MCP results: a
// caller's mistake, a refusal or a busy server is a tool result with isError
// set, whose text names the argument; an internal fault is an MCP (JSON-RPC)
// error with no detail.
func toolResultError(err error) (*mcp.CallToolResult, error) {
	p := publicError(err)
	if p.Code == errorKinds[qerr.Internal].code {
		return nil, errors.New(p.Message)
	}
	body, _ := json.Marshal(map[string]apiError{"error": p})
	return mcp.NewToolResultError(string(body)), nil
}

// mcpServer builds the MCP server: instructions, tools and the prompt.
func (s *Server) mcpServer() *mcpserver.MCPServer {
	m := mcpserver.NewMCPServer("stratakb", Version,
		mcpserver.WithInstructions(s.Instructions()),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithPromptCapabilities(false),
	)
	for _, t := range s.tools {
		tool := mcp.NewToolWithRawSchema(t.Name, t.Description, t.Schema)
		tool.Annotations = mcp.ToolAnnotation{
			ReadOnlyHint:    mcp.ToBoolPtr(!t.AdminOnly),
			DestructiveHint: mcp.ToBoolPtr(t.AdminOnly),
			IdempotentHint:  mcp.ToBoolPtr(!t.AdminOnly),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		}
		m.AddTool(tool, s.mcpToolHandler(t))
	}
	m.AddPrompt(mcp.NewPrompt(PromptAnswer,
		mcp.WithPromptDescription("The steps for answering a question from the indexed documents: which tool to call, how to cite, when to say the answer is not there."),
		mcp.WithArgument("question", mcp.RequiredArgument(), mcp.ArgumentDescription("The question to answer.")),
		mcp.WithArgument("layers", mcp.ArgumentDescription("Optional: layer names to search, separated by commas.")),
	), s.promptHandler)
	return m
}

func (s *Server) mcpToolHandler(t Tool) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, err := json.Marshal(req.GetRawArguments())
		if err != nil {
			return toolResultError(qerr.Invalidf("arguments", "cannot be read as JSON"))
		}
		out, err := s.call(ctx, t, raw)
		if err != nil {
			return toolResultError(err)
		}
		text, err := json.Marshal(out.Value)
		if err != nil {
			s.log.Error("encode tool result", slog.String(logTool, t.Name), slog.String(logError, err.Error()))
			return toolResultError(err)
		}
		return mcp.NewToolResultStructured(out.Value, string(text)), nil
	}
}

// promptHandler serves answer_from_documents. It reads no data, so it works
// without a database.
func (s *Server) promptHandler(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	q := req.Params.Arguments["question"]
	if q == "" {
		return nil, errors.New("question: the prompt needs a question")
	}
	var layers []string
	for _, l := range splitComma(req.Params.Arguments["layers"]) {
		if !slices.Contains(layers, l) {
			layers = append(layers, l)
		}
	}
	return mcp.NewGetPromptResult("Answer a question from the indexed documents",
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(PromptText(s.has, q, layers)))}), nil
}
