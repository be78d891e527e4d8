package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

// Role is what a caller may do. Readers search, ask, verify, read receipts
// and give feedback; admins may also reset learning and read learning stats
// for every layer.
type Role string

// The roles. Over stdio the process owner is RoleAdmin; over HTTP a bearer
// token names the role.
const (
	RoleNone   Role = ""
	RoleReader Role = "reader"
	RoleAdmin  Role = "admin"
)

type roleKey struct{}

// WithRole returns a context that carries the caller's role to tool handlers.
func WithRole(ctx context.Context, r Role) context.Context {
	return context.WithValue(ctx, roleKey{}, r)
}

// RoleFrom returns the caller's role, RoleNone when the context has none.
func RoleFrom(ctx context.Context) Role {
	r, _ := ctx.Value(roleKey{}).(Role)
	return r
}

// RequireAdmin refuses callers that are not admins, for tools that are open
// to readers in part (learning stats of every layer) and check inside; a
// tool that is admin-only as a whole sets Tool.AdminOnly instead.
func RequireAdmin(ctx context.Context, what string) error {
	if r := RoleFrom(ctx); r != RoleAdmin {
		return qerr.Forbiddenf("%s is for admins only; this caller is a %s", what, roleName(r))
	}
	return nil
}

// MinTokenLength is the shortest bearer token queryd accepts in its
// configuration: shorter ones are guessable.
const MinTokenLength = 16

// Tokens maps bearer tokens to roles. Lookups compare against every
// configured token in constant time, so neither a token's content nor which
// token matched shows in the response time.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	sum  [sha256.Size]byte
	role Role
}

// Len is the number of configured tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// Role returns the role of token, RoleNone when no configured token matches.
// Tokens are hashed first so that every comparison has the same length.
func (t *Tokens) Role(token string) Role {
	if t == nil || token == "" {
		return RoleNone
	}
	sum := sha256.Sum256([]byte(token))
	found := RoleNone
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			found = e.role
		}
	}
	return found
}

// ParseTokens reads "role:token" pairs separated by commas or newlines (the
// format of QUERYD_TOKENS and of QUERYD_TOKEN_FILE); blank lines and lines
// starting with # are skipped. source names the variable or file in errors,
// which never include a token.
func ParseTokens(source, text string) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for i, pair := range strings.Split(l, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			where := fmt.Sprintf("%s: line %d, entry %d", source, line, i+1)
			role, token, ok := strings.Cut(pair, ":")
			if !ok {
				return nil, fmt.Errorf("%s: want role:token", where)
			}
			r := Role(strings.TrimSpace(role))
			if r != RoleReader && r != RoleAdmin {
				return nil, fmt.Errorf("%s: role %q is not reader or admin", where, role)
			}
			token = strings.TrimSpace(token)
			if len(token) < MinTokenLength || strings.ContainsAny(token, " \t") {
				return nil, fmt.Errorf("%s: the token must be at least %d characters without spaces", where, MinTokenLength)
			}
			t.entries = append(t.entries, tokenEntry{sum: sha256.Sum256([]byte(token)), role: r})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return t, nil
}

// LoadTokens reads QUERYD_TOKENS and the file QUERYD_TOKEN_FILE names; both
// may be set, and their tokens add up.
func LoadTokens(getenv func(string) string) (*Tokens, error) {
	t, err := ParseTokens("QUERYD_TOKENS", config.Secret(getenv, "QUERYD_TOKENS"))
	if err != nil {
		return nil, err
	}
	if p := config.String(getenv, "QUERYD_TOKEN_FILE", ""); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("QUERYD_TOKEN_FILE: %w", err)
		}
		ft, err := ParseTokens("QUERYD_TOKEN_FILE "+p, string(b))
		if err != nil {
			return nil, err
		}
		if ft.Len() == 0 {
			return nil, fmt.Errorf("QUERYD_TOKEN_FILE %s holds no token", p)
		}
		t.entries = append(t.entries, ft.entries...)
	}
	return t, nil
}

// bearer returns the token of an "Authorization: Bearer TOKEN" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// isLoopbackRemote reports whether the request came over a loopback
// connection.
func isLoopbackRemote(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopbackAddr reports whether a listen address binds only to loopback.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
