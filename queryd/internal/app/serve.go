package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/server"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// serve runs `queryd serve` (HTTP) or `queryd mcp` (stdio). Logs go to
// stderr: over stdio, stdout carries the protocol.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, stdio bool, stdin io.Reader, stdout io.Writer) error {
	name := "queryd serve"
	if stdio {
		name = "queryd mcp"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("%s takes no arguments, got %q", name, fs.Arg(0))
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	q := newQueryEmbedder(cfg.Embed, log)
	defer q.close()
	q.warm() // nearly every query needs a vector: load now, in the background
	metrics := server.NewMetrics()
	opts := q.options(cfg)
	opts.Logger = log
	opts.OnCacheHit = metrics.CacheHit
	opts.OnChannel = metrics.ObserveChannel
	db := &lazyStore{url: cfg.DatabaseURL, log: log, opts: opts, allowOwner: cfg.AllowOwner, gate: store.NewGate()}
	defer db.Close()
	// Connect now, so that a wrong URL or a role that could write shows at
	// start; the server comes up when the database is merely down (the
	// prompt and /healthz need no database) and connects on the first call
	// that needs it, checking the role then.
	if _, err := db.get(ctx); errors.Is(err, errWritableRole) {
		return err
	} else if err != nil {
		log.Warn("database not available yet; tools will answer unavailable until it is", slog.String("error", err.Error()))
	}
	srv, err := server.New(cfg.Server, server.Deps{Searcher: db, DB: db, Model: q, Logger: log, Metrics: metrics})
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if stdio {
		return srv.ServeStdio(ctx, stdin, stdout)
	}
	if err := srv.ListenAndServe(ctx); err != nil {
		return err
	}
	log.Info("queryd stopped")
	return nil
}

// lazyStore opens the read-only store on first use and keeps it; until it
// can, searches are unavailable rather than the whole server.
type lazyStore struct {
	url        string
	log        *slog.Logger
	opts       searchpkg.Options
	allowOwner bool
	gate       *store.Gate // backs off reconnecting while the database is down

	mu       sync.Mutex
	st       *store.Store
	searcher *searchpkg.Searcher
}

func (l *lazyStore) get(ctx context.Context) (*searchpkg.Searcher, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.searcher != nil {
		return l.searcher, nil
	}
	st, err := store.Open(ctx, l.url, store.WithGate(l.gate))
	if store.IsUnreachable(err) {
		return nil, searchpkg.Unreachable(err)
	}
	if err != nil {
		return nil, qerr.Unavailablef(err, "the database is not migrated for this queryd, or refused queryd's role (the server log has the error; 'ingestd migrate' applies the migrations)")
	}
	if err := checkRole(ctx, st.Pool(), l.allowOwner); err != nil {
		st.Close()
		if errors.Is(err, errWritableRole) {
			l.log.Error("refusing to search as this database role", slog.String("error", err.Error()))
		}
		return nil, qerr.Unavailablef(err, "queryd's database role is refused")
	}
	l.st, l.searcher = st, searchpkg.NewWithOptions(st, l.opts)
	return l.searcher, nil
}

// Search runs strata_search on the store.
func (l *lazyStore) Search(ctx context.Context, req searchpkg.Request) (*searchpkg.Response, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Search(ctx, req)
}

// Ping checks the database for /healthz.
func (l *lazyStore) Ping(ctx context.Context) error {
	if _, err := l.get(ctx); err != nil {
		return err
	}
	return l.st.Ping(ctx)
}

// Close closes the store when it was opened.
func (l *lazyStore) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		l.st.Close()
	}
}
