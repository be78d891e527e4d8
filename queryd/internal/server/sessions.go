package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// Bounds of the MCP sessions of streamable HTTP: a session unused for a day
// is forgotten, and past maxSessions the least recently used one is.
const (
	sessionIdleTTL = 24 * time.Hour
	maxSessions    = 10000
)

// errUnknownSession makes mcp-go answer 404, which tells the client to
// start a new session.
var errUnknownSession = errors.New("unknown or ended session id")

// sessions issues MCP session ids and remembers the live ones, so that an id
// this server never issued, or one a client ended with DELETE, gets 404.
// mcp-go's default manager checks only an id's form; its stateful one never
// forgets an id, so a client that opens sessions in a loop grows it without
// bound.
type sessions struct {
	mu   sync.Mutex
	now  func() time.Time
	live map[string]time.Time // id → last use
	ttl  time.Duration
	max  int
}

var _ mcpserver.SessionIdManager = (*sessions)(nil)

func newSessions() *sessions {
	return &sessions{now: time.Now, live: map[string]time.Time{}, ttl: sessionIdleTTL, max: maxSessions}
}

// Generate issues a new id: 128 random bits.
func (s *sessions) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "mcp-session-" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.live) >= s.max {
		oldest, at := "", now
		for k, t := range s.live {
			if now.Sub(t) > s.ttl {
				delete(s.live, k)
				continue
			}
			if !t.After(at) {
				oldest, at = k, t
			}
		}
		if len(s.live) >= s.max {
			delete(s.live, oldest)
		}
	}
	s.live[id] = now
	return id
}

// Validate accepts a live id and marks it used.
func (s *sessions) Validate(id string) (isTerminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.live[id]
	now := s.now()
	if !ok || now.Sub(t) > s.ttl {
		delete(s.live, id)
		return false, errUnknownSession
	}
	s.live[id] = now
	return false, nil
}

// Terminate ends a session (DELETE, or shutdown).
func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	return false, nil
}

// known reports whether id is live, without marking it used.
func (s *sessions) known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.live[id]
	return ok && s.now().Sub(t) <= s.ttl
}
