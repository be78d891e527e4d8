package search

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// MsgUnreachable is what a caller is told when the database cannot be
// reached: what is wrong, and what the operator should check.
const MsgUnreachable = "the database is unreachable: check that PostgreSQL is running and that QUERYD_DATABASE_URL (or DATABASE_URL) points at it; retry in a moment"

// dbError turns a failed store call into what the caller is told. what says
// which step failed, as in "run the full-text search".
//   - An error that already has a kind keeps it.
//   - Characters PostgreSQL refuses (SQLSTATE 22021, 22P05) are the
//     caller's: invalid arguments. Validate refuses NUL bytes and bytes that
//     are not UTF-8 before any query; this catches whatever else the
//     database finds.
//   - A database that cannot be reached is unavailable, and says so.
//   - When the request itself ran out of time or was cancelled, the error
//     is returned as it is, and the server says which.
//   - Anything else is unavailable, naming the step; the server log has the
//     database's error.
func dbError(ctx context.Context, err error, what string) error {
	switch {
	case err == nil:
		return nil
	case qerr.KindOf(err) != qerr.Internal:
		return err
	case store.IsBadText(err):
		return qerr.Invalidf("arguments", "hold characters the database cannot read (a NUL byte, or bytes that are not UTF-8)")
	case store.IsUnreachable(err):
		return Unreachable(err)
	case ctx.Err() != nil:
		return err
	default:
		return qerr.Unavailablef(err, "the database could not %s; retry in a moment (the server log has the error)", what)
	}
}

// Unreachable is the caller's error for a database that cannot be reached:
// MsgUnreachable, and when the reconnect gate refused the call, the time
// until its next attempt as RetryAfter.
func Unreachable(err error) error {
	e := &qerr.Error{Kind: qerr.Unavailable, Msg: MsgUnreachable, Err: err}
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		e.RetryAfter = ra.RetryAfter()
	}
	return e
}

// maxEcho bounds how much of an argument an error message repeats.
const maxEcho = 80

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// checkText refuses a string PostgreSQL cannot take as text: bytes that are
// not UTF-8, or a NUL byte (PostgreSQL text cannot hold one: SQLSTATE
// 22021). what names the place, as in "entry 2".
func checkText(arg, what, s string) error {
	if what != "" {
		what += " "
	}
	if !utf8.ValidString(s) {
		return qerr.Invalidf(arg, "%sis not valid UTF-8", what)
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return qerr.Invalidf(arg, "%sholds a NUL character (\\u0000) at byte %d; remove it", what, i)
	}
	return nil
}

var (
	urlPattern    = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)
	secretPattern = regexp.MustCompile(`(?i)\b(api[_-]?key|token|password|secret)(\s*[=:]\s*)[^\s,;"')]+`)
	bearerPattern = regexp.MustCompile(`(?i)\b(bearer\s+)[^\s,;"')]+`)
	skKeyPattern  = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{6,}`)
	pathPattern   = regexp.MustCompile(`(?:/[^\s/:;,"'()=]+){2,}`)
)

// redact prepares an error for a response that any reader sees: it removes
// credentials and query strings from URLs, values of keys, tokens and
// passwords, and shortens absolute paths to their last element. The server
// log keeps the whole error.
func redact(s string) string {
	// URLs are set aside first, so that their paths are not taken for
	// file paths.
	var urls []string
	s = urlPattern.ReplaceAllStringFunc(s, func(raw string) string {
		r := "[url]"
		if u, err := url.Parse(raw); err == nil {
			hadUser := u.User != nil
			u.User = nil
			if u.RawQuery != "" {
				u.RawQuery = "***"
			}
			r = u.String()
			if hadUser {
				r = strings.Replace(r, "://", "://***@", 1)
			}
		}
		urls = append(urls, r)
		return fmt.Sprintf("\x00%d\x00", len(urls)-1)
	})
	s = secretPattern.ReplaceAllString(s, "$1$2***")
	s = bearerPattern.ReplaceAllString(s, "$1***")
	s = skKeyPattern.ReplaceAllString(s, "sk-***")
	s = pathPattern.ReplaceAllStringFunc(s, shortPath)
	for i, u := range urls {
		s = strings.Replace(s, fmt.Sprintf("\x00%d\x00", i), u, 1)
	}
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func shortPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return p
	}
	return "…" + p[i:]
}
