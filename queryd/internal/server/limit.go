package server

import (
	"context"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

// limiter bounds the searches that run at once. An excess request waits up
// to wait for a slot, then is refused as unavailable, which HTTP answers
// with 503 and Retry-After.
type limiter struct {
	slots chan struct{}
	wait  time.Duration
}

func newLimiter(n int, wait time.Duration) *limiter {
	return &limiter{slots: make(chan struct{}, n), wait: wait}
}

// errBusy is the caller-facing refusal when every slot stays taken.
var errBusy = qerr.Unavailablef(nil, "the server is busy with other searches; retry in a moment")

// acquire takes a slot; the returned function gives it back.
func (l *limiter) acquire(ctx context.Context) (func(), error) {
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	default:
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	case <-t.C:
		return nil, errBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
