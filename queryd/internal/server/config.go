package server

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratakb/stratakb/internal/config"
)

// DefaultAddr is where `queryd serve` listens unless QUERYD_ADDR says
// otherwise: loopback only.
const DefaultAddr = "127.0.0.1:8377"

// Config is the serving side of queryd's configuration.
type Config struct {
	Addr            string        // QUERYD_ADDR
	Tokens          *Tokens       // QUERYD_TOKENS and QUERYD_TOKEN_FILE
	AllowedOrigins  []string      // QUERYD_ALLOWED_ORIGINS: browser origins besides loopback ones
	MaxRequestBytes int64         // QUERYD_MAX_REQUEST_BYTES
	RequestTimeout  time.Duration // QUERYD_REQUEST_TIMEOUT
	MaxConcurrent   int           // QUERYD_MAX_CONCURRENT_SEARCHES
	QueueWait       time.Duration // QUERYD_QUEUE_WAIT: how long an excess search waits for a slot
	ShutdownTimeout time.Duration // QUERYD_SHUTDOWN_TIMEOUT
	RawQueries      bool          // LEARNING_STORE_RAW_QUERIES: log questions unscrubbed
	// ReadTimeout (QUERYD_READ_TIMEOUT) is how long a client has to send a
	// request's headers, and then again its body: a client that stops
	// half-way is cut off instead of holding a connection and a goroutine.
	ReadTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next
	// request.
	IdleTimeout time.Duration
	// MaxConnsPerClient (QUERYD_MAX_CONNS_PER_CLIENT) bounds the open
	// connections of one client address; 0 lifts the bound.
	MaxConnsPerClient int
	// SessionKeyFile (QUERYD_SESSION_KEY_FILE) holds the keys MCP session
	// ids are signed with (sessions.go). Every queryd behind one load
	// balancer must read the same file. Empty: a key made at start and
	// known only to this process.
	SessionKeyFile string
}

// DefaultMaxConnsPerClient is QUERYD_MAX_CONNS_PER_CLIENT's default: far
// more than an MCP client or a load test on loopback opens (a few, 16), far
// fewer than the thousands a misbehaving client can hold.
const DefaultMaxConnsPerClient = 64

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Addr:            DefaultAddr,
		Tokens:          &Tokens{},
		MaxRequestBytes: 1 << 20,
		RequestTimeout:  30 * time.Second,
		MaxConcurrent:   8,
		QueueWait:       2 * time.Second,
		ShutdownTimeout: 10 * time.Second,
		ReadTimeout:     10 * time.Second,
		IdleTimeout:     120 * time.Second,

		MaxConnsPerClient: DefaultMaxConnsPerClient,
	}
}

// Bounds of the serving variables, checked when they are read.
const (
	minTimeout = 100 * time.Millisecond
	maxTimeout = time.Hour
)

// LoadConfig reads the serving configuration from the environment on top of
// the defaults and validates it; errors name the variable, and all of them
// are reported.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	r := config.NewReader(getenv)
	r.String("QUERYD_ADDR", &c.Addr)
	tokens, err := LoadTokens(getenv)
	r.Add(err)
	if err == nil {
		c.Tokens = tokens
	}
	for _, o := range config.List(getenv, "QUERYD_ALLOWED_ORIGINS") {
		c.AllowedOrigins = append(c.AllowedOrigins, strings.TrimSuffix(o, "/"))
	}
	n := int(c.MaxRequestBytes)
	r.Int("QUERYD_MAX_REQUEST_BYTES", &n, 1024, 64<<20)
	c.MaxRequestBytes = int64(n)
	r.Int("QUERYD_MAX_CONCURRENT_SEARCHES", &c.MaxConcurrent, 1, 1024)
	r.Int("QUERYD_MAX_CONNS_PER_CLIENT", &c.MaxConnsPerClient, 0, 1<<20)
	r.Duration("QUERYD_REQUEST_TIMEOUT", &c.RequestTimeout, minTimeout, maxTimeout)
	r.Duration("QUERYD_QUEUE_WAIT", &c.QueueWait, 0, 10*time.Minute)
	r.Duration("QUERYD_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout, 0, 10*time.Minute)
	r.Duration("QUERYD_READ_TIMEOUT", &c.ReadTimeout, minTimeout, maxTimeout)
	r.Bool("LEARNING_STORE_RAW_QUERIES", &c.RawQueries)
	r.String("QUERYD_SESSION_KEY_FILE", &c.SessionKeyFile)
	if c.SessionKeyFile == "" {
		c.SessionKeyFile = defaultSessionKeyFile(getenv)
	}
	if err := r.Err(); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// defaultSessionKeyFile is var/secrets/mcp-session.key under STRATA_HOME,
// else the working directory, next to the receipt key; "" where there is no
// var/ folder (not a set-up installation), so that a queryd started
// elsewhere leaves no file behind.
func defaultSessionKeyFile(getenv func(string) string) string {
	home := getenv("STRATA_HOME")
	if home == "" {
		home = "."
	}
	if fi, err := os.Stat(filepath.Join(home, "var")); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Join(home, "var", "secrets", "mcp-session.key")
}

// Validate checks the configuration and reports every problem, each naming
// its variable.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("QUERYD_ADDR: %q is not host:port: %v", c.Addr, err)
	}
	for _, o := range c.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			bad("QUERYD_ALLOWED_ORIGINS: %q is not an origin such as https://app.example.com", o)
		}
	}
	if c.MaxRequestBytes < 1 {
		bad("QUERYD_MAX_REQUEST_BYTES: must be positive")
	}
	if c.RequestTimeout <= 0 {
		bad("QUERYD_REQUEST_TIMEOUT: must be positive")
	}
	if c.MaxConcurrent < 1 {
		bad("QUERYD_MAX_CONCURRENT_SEARCHES: must be at least 1")
	}
	if c.QueueWait < 0 {
		bad("QUERYD_QUEUE_WAIT: must be 0 or more")
	}
	if c.ShutdownTimeout < 0 {
		bad("QUERYD_SHUTDOWN_TIMEOUT: must be 0 or more")
	}
	if c.ReadTimeout <= 0 {
		bad("QUERYD_READ_TIMEOUT: must be positive")
	}
	if c.MaxConnsPerClient < 0 {
		bad("QUERYD_MAX_CONNS_PER_CLIENT: must be 0 (no bound) or more")
	}
	return errors.Join(errs...)
}
