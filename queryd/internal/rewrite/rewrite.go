// Package rewrite turns a question into a few searches in the searched
// layers' own terms, with a language model.
//
// A Rewriter asks one provider: "anthropic" (the Messages API),
// "openai_compatible" (any endpoint speaking the OpenAI chat-completions API:
// Ollama, vLLM, LM Studio, Azure OpenAI, Groq) or "mcp_sampling" (the
// connected MCP client's own model, through a function the server supplies).
// Build the HTTP ones with New from a Config, the sampling one with
// NewSampling.
//
// What is sent: the question and the name and description of each searched
// layer, in one prompt (SystemPrompt and UserPrompt); nothing else of the
// knowledge base. The reply is read for the first JSON list of strings in it
// (ParseList), since small models wrap their answer in prose or a code fence.
//
// A provider failure must never fail the caller's request: Variants is the
// helper that falls back. Whatever goes wrong (no list in the reply, a
// timeout, a 429, a 5xx, a network failure) it returns the question as
// written, plus the question with the learned synonyms appended, and the
// error's kind for the caller to log (Error.LogEvent gives
// "query_rewrite_json_error" and the like). The question as written is
// always the first variant, and there are at most MaxVariants.
package rewrite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/internal/provider"
)

// LayerInfo is what the prompt says about one searched layer.
type LayerInfo struct {
	Name        string
	Description string
}

// Rewriter asks a language model for rewrites of question in the terms of
// layers. It returns the model's rewrites as the reply lists them (possibly
// none), or an *Error. Implementations are safe for concurrent use.
type Rewriter interface {
	Rewrite(ctx context.Context, question string, layers []LayerInfo) ([]string, error)
	// Name is the provider and model, such as "anthropic:claude-haiku-4-5".
	Name() string
}

// Limits on the variants.
const (
	// MaxVariants is the most searches one question turns into, the
	// question as written included.
	MaxVariants = 4
	// MaxVariantBytes drops a rewrite longer than this: a model that
	// rambles is not writing a search.
	MaxVariantBytes = 400
	// maxLayersInPrompt and maxDescriptionBytes bound the prompt.
	maxLayersInPrompt   = 30
	maxDescriptionBytes = 600
	// maxQuestionBytes bounds the question as the prompt quotes it.
	maxQuestionBytes = 2000
)

// Kinds of failure, for logs and metrics.
const (
	// KindJSON: the reply held no JSON list of strings.
	KindJSON = "json_error"
	// KindTimeout: no reply in time.
	KindTimeout = "timeout"
	// KindRateLimited: the provider answered 429 until the retries ran out.
	KindRateLimited = "rate_limited"
	// KindHTTPStatus: another answer than 2xx (401, 400, 500...).
	KindHTTPStatus = "http_status"
	// KindTransport: the connection failed, was refused by
	// STRATA_LOCAL_ONLY, or broke.
	KindTransport = "transport"
	// KindBadResponse: a 2xx answer that is not the API's format, or
	// larger than the provider's bound.
	KindBadResponse = "bad_response"
	// KindSampling: the MCP client refused or failed the sampling request.
	KindSampling = "sampling_error"
)

// Error is a failed rewrite. Kind is one of the Kind constants.
type Error struct {
	Kind     string
	Provider string
	Err      error
}

// Error describes the failure.
func (e *Error) Error() string {
	return fmt.Sprintf("query rewrite with %s: %s: %v", e.Provider, e.Kind, e.Err)
}

// Unwrap gives the cause.
func (e *Error) Unwrap() error { return e.Err }

// LogEvent is the event name the server logs: "query_rewrite_" and the kind,
// such as query_rewrite_json_error.
func (e *Error) LogEvent() string { return "query_rewrite_" + e.Kind }

// KindOf is err's kind: the Kind of an *Error in its chain, KindTimeout for
// a context deadline, otherwise KindTransport. nil has kind "".
func KindOf(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	return KindTransport
}

// classify turns an error of the shared HTTP client into an *Error.
func classify(name string, err error) *Error {
	kind := KindTransport
	var se *provider.StatusError
	switch {
	case errors.As(err, &se) && se.StatusCode == 429:
		kind = KindRateLimited
	case errors.As(err, &se):
		kind = KindHTTPStatus
	case errors.Is(err, provider.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		kind = KindTimeout
	case errors.Is(err, provider.ErrTooLarge):
		kind = KindBadResponse
	}
	return &Error{Kind: kind, Provider: name, Err: err}
}

// Variants is what the caller searches for question: the question as
// written first, then the question with the learned synonyms appended (when
// there are any), then r's rewrites, without duplicates (ignoring case and
// spacing), empty or overlong ones, at most MaxVariants in all.
//
// With r nil (no provider) it returns those first variants and errKind "".
// When r fails, it returns the same and the failure's kind (a Kind
// constant); the caller logs "query_rewrite_"+errKind and carries on: a
// provider failure never fails the call.
func Variants(ctx context.Context, r Rewriter, question string, layers []LayerInfo, synonyms []string) (variants []string, errKind string) {
	base := []string{question}
	if syn := joinSynonyms(question, synonyms); syn != "" {
		base = append(base, syn)
	}
	if r == nil {
		return Merge(base...), ""
	}
	rewrites, err := r.Rewrite(ctx, question, layers)
	if err != nil {
		return Merge(base...), KindOf(err)
	}
	return Merge(append(base, rewrites...)...), ""
}

// joinSynonyms is question with those synonyms appended that it does not
// already contain, or "" when none is left.
func joinSynonyms(question string, synonyms []string) string {
	low := strings.ToLower(question)
	var add []string
	for _, s := range synonyms {
		s = strings.Join(strings.Fields(s), " ")
		if s != "" && !strings.Contains(low, strings.ToLower(s)) {
			add = append(add, s)
			low += " " + strings.ToLower(s)
		}
	}
	if len(add) == 0 {
		return ""
	}
	return strings.TrimSpace(question) + " " + strings.Join(add, " ")
}

// Merge keeps the first of each group of candidates equal but for case and
// spacing, drops empty ones, ones longer than MaxVariantBytes and ones that
// are not valid UTF-8, and returns at most MaxVariants. The first candidate
// (the question as written) is always kept as it is.
func Merge(candidates ...string) []string {
	var out []string
	seen := map[string]bool{}
	for i, c := range candidates {
		if i > 0 {
			c = strings.Join(strings.Fields(c), " ")
			if c == "" || len(c) > MaxVariantBytes || !utf8.ValidString(c) || !printable(c) {
				continue
			}
		}
		k := key(c)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
		if len(out) == MaxVariants {
			break
		}
	}
	return out
}

func key(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

func printable(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
