package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads the wait a server asks for: retry-after-ms (OpenAI), or
// Retry-After in seconds or as an HTTP date. A date in the past means no
// wait. ok is false when the answer asks for nothing readable.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, 1<<31)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ParseErrorBody pulls the message out of an error answer: the
// {"error":{"message","type","code"}} of OpenAI and Anthropic, the
// {"error":"..."} of Ollama and TEI, FastAPI's {"detail":...}, a bare
// {"message":...}, or else the start of the body as text.
func ParseErrorBody(raw []byte) (msg, typ, code string) {
	var env struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		Msg    string          `json:"message"`
	}
	if json.Unmarshal(raw, &env) == nil {
		var s string
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		switch {
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &s) == nil && s != "":
			return s, "", ""
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &obj) == nil && obj.Message != "":
			code := strings.Trim(string(obj.Code), `"`)
			if code == "null" {
				code = ""
			}
			return obj.Message, obj.Type, code
		case len(env.Detail) > 0:
			if json.Unmarshal(env.Detail, &s) == nil {
				return s, "", ""
			}
			return Clip(string(env.Detail), 300), "", ""
		case env.Msg != "":
			return env.Msg, "", ""
		}
	}
	return Clip(strings.TrimSpace(string(raw)), 300), "", ""
}

// Clip shortens s to at most n bytes, on a UTF-8 boundary, marking the cut
// with an ellipsis.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// Redactor returns a replacer that swaps every non-empty secret for
// "[redacted]".
func Redactor(secrets ...string) *strings.Replacer {
	var pairs []string
	for _, s := range secrets {
		if s != "" {
			pairs = append(pairs, s, "[redacted]")
		}
	}
	return strings.NewReplacer(pairs...)
}

// DisplayURL is raw as messages show it: without a password, with any query
// string shown as "?..." (some endpoints take a key there), or
// "(invalid URL)" when it does not parse (its text could hold anything).
func DisplayURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "(invalid URL)"
	}
	return displayParsed(u)
}

func displayParsed(u *url.URL) string {
	v := *u
	if v.RawQuery != "" {
		v.RawQuery = "..."
	}
	v.Fragment, v.RawFragment = "", ""
	return v.Redacted()
}

// readLimited reads all of r, or fails with ErrTooLarge past limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return raw, err
	}
	if int64(len(raw)) > limit {
		return raw[:limit], fmt.Errorf("over %d bytes: %w", limit, ErrTooLarge)
	}
	return raw, nil
}
