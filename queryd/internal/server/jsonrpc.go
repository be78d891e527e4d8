package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
)

// JSON-RPC messages that mcp-go answers wrongly are answered here, before
// they reach it, on both transports (mcpPreflight for HTTP, stdinFilter for
// stdio):
//   - a batch (a JSON array) got -32700 parse error: it gets -32600 saying
//     batches are not supported. MCP 2025-06-18 removed batching, and so do
//     the versions after it; a client that negotiated 2025-03-26 may send
//     batches and is refused the same way (queryd does not implement them);
//   - a message with an id but neither a method nor a result or error got
//     202 over HTTP, as if it were a response: it gets -32600;
//   - answer_from_documents without a question got -32603 internal error:
//     it gets -32602 invalid params naming the argument;
//   - a tools/call whose arguments hold text that is not UTF-8 was served
//     with U+FFFD in its place: it gets the tool's invalid-argument result.

// rpcReply is a JSON-RPC error response decided before mcp-go.
type rpcReply struct {
	body   []byte
	status int // the HTTP status over streamable HTTP
}

type rpcEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params json.RawMessage `json:"params"`
}

// checkMessage looks at one incoming JSON-RPC message and returns the reply
// when queryd answers it itself, nil when mcp-go should. Text that is not
// JSON is left to mcp-go, which answers -32700.
func checkMessage(msg []byte) *rpcReply {
	t := bytes.TrimSpace(msg)
	if len(t) == 0 {
		return nil
	}
	if t[0] == '[' {
		if !json.Valid(t) {
			return nil
		}
		return rpcError(nil, mcp.INVALID_REQUEST, http.StatusBadRequest,
			"JSON-RPC batches are not supported: send each request as a message of its own (MCP 2025-06-18 and later have no batches)")
	}
	var env rpcEnvelope
	if err := json.Unmarshal(t, &env); err != nil {
		return nil
	}
	id := json.RawMessage(nil)
	if len(env.ID) > 0 && string(env.ID) != "null" {
		id = env.ID
	}
	if env.Method == "" {
		if len(env.Result) > 0 || len(env.Error) > 0 {
			return nil // a response to the server, mcp-go's to handle
		}
		return rpcError(id, mcp.INVALID_REQUEST, http.StatusBadRequest,
			"invalid request: a request needs a method (and a response a result or an error)")
	}
	if env.Method == string(mcp.MethodToolsCall) && id != nil {
		if reply := checkToolText(id, env.Params); reply != nil {
			return reply
		}
	}
	if env.Method == string(mcp.MethodPromptsGet) && id != nil {
		var p struct {
			Name      string                     `json:"name"`
			Arguments map[string]json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(env.Params, &p) == nil && p.Name == PromptAnswer {
			var q string
			if raw, ok := p.Arguments["question"]; !ok || json.Unmarshal(raw, &q) != nil || strings.TrimSpace(q) == "" {
				return rpcError(id, mcp.INVALID_PARAMS, http.StatusOK,
					"question: the prompt "+PromptAnswer+" needs the argument question, a non-empty string")
			}
		}
	}
	return nil
}

// checkToolText answers a tools/call whose arguments hold text that is not
// UTF-8 with the tool-result error the tool would give: mcp-go decodes the
// message before the tool sees it, and encoding/json turns such bytes into
// U+FFFD silently, so the arguments are checked here, as they arrived.
func checkToolText(id, params json.RawMessage) *rpcReply {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Arguments) == 0 {
		return nil
	}
	err := toolargs.CheckUTF8(p.Arguments)
	if err == nil {
		return nil
	}
	res, _ := toolResultError(err)
	body, merr := json.Marshal(struct {
		JSONRPC string              `json:"jsonrpc"`
		ID      json.RawMessage     `json:"id"`
		Result  *mcp.CallToolResult `json:"result"`
	}{"2.0", id, res})
	if merr != nil {
		return nil
	}
	return &rpcReply{body: body, status: http.StatusOK}
}

func rpcError(id json.RawMessage, code, status int, msg string) *rpcReply {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return &rpcReply{body: body, status: status}
}

// mcpPreflight runs before mcp-go's streamable HTTP handler: it reads the
// body of a POST once (under the body deadline and size limit), answers the
// messages checkMessage catches, and answers DELETE or GET (an event
// stream) of a session this server does not know with 404 (mcp-go would
// say 200).
func (s *Server) mcpPreflight(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(mcpserver.HeaderKeySessionID)
		legacy := !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		switch r.Method {
		case http.MethodDelete, http.MethodGet:
			if legacy && sid != "" && !s.sessions.known(sid) {
				http.Error(w, "unknown or ended session id", http.StatusNotFound)
				return
			}
		case http.MethodPost:
			body, err := io.ReadAll(r.Body)
			if err != nil {
				s.bodyError(w, r, err)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			// A message on a session that is not known goes to mcp-go,
			// which answers 404 before looking at the message.
			if sid == "" || s.sessions.known(sid) {
				if reply := checkMessage(body); reply != nil {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(reply.status)
					_, _ = w.Write(reply.body)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bodyError answers a request whose body could not be read: too slow, too
// large, or cut off.
func (s *Server) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	var ne net.Error
	dropBody(w, r)
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		writeProblem(w, http.StatusRequestTimeout, apiError{Code: codeRequestTimeout,
			Message: fmt.Sprintf("the request body did not arrive within %s (QUERYD_READ_TIMEOUT)", s.cfg.ReadTimeout)})
	case errors.As(err, &tooLarge):
		writeProblem(w, http.StatusRequestEntityTooLarge, apiError{Code: codeTooLarge,
			Message: fmt.Sprintf("the request body is over %d bytes (QUERYD_MAX_REQUEST_BYTES)", s.cfg.MaxRequestBytes)})
	default:
		writeError(w, qerr.Invalidf("body", "cannot be read"))
	}
}

// stdinFilter passes stdin's lines to mcp-go's stdio server, except those
// checkMessage answers, whose replies it writes to out itself.
type stdinFilter struct {
	src *bufio.Reader
	out io.Writer
	buf []byte
	err error
}

func (f *stdinFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.src.ReadBytes('\n')
		f.err = err
		if len(line) == 0 {
			continue
		}
		if reply := checkMessage(line); reply != nil {
			if _, werr := f.out.Write(append(reply.body, '\n')); werr != nil {
				return 0, werr
			}
			continue
		}
		f.buf = line
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// lockedWriter serialises writes: mcp-go's stdio server and stdinFilter
// both write whole messages to stdout, one Write each.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
