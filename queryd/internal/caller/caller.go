// Package caller carries who is calling a tool through a request's context:
// the identity strata_ask records with an interaction and that
// strata_feedback checks, so only the caller who asked can rate an answer.
//
// Identities: "token:<first 16 hex digits of the bearer token's SHA-256>"
// when tokens are configured; else "session:<MCP session id>" over
// streamable HTTP; else "loopback" for HTTP JSON on a server without tokens
// (every local client is the same caller); "stdio:uid:<n>" for `queryd mcp`,
// whose caller is the process owner.
package caller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

type key struct{}

// With returns ctx carrying the caller id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the caller id ctx carries, "" when none.
func From(ctx context.Context) string {
	s, _ := ctx.Value(key{}).(string)
	return s
}

// Token is the id of a caller known by its bearer token: a digest, so the
// token itself is never stored.
func Token(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:8])
}

// Session is the id of an MCP session's caller.
func Session(id string) string { return "session:" + id }

// Loopback is every caller of a server without tokens over HTTP JSON.
const Loopback = "loopback"

// Stdio is the process owner of `queryd mcp`.
func Stdio() string { return fmt.Sprintf("stdio:uid:%d", os.Getuid()) }

// Sampler asks the calling MCP client's own model for a completion
// (sampling/createMessage): system and user prompts in, the reply's text
// out. Only a client that declared the sampling capability has one.
type Sampler func(ctx context.Context, system, user string, maxTokens int) (string, error)

type samplerKey struct{}

// WithSampler returns ctx carrying the client's sampler.
func WithSampler(ctx context.Context, s Sampler) context.Context {
	return context.WithValue(ctx, samplerKey{}, s)
}

// SamplerFrom returns the client's sampler, nil when it has none.
func SamplerFrom(ctx context.Context) Sampler {
	s, _ := ctx.Value(samplerKey{}).(Sampler)
	return s
}
