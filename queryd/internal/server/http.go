package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/ui"
)

// retryAfterSeconds is the Retry-After of a 503, unless the error says
// when to retry (qerr.Error.RetryAfter).
const retryAfterSeconds = "1"

// ServeStdio serves MCP over stdin and stdout until the client closes stdin
// or ctx ends. The process owner is the caller, so the role is admin.
func (s *Server) ServeStdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	std := mcpserver.NewStdioServer(s.mcpServer())
	std.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	std.SetContextFunc(func(ctx context.Context) context.Context {
		return caller.With(withTransport(WithRole(ctx, RoleAdmin), transportStdio), caller.Stdio())
	})
	out := &lockedWriter{w: stdout}
	err := std.Listen(ctx, &stdinFilter{src: bufio.NewReader(stdin), out: out}, out)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// httpServer holds what `queryd serve` runs: the HTTP server and the MCP
// streamable HTTP handler mounted in it.
type httpServer struct {
	srv *http.Server
	mcp *mcpserver.StreamableHTTPServer
}

func (s *Server) newHTTPServer() *httpServer {
	// ReadHeaderTimeout bounds the headers; the body gets a deadline of its
	// own in guard (bodyDeadline). http.Server.ReadTimeout would do both,
	// but it stays set while the handler runs, and the server's background
	// read then cancels long requests and MCP event streams.
	h := &httpServer{srv: &http.Server{
		ReadHeaderTimeout: s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}}
	h.mcp = mcpserver.NewStreamableHTTPServer(s.mcpServer(),
		mcpserver.WithEndpointPath("/mcp"),
		mcpserver.WithStreamableHTTPServer(h.srv),
		mcpserver.WithStreamableHTTPLogger(s.log),
		// Session ids are signed (sessions.go), so every queryd sharing
		// QUERYD_SESSION_KEY_FILE accepts them: an id none issued, one
		// expired, or one ended here by DELETE gets 404, and the client
		// starts a new session.
		mcpserver.WithSessionIdManager(s.sessions),
		mcpserver.WithSessionIdleTTL(sessionIdleTTL),
		mcpserver.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			ctx = withTransport(WithRole(ctx, RoleFrom(r.Context())), transportMCP)
			// A token names the caller; without tokens, the MCP session does.
			if id := caller.From(r.Context()); id != caller.Loopback {
				return caller.With(ctx, id)
			}
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
				return caller.With(ctx, caller.Session(sid))
			}
			return caller.With(ctx, caller.Loopback)
		}),
	)
	h.srv.Handler = s.routes(s.mcpPreflight(h.mcp))
	return h
}

// Handler returns the HTTP handler of `queryd serve`: MCP at /mcp, the HTTP
// JSON API, /healthz, /metrics and /openapi.json.
func (s *Server) Handler() http.Handler { return s.newHTTPServer().srv.Handler }

func (s *Server) routes(mcpHandler http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.authenticate(mcpHandler))
	for _, t := range s.tools {
		if t.HTTPPath != "" {
			mux.Handle("POST "+t.HTTPPath, s.authenticate(s.toolHTTP(t)))
			// Any other method: 405 naming the one that works. Without
			// this pattern the catch-all below would answer 404.
			mux.HandleFunc(t.HTTPPath, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Allow", http.MethodPost)
				writeProblem(w, http.StatusMethodNotAllowed, apiError{Code: codeMethodNotAllowed,
					Message: fmt.Sprintf("%s takes POST with the arguments as a JSON body, not %s", t.HTTPPath, r.Method)})
			})
		}
	}
	// A receipt can also be opened by its address, as a link in a report
	// would: the same call as POST /v1/receipt with {"receipt_id": id}.
	for _, t := range s.tools {
		if t.Name == ToolGetReceipt {
			mux.Handle("GET /v1/receipts/{id}", s.authenticate(s.receiptByPath(t)))
		}
	}
	s.exploreRoutes(mux)
	mux.Handle("/ui/", ui.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.openAPI)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, apiError{Code: "not_found", Message: "no endpoint " + r.URL.Path + " (see /openapi.json)"})
	})
	return s.guard(mux)
}

