package server

import (
	"fmt"
	"net"
	"net/url"
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

// LoadConfig reads the serving configuration from the environment on top of
// the defaults; errors name the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	var err error
	if v := getenv("QUERYD_ADDR"); v != "" {
		c.Addr = v
	}
	if c.Tokens, err = LoadTokens(getenv); err != nil {
		return c, err
	}
	for _, o := range strings.Split(getenv("QUERYD_ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, strings.TrimSuffix(o, "/"))
		}
	}
	n, err := config.Int(getenv, "QUERYD_MAX_REQUEST_BYTES", int(c.MaxRequestBytes), 1024, 64<<20)
	if err != nil {
		return c, err
	}
	c.MaxRequestBytes = int64(n)
	if c.MaxConcurrent, err = config.Int(getenv, "QUERYD_MAX_CONCURRENT_SEARCHES", c.MaxConcurrent, 1, 1024); err != nil {
		return c, err
	}
	if c.MaxConnsPerClient, err = config.Int(getenv, "QUERYD_MAX_CONNS_PER_CLIENT", c.MaxConnsPerClient, 0, 1<<20); err != nil {
		return c, err
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{
		{"QUERYD_REQUEST_TIMEOUT", &c.RequestTimeout},
		{"QUERYD_QUEUE_WAIT", &c.QueueWait},
		{"QUERYD_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout},
		{"QUERYD_READ_TIMEOUT", &c.ReadTimeout},
	} {
		if v := getenv(d.name); v != "" {
			if *d.dst, err = time.ParseDuration(v); err != nil || *d.dst < 0 {
				return c, fmt.Errorf("%s: %q is not a duration such as 30s or 500ms", d.name, v)
			}
		}
	}
	if c.RawQueries, err = config.Bool(getenv, "LEARNING_STORE_RAW_QUERIES", false); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate checks the configuration; errors name the variable.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("QUERYD_ADDR: %q is not host:port: %v", c.Addr, err)
	}
	for _, o := range c.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return fmt.Errorf("QUERYD_ALLOWED_ORIGINS: %q is not an origin such as https://app.example.com", o)
		}
	}
	if c.RequestTimeout <= 0 {
		return fmt.Errorf("QUERYD_REQUEST_TIMEOUT: must be positive")
	}
	if c.MaxConcurrent < 1 {
		return fmt.Errorf("QUERYD_MAX_CONCURRENT_SEARCHES: must be at least 1")
	}
	if c.ReadTimeout <= 0 {
		return fmt.Errorf("QUERYD_READ_TIMEOUT: must be positive")
	}
	if c.MaxConnsPerClient < 0 {
		return fmt.Errorf("QUERYD_MAX_CONNS_PER_CLIENT: must be 0 (no bound) or more")
	}
	return nil
}
