package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/stratakb/stratakb/queryd/internal/learning"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/server"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/verify"
)

// serve runs `queryd serve` (HTTP) or `queryd mcp` (stdio). Logs go to
// stderr: over stdio, stdout carries the protocol.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, stdio bool, stdin io.Reader, stdout io.Writer) error {
	verb := "serve"
	if stdio {
		verb = "mcp"
	}
	name := "queryd " + verb
	fs := newFlagSet(verb, stderr)
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
	opts.RawQueries = cfg.Server.RawQueries
	// Neither handle connects yet: the server comes up while the database
	// is down (the prompt and /healthz need no database), and each handle
	// connects, checking the schema and queryd's role, on the first call
	// that needs it. Ping them now, so that a role that could write shows
	// at start.
	check := store.WithCheck(roleCheck(cfg.AllowOwner, log))
	corpus, err := store.NewCorpus(cfg.ReadDatabaseURL, cfg.corpusOptions(check, log)...)
	if err != nil {
		return fmt.Errorf("configuration: QUERYD_READ_DATABASE_URL or QUERYD_DATABASE_URL: %w", err)
	}
	defer corpus.Close()
	ledger, err := store.NewLedger(cfg.DatabaseURL, check, cfg.receiptKeyOption(log))
	if err != nil {
		return fmt.Errorf("configuration: QUERYD_DATABASE_URL: %w", err)
	}
	defer ledger.Close()
	db := databases{corpus, ledger}
	if err := db.Ping(ctx); errors.Is(err, errWritableRole) {
		return err
	} else if aerr := authError(err, cfg); aerr != nil {
		log.Error("database refused queryd's password; tools will answer unavailable until it is fixed", slog.String("error", aerr.Error()))
	} else if err != nil {
		log.Warn("database not available yet; tools will answer unavailable until it is", slog.String("error", err.Error()))
	}
	if cfg.LearningEnabled {
		opts.Recorder = ledger
		opts.Affinities = corpus
	}
	asker, err := newAsker(corpus, ledger, ledger, q, cfg, log)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	verifier := verify.New(verify.Options{Spans: corpus, Receipts: ledger, Budget: cfg.AnswerTokenBudget,
		RawQueries: cfg.Server.RawQueries, Logger: log})
	deps := server.Deps{Searcher: searchpkg.NewWithOptions(corpus, opts), Asker: asker, Verifier: verifier,
		Explorer: corpus, DB: db, Model: q, Logger: log, Metrics: metrics}
	if cfg.LearningEnabled {
		deps.Learner = learning.New(learning.Options{Ledger: ledger, Layers: corpus, Learned: ledger,
			RawQueries: cfg.Server.RawQueries, Logger: log})
	}
	srv, err := server.New(cfg.Server, deps)
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

// databases are queryd's handles, for /healthz: the database is up when
// both answer (they are one server unless QUERYD_READ_DATABASE_URL names a
// replica).
type databases []interface{ Ping(context.Context) error }

// ReadingFromPrimary reports whether a handle's reads have gone to the
// primary because its read replica does not answer.
func (d databases) ReadingFromPrimary() bool {
	for _, h := range d {
		if r, ok := h.(interface{ ReadingFromPrimary() bool }); ok && r.ReadingFromPrimary() {
			return true
		}
	}
	return false
}

// Ping pings each handle; the first error wins.
func (d databases) Ping(ctx context.Context) error {
	for _, h := range d {
		if err := h.Ping(ctx); err != nil {
			return err
		}
	}
	return nil
}
