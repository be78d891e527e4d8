package store

import (
	"context"
	"errors"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

// MsgUnreachable is what a caller is told when the database cannot be
// reached: what is wrong, and what the operator should check.
const MsgUnreachable = "the database is unreachable: check that PostgreSQL is running and that QUERYD_DATABASE_URL (or DATABASE_URL) points at it; retry in a moment"

// CallerError turns a failed store call into what the caller is told. what says
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
func CallerError(ctx context.Context, err error, what string) error {
	switch {
	case err == nil:
		return nil
	case qerr.KindOf(err) != qerr.Internal:
		return err
	case IsBadText(err):
		return qerr.Invalidf("arguments", "hold characters the database cannot read (a NUL byte, or bytes that are not UTF-8)")
	case IsUnreachable(err):
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
