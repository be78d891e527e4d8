package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/stratakb/stratakb/internal/config"
)

// mcpServer is one entry of a client's "mcpServers": a command the client
// starts (stdio) or an HTTP endpoint.
type mcpServer struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// TokenPlaceholder stands for a reader token in the HTTP configuration
// that mcp-config prints; tokens are never printed.
const TokenPlaceholder = "YOUR_READER_TOKEN"

// passwordPlaceholder stands for a database password in a printed URL.
const passwordPlaceholder = "PASSWORD"

// forwardedVars are the variables a stdio client must pass on for queryd to
// run as configured here: where things are and which model embeds queries
// (it must be the one that made the vectors). Secrets are not among them.
var forwardedVars = []string{"EMBEDDING_PROVIDER", "EMBEDDING_MODEL", "EMBEDDING_BASE_URL", "EMBEDDING_DIMENSIONS",
	"STRATA_LOCAL_ONLY", "STRATA_MODEL_DIR", "ONNXRUNTIME_LIB", "QUERYD_RECEIPT_KEY_FILE"}

// pathVars are the forwarded variables that hold paths, made absolute.
var pathVars = map[string]bool{"STRATA_MODEL_DIR": true, "ONNXRUNTIME_LIB": true, "QUERYD_RECEIPT_KEY_FILE": true}

// mcpConfigVerb is `queryd mcp-config`: it prints a client configuration
// that works from any folder: the absolute path of this queryd, and
// STRATA_HOME, under which var/db.env, the models and ONNX Runtime are
// found; or, with --http, the URL of `queryd serve` at QUERYD_ADDR.
func mcpConfigVerb(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp-config", stderr)
	httpVariant := fs.Bool("http", false, "the streamable HTTP endpoint of 'queryd serve' instead of a command the client starts")
	name := fs.String("name", "stratakb", "the server's name in the client")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("mcp-config takes no arguments, got %q", fs.Arg(0))
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	var srv mcpServer
	if *httpVariant {
		srv, err = httpServerEntry(cfg)
	} else {
		srv, err = stdioServerEntry(config.WithHome(getenv))
	}
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]any{"mcpServers": map[string]mcpServer{*name: srv}})
}

// stdioServerEntry is the entry that starts this executable's `queryd mcp`.
func stdioServerEntry(getenv func(string) string) (mcpServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return mcpServer{}, fmt.Errorf("find queryd's own path: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	env := map[string]string{}
	home := getenv(config.HomeVar)
	if home == "" {
		home = "." // neither STRATA_HOME nor a checkout: the working directory is the home
	}
	if home, err = filepath.Abs(home); err != nil {
		return mcpServer{}, fmt.Errorf("resolve STRATA_HOME: %w", err)
	}
	env[config.HomeVar] = home
	for _, v := range forwardedVars {
		val := config.String(getenv, v, "")
		if val == "" {
			continue
		}
		if pathVars[v] {
			if abs, err := filepath.Abs(val); err == nil {
				val = abs
			}
		}
		env[v] = val
	}
	// A database named in the environment is passed on, but for its
	// password: the client's configuration file is no place for it.
	for _, v := range []string{"QUERYD_DATABASE_URL", "DATABASE_URL", "QUERYD_READ_DATABASE_URL"} {
		if u := getenv(v); u != "" {
			env[v] = withPasswordPlaceholder(u)
		}
	}
	return mcpServer{Command: exe, Args: []string{"mcp"}, Env: env}, nil
}

// httpServerEntry is the entry for `queryd serve` at QUERYD_ADDR.
func httpServerEntry(cfg Config) (mcpServer, error) {
	host, port, err := net.SplitHostPort(cfg.Server.Addr)
	if err != nil {
		return mcpServer{}, fmt.Errorf("QUERYD_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/mcp"}
	return mcpServer{Type: "http", URL: u.String(), Headers: map[string]string{"Authorization": "Bearer " + TokenPlaceholder}}, nil
}

// withPasswordPlaceholder replaces a URL's password with a placeholder; a
// connection string that is not a URL is replaced whole.
func withPasswordPlaceholder(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "postgres://queryd:" + passwordPlaceholder + "@127.0.0.1:15432/stratakb"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), passwordPlaceholder)
		}
	}
	return u.String()
}
