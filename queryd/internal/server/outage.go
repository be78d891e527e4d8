package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// outageSummaryEvery is how often, while the database is down, the log
// says how many requests were refused since it last said so.
const outageSummaryEvery = 5 * time.Second

// outage keeps the log of a database outage to a few lines: one when it
// begins, a summary of the refused requests every outageSummaryEvery while
// it lasts, and one when a request reaches the database again. Logging each
// refused request wrote 36 MB in 8 s under 8 clients (issue 32, item 11).
type outage struct {
	every time.Duration
	now   func() time.Time

	mu          sync.Mutex
	down        bool
	since       time.Time // when the outage began
	lastSummary time.Time
	refused     int // since the last summary
	total       int // since the outage began
}

func newOutage() *outage { return &outage{every: outageSummaryEvery, now: time.Now} }

// refusal reports whether err says the database cannot be reached, and
// counts it toward the outage's log; the caller then logs nothing of its
// own for the request.
func (o *outage) refusal(ctx context.Context, log *slog.Logger, err error) bool {
	if err == nil || !store.IsUnreachable(err) {
		return false
	}
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refused++
	o.total++
	if !o.down {
		o.down, o.since, o.lastSummary = true, now, now
		o.refused = 0
		log.LogAttrs(ctx, slog.LevelWarn, "the database is unreachable: refusing requests until it is back; a count of them follows every few seconds",
			slog.String(logError, logArg(err.Error(), maxLoggedError, true)),
			slog.String("summary_every", o.every.String()))
		return true
	}
	if now.Sub(o.lastSummary) >= o.every {
		log.LogAttrs(ctx, slog.LevelWarn, "the database is still unreachable",
			slog.Int("refused", o.refused), slog.Int("refused_total", o.total),
			slog.String("down_for", now.Sub(o.since).Round(time.Millisecond).String()))
		o.lastSummary, o.refused = now, 0
	}
	return true
}

// reached ends an outage: a request got through to the database.
func (o *outage) reached(ctx context.Context, log *slog.Logger) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down {
		return
	}
	log.LogAttrs(ctx, slog.LevelInfo, "the database is reachable again",
		slog.Int("refused", o.refused), slog.Int("refused_total", o.total),
		slog.String("down_for", o.now().Sub(o.since).Round(time.Millisecond).String()))
	o.down, o.refused, o.total = false, 0, 0
}
