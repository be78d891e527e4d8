package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/server"
)

// A command-line search or ask goes to a running `queryd serve` when one
// answers: its model is loaded and its connections are open, so the call
// costs a round trip instead of loading the embedding model (about 400 ms).

// remoteDialTimeout is how long the command line waits to connect to a
// queryd serve before running in-process; on loopback a server that is
// there connects in well under a millisecond.
const remoteDialTimeout = 100 * time.Millisecond

// remoteHeaderTimeout bounds the wait for a connected server's answer, so
// that a server that hangs does not hang the command line; it then runs
// in-process.
const remoteHeaderTimeout = 2 * time.Minute

// defaultRemoteAddr is the address tried when QUERYD_ADDR is not set; the
// package's tests clear it, so that a queryd serve running on the machine
// never answers for them.
var defaultRemoteAddr = server.DefaultAddr

// remoteBase returns the base URL of the queryd serve the command line
// tries: QUERYD_URL when set, else http://QUERYD_ADDR (default
// 127.0.0.1:8377) when that is a loopback address (an unspecified host,
// ":8377" or "0.0.0.0:8377", is reached on 127.0.0.1). It returns "" when
// there is none to try.
func remoteBase(getenv func(string) string) string {
	if u := strings.TrimSpace(getenv("QUERYD_URL")); u != "" {
		return strings.TrimRight(u, "/")
	}
	addr := strings.TrimSpace(getenv("QUERYD_ADDR"))
	if addr == "" {
		addr = defaultRemoteAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	switch ip := net.ParseIP(host); {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		host = "127.0.0.1"
	case host == "localhost" || (ip != nil && ip.IsLoopback()):
	default:
		return "" // beyond loopback only when QUERYD_URL says so
	}
	return "http://" + net.JoinHostPort(host, port)
}

// remoteCall is one request to a queryd serve.
type remoteCall struct {
	base  string
	token string
}

// errLocal means: run in-process. It wraps why the server was not used.
type errLocal struct{ why error }

func (e errLocal) Error() string { return "running in-process: " + e.why.Error() }

// post sends body to path and returns the response's JSON. An error the
// request itself caused (400) comes back as the server's message, with
// invalid true; any other failure (nothing listening, a timeout, 5xx,
// 401/403/404/429, a body that is not JSON) is an errLocal.
func (c remoteCall) post(ctx context.Context, path string, req any) (out []byte, invalid bool, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, false, errLocal{err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, false, errLocal{err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.token)
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: remoteDialTimeout}).DialContext,
		ResponseHeaderTimeout: remoteHeaderTimeout,
		DisableKeepAlives:     true,
	}}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, false, errLocal{err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, false, errLocal{err}
	}
	if resp.StatusCode == http.StatusBadRequest {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			return nil, true, errors.New(e.Error.Message)
		}
		return nil, false, errLocal{fmt.Errorf("%s answered 400 without a message", c.base)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, errLocal{fmt.Errorf("%s%s answered %s", c.base, path, resp.Status)}
	}
	if !json.Valid(data) {
		return nil, false, errLocal{fmt.Errorf("%s%s answered 200 with a body that is not JSON", c.base, path)}
	}
	return data, false, nil
}

// tryRemote sends the verb's request to a running queryd serve. It returns
// the response's JSON; errLocal when the verb should run in-process; a
// usage error for a request the server refused as invalid.
func tryRemote(ctx context.Context, getenv func(string) string, verb, path string, req any) ([]byte, error) {
	base := remoteBase(getenv)
	if base == "" {
		return nil, errLocal{errors.New("no loopback QUERYD_ADDR and no QUERYD_URL")}
	}
	out, invalid, err := remoteCall{base: base, token: strings.TrimSpace(getenv("QUERYD_TOKEN"))}.post(ctx, path, req)
	if invalid {
		return nil, usagef("%s: %v", verb, err)
	}
	return out, err
}