// guard applies what every request goes through: a connection kept for
// monitoring serves only /healthz and /metrics, loopback-only access when
// no token is configured, Origin validation against DNS rebinding, and the
// request size limit.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refusedOnReserve(r) {
			// A connection past QUERYD_MAX_CONNS_PER_CLIENT, kept for
			// monitoring (clientLimit): nothing else is served on it.
			w.Header().Set("Connection", "close")
			dropBody(w, r)
			writeProblem(w, http.StatusServiceUnavailable, apiError{Code: errorKinds[qerr.Unavailable].code, Message: msgTooManyConns})
			return
		}
		s.bodyDeadline(w, r)
		if s.cfg.Tokens.Len() == 0 && !isLoopbackRemote(r) {
			dropBody(w, r)
			writeProblem(w, http.StatusForbidden, apiError{Code: "forbidden",
				Message: "no bearer tokens are configured (QUERYD_TOKENS), so only loopback clients are served"})
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o) && !s.sameOriginWithTokens(o, r) {
			dropBody(w, r)
			writeProblem(w, http.StatusForbidden, apiError{Code: "forbidden",
				Message: fmt.Sprintf("origin %q is not allowed (QUERYD_ALLOWED_ORIGINS)", o)})
			return
		}
		if r.ContentLength > s.cfg.MaxRequestBytes {
			dropBody(w, r)
			writeProblem(w, http.StatusRequestEntityTooLarge, apiError{Code: codeTooLarge,
				Message: fmt.Sprintf("the request body is over %d bytes (QUERYD_MAX_REQUEST_BYTES)", s.cfg.MaxRequestBytes)})
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed accepts loopback origins (a page served from this machine)
// and the ones QUERYD_ALLOWED_ORIGINS lists; everything else, "null"
// included, is refused.
func (s *Server) originAllowed(origin string) bool {
	o := strings.TrimSuffix(origin, "/")
	for _, a := range s.cfg.AllowedOrigins {
		if strings.EqualFold(a, o) {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOriginWithTokens accepts a page of this server calling it (the
// explorer, served at /ui/ under whatever host name the server has) when
// bearer tokens are configured: the Origin's host and port are the
// request's Host. Without tokens it accepts nothing more, since a page of
// a rebound host name is "same origin" too; with them, such a page still
// has no token to send.
func (s *Server) sameOriginWithTokens(origin string, r *http.Request) bool {
	if s.cfg.Tokens.Len() == 0 {
		return false
	}
	u, err := url.Parse(strings.TrimSuffix(origin, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// authenticate puts the caller's role in the request context: the role of
// its bearer token, or reader for a loopback client when no token is
// configured (guard has refused the others).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role, who := RoleReader, caller.Loopback
		if s.cfg.Tokens.Len() > 0 {
			tok := bearer(r)
			who = caller.Token(tok)
			role = s.cfg.Tokens.Role(tok)
			if role == RoleNone {
				msg := "a bearer token is required (Authorization: Bearer TOKEN)"
				if tok != "" {
					msg = "the bearer token is not valid"
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="stratakb"`)
				dropBody(w, r)
				writeError(w, &qerr.Error{Kind: qerr.Unauthorized, Msg: msg})
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(caller.With(WithRole(r.Context(), role), who)))
	})
}

// toolHTTP serves one tool as POST with a JSON body.
func (s *Server) toolHTTP(t Tool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
			dropBody(w, r)
			writeProblem(w, http.StatusUnsupportedMediaType, apiError{Code: codeUnsupportedMediaType, Message: "send the arguments as application/json"})
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			s.bodyError(w, r, err)
			return
		}
		if !json.Valid(body) && len(strings.TrimSpace(string(body))) > 0 {
			writeError(w, qerr.Invalidf("body", "is not valid JSON"))
			return
		}
		out, err := s.call(withTransport(r.Context(), transportHTTP), t, body)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out.Value)
	})
}

// receiptByPath serves GET /v1/receipts/{id} through the tool's one call
// path, so its errors, limits and metrics are strata_get_receipt's.
func (s *Server) receiptByPath(t Tool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := json.Marshal(map[string]string{"receipt_id": r.PathValue("id")})
		if err != nil {
			writeError(w, err)
			return
		}
		out, err := s.call(withTransport(r.Context(), transportHTTP), t, body)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out.Value)
	})
}

// writeError answers with the status code of the error's kind and a body
// naming the problem and the argument.
func writeError(w http.ResponseWriter, err error) {
	var e *qerr.Error
	if errors.As(err, &e) && e.Kind == qerr.Unavailable && e.RetryAfter > time.Second {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	p := publicError(err)
	writeProblem(w, errorKinds[qerr.KindOf(err)].status, p)
}

func writeProblem(w http.ResponseWriter, status int, p apiError) {
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", retryAfterSeconds)
	}
	writeJSON(w, status, map[string]apiError{"error": p})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Health is the body of /healthz.
type Health struct {
	Status   string          `json:"status"` // ok, degraded or unavailable
	Database ComponentHealth `json:"database"`
	// ReadReplica is set while the read replica does not answer and reads
	// go to the primary (QUERYD_READ_FALLBACK=primary): degraded.
	ReadReplica    *ComponentHealth `json:"read_replica,omitempty"`
	EmbeddingModel ComponentHealth  `json:"embedding_model"`
	Tools          []string         `json:"tools"`
}

// ComponentHealth is one dependency's state.
type ComponentHealth struct {
	Status string `json:"status"` // ok, unavailable or not configured
	Name   string `json:"name,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	h := Health{Status: "ok", Tools: s.ToolNames(),
		Database: ComponentHealth{Status: "not configured"}, EmbeddingModel: ComponentHealth{Status: "not configured"}}
	if s.deps.DB != nil {
		h.Database.Status = "ok"
		if err := s.deps.DB.Ping(ctx); err != nil {
			// A monitor probing a server whose database is down is one
			// more refusal of the outage's log, not a line per probe.
			if !s.outage.refusal(context.WithoutCancel(ctx), s.log, err) {
				s.log.Warn("health: database", slog.String(logError, err.Error()))
			}
			h.Database = ComponentHealth{Status: "unavailable", Error: "the database does not answer"}
			h.Status = "unavailable"
		} else {
			s.outage.reached(context.WithoutCancel(ctx), s.log)
		}
		if r, ok := s.deps.DB.(interface{ ReadingFromPrimary() bool }); ok && r.ReadingFromPrimary() {
			h.ReadReplica = &ComponentHealth{Status: "unavailable",
				Error: "the read replica does not answer: reads go to the primary (QUERYD_READ_FALLBACK=primary)"}
			if h.Status == "ok" {
				h.Status = "degraded"
			}
		}
	}
	if s.deps.Model != nil {
		name, err := s.deps.Model.ModelHealth(ctx)
		h.EmbeddingModel = ComponentHealth{Status: "ok", Name: name}
		if errors.Is(err, ErrModelNotLoaded) {
			// Loaded on the first query that needs a vector: not a fault.
			h.EmbeddingModel.Status = "not loaded yet"
		} else if err != nil {
			s.log.Warn("health: embedding model", slog.String(logError, err.Error()))
			h.EmbeddingModel = ComponentHealth{Status: "unavailable", Name: name, Error: "the embedding model cannot embed"}
			if h.Status == "ok" {
				h.Status = "degraded"
			}
		}
	}
	status := http.StatusOK
	if h.Status == "unavailable" {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", retryAfterSeconds)
	}
	writeJSON(w, status, h)
}

// ListenAndServe listens on QUERYD_ADDR and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (QUERYD_ADDR): %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets requests in flight finish within QUERYD_SHUTDOWN_TIMEOUT,
// closes MCP sessions, and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	h := s.newHTTPServer()
	if s.cfg.Tokens.Len() == 0 {
		s.log.Warn("no bearer tokens configured (QUERYD_TOKENS, QUERYD_TOKEN_FILE): only loopback clients are served, as readers")
	}
	if !isLoopbackAddr(ln.Addr().String()) && s.cfg.Tokens.Len() == 0 {
		s.log.Warn("listening beyond loopback without tokens: every non-loopback client will be refused", slog.String("addr", ln.Addr().String()))
	}
	s.log.Info("queryd serving", slog.String("addr", ln.Addr().String()), slog.Any("tools", s.ToolNames()))
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Serve(limitPerClient(ln, s.cfg.MaxConnsPerClient, s.log)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down", slog.String("timeout", s.cfg.ShutdownTimeout.String()))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	err := h.mcp.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serr)
	}
	if err != nil {
		_ = h.srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// bodyDeadline gives a request's body QUERYD_READ_TIMEOUT to arrive: a
// client that sends the headers and part of the body cannot hold the
// connection. Once the body has been read the deadline is lifted, so that
// a long search or an MCP event stream is not cut off.
func (s *Server) bodyDeadline(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout)); err != nil {
		return // not a connection of net/http's own (a test recorder)
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
}

// deadlineBody lifts the read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// dropBody marks a response sent without reading the request's body: the
// connection closes after it, and reading stops now. Otherwise net/http
// reads what is left of the body (up to 256 KB) before it answers and again
// when it closes the body, and a client that sent half of it waited for its
// 401 (or 403, 413, 415) for as long as it kept the connection open.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}
