package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
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
	// Asker serves strata_ask; nil leaves the tool out.
	Asker Asker
	// Verifier serves strata_verify and strata_get_receipt; nil leaves them
	// out.
	Verifier Verifier
	// Learner serves the learning tools; nil leaves them out.
	Learner Learner
	// Explorer serves the explorer's read-only routes; nil leaves them out.
	Explorer Explorer
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
	// sessions are the MCP session ids of streamable HTTP.
	sessions *sessions
	tools    []Tool
	byName   map[string]Tool
	// openAPI is the document served at /openapi.json, built from
	// toolDefs.
	openAPI []byte
	// outage coalesces the log of refusals while the database is down.
	outage *outage
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
	var keys [][]byte
	if cfg.SessionKeyFile != "" {
		var err error
		if keys, err = loadSessionKeys(cfg.SessionKeyFile); err != nil {
			return nil, fmt.Errorf("QUERYD_SESSION_KEY_FILE: %w", err)
		}
	}
	s.sessions = newSessions(keys)
	s.outage = newOutage()
	var err error
	if s.openAPI, err = openAPIDocument(toolDefs); err != nil {
		return nil, err
	}
	for _, d := range toolDefs {
		if call, ok := d.bind(s); ok {
			t := d.tool
			t.Call = call
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
			// The stack gets a log line of its own: the request log's
			// error attribute is cut short.
			s.log.Error("panic in tool", slog.String(logTool, t.Name), slog.String(logError, fmt.Sprint(r)),
				slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("panic in tool %s: %v", t.Name, r)
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

// maxLogged bounds each argument (and error text) in the request log, in
// bytes: a 900 KB query refused as too long was logged whole on every
// request.
const (
	maxLogged      = 300
	maxLoggedError = 600
)

// logArg prepares an argument for the log: scrubbed unless raw, and cut at
// maxLogged bytes with a marker giving the original length. A long text is
// cut before it is scrubbed too, far enough out that no identifier the
// scrubber would catch straddles the final cut.
func logArg(s string, max int, raw bool) string {
	n := len(s)
	if n > 4*max {
		s = cutUTF8(s, 4*max)
	}
	if !raw {
		s = scrub.Text(s)
	}
	if n <= max {
		return s
	}
	return cutUTF8(s, max) + fmt.Sprintf("…[cut, %d bytes in all]", n)
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// record writes the request log line and the metrics of one call; while the
// database is down, a refusal is counted in the outage's summary lines
// instead of a line of its own. The log never holds a token, the query is scrubbed of bank identifiers unless
// LEARNING_STORE_RAW_QUERIES=true, and every text is cut at a few hundred
// bytes.
func (s *Server) record(ctx context.Context, tool string, role Role, start time.Time, out Outcome, err error) {
	d := time.Since(start)
	status := "ok"
	if err != nil {
		status = errorKinds[qerr.KindOf(err)].code
	}
	s.metrics.observe(tool, transportFrom(ctx), status, d)
	// While the database is down, refusals are counted, not logged one by
	// one (outage).
	if s.outage.refusal(context.WithoutCancel(ctx), s.log, err) {
		return
	}
	if err == nil {
		s.outage.reached(context.WithoutCancel(ctx), s.log)
	}
	q := logArg(out.Query, maxLogged, s.cfg.RawQueries)
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
		attrs = append(attrs, slog.String(logError, logArg(err.Error(), maxLoggedError, true)))
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
	// A client that declares sampling can reword questions with its own
	// model (QUERY_REWRITE_PROVIDER=mcp_sampling).
	m.EnableSampling()
	for _, t := range s.tools {
		tool := mcp.NewToolWithRawSchema(t.Name, t.Description, t.Schema)
		tool.RawOutputSchema = t.OutputSchema
		tool.Annotations = mcp.ToolAnnotation{
			ReadOnlyHint:    mcp.ToBoolPtr(!t.AdminOnly),
			DestructiveHint: mcp.ToBoolPtr(t.AdminOnly),
			IdempotentHint:  mcp.ToBoolPtr(!t.AdminOnly),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		}
		m.AddTool(tool, s.mcpToolHandler(m, t))
	}
	m.AddPrompt(mcp.NewPrompt(PromptAnswer,
		mcp.WithPromptDescription("The steps for answering a question from the indexed documents: which tool to call, how to cite, when to say the answer is not there."),
		mcp.WithArgument("question", mcp.RequiredArgument(), mcp.ArgumentDescription("The question to answer.")),
		mcp.WithArgument("layers", mcp.ArgumentDescription("Optional: layer names to search, separated by commas.")),
	), s.promptHandler)
	return m
}

func (s *Server) mcpToolHandler(m *mcpserver.MCPServer, t Tool) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = withSampler(ctx, m)
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
	q := strings.TrimSpace(req.Params.Arguments["question"])
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

// withSampler gives the tool a way to ask the client's model, when the
// client declared the sampling capability.
func withSampler(ctx context.Context, m *mcpserver.MCPServer) context.Context {
	session := mcpserver.ClientSessionFromContext(ctx)
	withCaps, ok := session.(interface{ GetClientCapabilities() mcp.ClientCapabilities })
	if !ok || withCaps.GetClientCapabilities().Sampling == nil {
		return ctx
	}
	return caller.WithSampler(ctx, func(ctx context.Context, system, user string, maxTokens int) (string, error) {
		//lint:ignore SA1019 sampling is how QUERY_REWRITE_PROVIDER=mcp_sampling asks the client's model; clients on protocol versions before 2026-07-28 still use it, and mcp-go turns it into an input request for later ones
		res, err := m.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
			SystemPrompt: system,
			Messages:     []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(user)}},
			MaxTokens:    maxTokens,
		}})
		if err != nil {
			return "", fmt.Errorf("sampling/createMessage: %w", err)
		}
		switch c := res.Content.(type) {
		case mcp.TextContent:
			return c.Text, nil
		case *mcp.TextContent:
			return c.Text, nil
		case map[string]any:
			if text, ok := c["text"].(string); ok && c["type"] == "text" {
				return text, nil
			}
		}
		return "", fmt.Errorf("sampling/createMessage: the client's reply is not text (%T)", res.Content)
	})
}
