// Package qerr is queryd's small error taxonomy. Every error a tool or an
// HTTP handler returns is one of these kinds (or an internal fault); the
// serving layer maps kinds to HTTP status codes in one table and to MCP
// tool-result errors in one place.
package qerr

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error for the caller.
type Kind int

// The kinds. Internal is everything that is not the caller's doing.
const (
	Internal     Kind = iota
	Invalid           // the caller's argument is wrong (HTTP 400)
	Unauthorized      // no or unknown credentials (HTTP 401)
	Forbidden         // the role may not do this (HTTP 403)
	NotFound          // the thing asked for does not exist (HTTP 404)
	Unavailable       // a dependency is down or the server is busy (HTTP 503)
)

// Error is an error of a known kind. Arg names the argument at fault for
// Invalid errors, so clients can point at it.
type Error struct {
	Kind Kind
	Arg  string
	Msg  string
	Err  error
	// RetryAfter, for Unavailable errors, is when a retry may succeed (the
	// database reconnect gate's window); 0 means in a moment.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := e.Msg
	if e.Arg != "" {
		msg = e.Arg + ": " + msg
	}
	if e.Err != nil && e.Kind != Invalid {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Invalidf reports a wrong argument, naming it.
func Invalidf(arg, format string, a ...any) error {
	return &Error{Kind: Invalid, Arg: arg, Msg: fmt.Sprintf(format, a...)}
}

// NotFoundf reports a missing thing.
func NotFoundf(format string, a ...any) error {
	return &Error{Kind: NotFound, Msg: fmt.Sprintf(format, a...)}
}

// Forbiddenf reports a role that may not do this.
func Forbiddenf(format string, a ...any) error {
	return &Error{Kind: Forbidden, Msg: fmt.Sprintf(format, a...)}
}

// Unavailablef reports a dependency that is down or a server that is busy.
func Unavailablef(err error, format string, a ...any) error {
	return &Error{Kind: Unavailable, Msg: fmt.Sprintf(format, a...), Err: err}
}

// KindOf returns the kind of err, Internal when it has none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
