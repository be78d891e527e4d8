package server

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/stratakb/stratakb/internal/keyfile"
)

// MCP session ids of streamable HTTP are self-contained and signed, so that
// every queryd of one deployment accepts the ids the others issued and a
// load balancer may send each request of a session to any of them:
//
//	mcp-session-<32 hex random>.<expiry, Unix seconds>.<HMAC-SHA256, base64url>
//
// Why not a table in PostgreSQL: queryd's role may write only interactions,
// feedback and receipts, and a session table would add a database write
// (on the primary, past any replica) to every initialize and a read to every
// MCP request; the session holds nothing a process needs besides "this
// deployment issued it and it has not expired". The price is that an id
// ended with DELETE is refused by the process that ended it (ended, below)
// but still accepted by the others until it expires: the session carries no
// state and no rights (the bearer token does), so all that id can still do
// elsewhere is what a new session could. docs/scale.md ("Several queryd
// processes") says more.
const (
	// sessionLifetime is how long an id is accepted after it was issued; a
	// client then gets 404 and starts a new session, as the MCP transport
	// requires. It is also how long a retired key must stay in the key
	// file.
	sessionLifetime = 24 * time.Hour
	// sessionIdleTTL is how long mcp-go keeps a quiet session's own state
	// (its registration, for notifications) in this process.
	sessionIdleTTL = sessionLifetime
	// maxEndedSessions bounds the ids remembered as ended here.
	maxEndedSessions = 10000
	sessionPrefix    = "mcp-session-"
	// sessionKeyBytes is the size of a key the server creates, and the
	// least it accepts from a key file.
	sessionKeyBytes = 32
)

// errUnknownSession makes mcp-go answer 404, which tells the client to
// start a new session.
var errUnknownSession = errors.New("unknown, expired or ended session id")

// sessions issues and checks MCP session ids. keys[0] signs; every key
// verifies, so a key can be rotated without ending the sessions signed with
// the one before. Memory is bounded: the only thing kept per session is an
// id ended here, at most max of them, each until it expires.
type sessions struct {
	keys  [][]byte
	now   func() time.Time
	life  time.Duration
	mu    sync.Mutex
	ended map[string]time.Time // id → its expiry
	max   int
}

var _ mcpserver.SessionIdManager = (*sessions)(nil)

func newSessions(keys [][]byte) *sessions {
	if len(keys) == 0 {
		keys = [][]byte{randomBytes(sessionKeyBytes)}
	}
	return &sessions{keys: keys, now: time.Now, life: sessionLifetime, ended: map[string]time.Time{}, max: maxEndedSessions}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return b
}

// mac signs an id's body ("mcp-session-<random>.<expiry>") with key.
func mac(key []byte, body string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("stratakb mcp session v1\x00"))
	h.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Generate issues a new id: 128 random bits, the expiry, and their
// signature.
func (s *sessions) Generate() string {
	exp := s.now().Add(s.life).Unix()
	body := sessionPrefix + hex.EncodeToString(randomBytes(16)) + "." + strconv.FormatInt(exp, 10)
	return body + "." + mac(s.keys[0], body)
}

// parse checks an id's signature against every key and returns its expiry.
func (s *sessions) parse(id string) (time.Time, bool) {
	i := strings.LastIndexByte(id, '.')
	if i < 0 || !strings.HasPrefix(id, sessionPrefix) {
		return time.Time{}, false
	}
	body, sig := id[:i], id[i+1:]
	j := strings.LastIndexByte(body, '.')
	if j < 0 {
		return time.Time{}, false
	}
	exp, err := strconv.ParseInt(body[j+1:], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	for _, k := range s.keys {
		if hmac.Equal([]byte(mac(k, body)), []byte(sig)) {
			return time.Unix(exp, 0), true
		}
	}
	return time.Time{}, false
}

// Validate accepts an id this deployment signed that has neither expired
// nor been ended here.
func (s *sessions) Validate(id string) (isTerminated bool, err error) {
	if !s.known(id) {
		return false, errUnknownSession
	}
	return false, nil
}

// known reports whether id is one Validate accepts.
func (s *sessions) known(id string) bool {
	exp, ok := s.parse(id)
	if !ok || !s.now().Before(exp) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ended := s.ended[id]
	return !ended
}

// Terminate ends a session (DELETE, or mcp-go's sweep of idle sessions):
// this process refuses the id from now on. Past max ended ids, expired ones
// are dropped first, then the one closest to expiry.
func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	exp, ok := s.parse(id)
	now := s.now()
	if !ok || !now.Before(exp) {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ended) >= s.max {
		first, at := "", time.Time{}
		for k, e := range s.ended {
			if !now.Before(e) {
				delete(s.ended, k)
			} else if first == "" || e.Before(at) {
				first, at = k, e
			}
		}
		if len(s.ended) >= s.max {
			delete(s.ended, first)
		}
	}
	s.ended[id] = exp
	return false, nil
}

// loadSessionKeys reads the session key file: one key a line in hex, at
// least 32 bytes, the first signing, the others (older keys kept during a
// rotation) only verifying; blank lines and # comments are skipped. A file
// that does not exist is created with one new key (mode 600, its folder
// 700); when several processes start at once, the first to create it wins
// and the others read its key.
func loadSessionKeys(path string) ([][]byte, error) {
	b, err := keyfile.ReadOrCreate(path, func() ([]byte, error) {
		return []byte(hex.EncodeToString(randomBytes(sessionKeyBytes)) + "\n"), nil
	})
	if err != nil {
		return nil, fmt.Errorf("session key file: %w", err)
	}
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := hex.DecodeString(line)
		if err != nil || len(k) < sessionKeyBytes {
			return nil, fmt.Errorf("session key file %s line %d: want at least %d bytes of hex", path, n, sessionKeyBytes)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("session key file %s: no key in it", path)
	}
	return keys, nil
}
