// Package app is ingestd's command line: it parses the verbs and flags and
// runs them against the database and River.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // something failed: a file, the database
	exitUsage   = 2 // the command line is wrong
	pollEvery   = 200 * time.Millisecond
	logEvery    = 3 * time.Second // progress lines when stdout is not a terminal
	stopTimeout = 30 * time.Second
)

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// errSomeFailed reports that the command ran but some files failed.
var errSomeFailed = errors.New("some files failed")

const usage = `ingestd: StrataKB's ingestion daemon

Usage:
  ingestd add DIR --layer NAME [flags] [--wait]   register a folder as a layer and ingest it
  ingestd ingest [--layer NAME] [--allow-deletes] [--wait]
                                                  re-ingest one layer or all of them
  ingestd reembed --layer NAME --model MODEL [--wait]
                                                  embed a layer with another model; the old
                                                  vectors serve until the new ones are complete
  ingestd status [--layer NAME] [--failed]        per-layer and per-file state
  ingestd layers [--layer NAME]                   each layer's settings, counts and last run
  ingestd set --layer NAME [--description TEXT] [--route PATTERN]... [--archived GLOB]...
                                                  change a layer's settings without re-adding it
  ingestd remove --layer NAME [--yes]             delete a layer and everything ingested from it
  ingestd serve                                   run the workers until stopped
  ingestd migrate                                 apply database migrations

Run 'ingestd VERB -h' for a verb's flags. Configuration comes from the
environment (README's configuration table lists every variable):
DATABASE_URL (default: var/db.env from 'make db-start'), INGEST_WORKERS,
INGEST_MAX_FILE_MB, INGEST_SCHEDULE, LOG_LEVEL and the EMBEDDING_* variables.
`

// Main runs ingestd with args and returns the process exit code.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return exitCode(Run(ctx, args, getenv, stdout, stderr), stderr)
}

// exitCode is the exit code for Run's error, which it writes to stderr.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ingestd: %v\n", err)
		return exitUsage
	case errors.Is(err, errSomeFailed):
		return exitFailed
	default:
		fmt.Fprintf(stderr, "ingestd: %v\n", err)
		return exitFailed
	}
}

// Run runs one verb, reading answers to its questions from os.Stdin.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return RunIO(ctx, args, getenv, os.Stdin, stdout, stderr)
}

// RunIO is Run reading answers (ingestd remove's "delete?") from stdin.
func RunIO(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return usagef("a verb is required")
		}
		return nil
	}
	verb, rest := args[0], args[1:]
	if wantsHelp(rest) {
		// -h needs no configuration: each verb prints its usage before it
		// reads any.
		e := &env{logger: slog.New(slog.DiscardHandler), stdin: stdin, stdout: stdout, stderr: stderr}
		return e.dispatch(ctx, verb, rest)
	}
	switch verb {
	case "add", "ingest", "reembed", "status", "layers", "set", "remove", "serve", "migrate":
	default:
		return usagef("unknown verb %q (try 'ingestd help')", verb)
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	e := &env{cfg: cfg, logger: logger, stdin: stdin, stdout: stdout, stderr: stderr}
	return e.dispatch(ctx, verb, rest)
}

// wantsHelp reports whether args ask for a verb's usage.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help", "--h":
			return true
		case "--":
			return false
		}
	}
	return false
}

func (e *env) dispatch(ctx context.Context, verb string, rest []string) error {
	switch verb {
	case "add":
		return e.add(ctx, rest)
	case "ingest":
		return e.ingest(ctx, rest)
	case "reembed":
		return e.reembed(ctx, rest)
	case "status":
		return e.status(ctx, rest)
	case "layers":
		return e.layers(ctx, rest)
	case "set":
		return e.set(ctx, rest)
	case "remove":
		return e.remove(ctx, rest)
	case "serve":
		return e.serve(ctx, rest)
	case "migrate":
		return e.migrate(ctx, rest)
	default:
		return usagef("unknown verb %q (try 'ingestd help')", verb)
	}
}

type env struct {
	cfg    Config
	logger *slog.Logger
	stdin  io.Reader // answers to questions (ingestd remove)
	stdout io.Writer
	stderr io.Writer
	pool   *pgxpool.Pool
	emb    embed.Embedder // loaded by clientConfig, closed by close
	models *embedding.Set // emb and the other models layers use; closed by close
}

// connect opens the pool and migrates the database, as every daemon does at
// start-up.
func (e *env) connect(ctx context.Context) error {
	pcfg, err := poolConfig(e.cfg.DatabaseURL, e.cfg.Workers)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		if role, ok := authFailed(err); ok {
			return fmt.Errorf("password authentication failed for role %q: the password comes from %s; "+
				"check it there (or set DATABASE_URL)", role, e.cfg.DatabaseURLFrom)
		}
		return fmt.Errorf("database unreachable (is it started? 'make db-start'): %w", err)
	}
	if err := jobs.Migrate(ctx, pool); err != nil {
		pool.Close()
		return err
	}
	e.pool = pool
	return nil
}

// authFailed reports whether err is the server refusing the password, and
// for which role.
func authFailed(err error) (role string, ok bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28P01" { // invalid_password
		return "", false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Config != nil {
		return ce.Config.User, true
	}
	return "", true
}

// poolConfig is the pool configuration for url with room for workers jobs
// at once, beside the embed queue's workers (jobs.EmbedWorkers). A job may
// hold two connections (an embed job keeps one for its layer's advisory
// lock, which it tries and never waits on, and queries through another),
// and River needs its own to fetch and complete jobs: with pgxpool's
// default of 4 connections on 2 CPUs, 4 workers running 4 embed jobs once
// deadlocked. A pool_max_conns in the URL is kept as given.
func poolConfig(url string, workers int) (*pgxpool.Config, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		pcfg.MaxConns = max(pcfg.MaxConns, int32(2*workers+4))
	}
	return pcfg, nil
}

func (e *env) close() {
	if e.pool != nil {
		e.pool.Close()
	}
	if e.models != nil {
		e.models.Close() // closes emb too
	} else if e.emb != nil {
		_ = embed.Close(e.emb)
	}
}

// clientConfig sets up the embedding model for workers. The local model is
// loaded only when an embed job first has chunks to embed, so a run that
// changes nothing never loads it. When it cannot be loaded, ingestion goes
// on: chunks are stored and their vectors stay pending until a process with
// a working model fills them in.
func (e *env) clientConfig(ctx context.Context, workers int) jobs.ClientConfig {
	cc := jobs.ClientConfig{Workers: workers, Logger: quietLogger(e.logger), Pipeline: e.pipeline(),
		EmbedBatch: e.cfg.Embed.BatchSize}
	if workers == 0 {
		return cc
	}
	emb, err := embedding.Lazy(e.cfg.Embed, e.logger, func(err error) {
		e.logger.Warn("embedding model unavailable: documents are stored and their vectors stay pending", "error", err)
	})
	if err == nil {
		var mi embed.ModelInfo
		if mi, err = embed.ResolveModel(ctx, emb); err == nil && mi.Name != "" {
			e.emb = emb
			cc.Vectorizer = jobs.SingleVector(emb)
			cc.Models = e.modelsFor(emb)
			return cc
		}
		_ = embed.Close(emb)
	}
	cc.VectorizerErr = err
	cc.Models = e.modelsFor(nil)
	e.logger.Warn("embedding model unavailable: documents are stored and their vectors stay pending", "error", err)
	return cc
}

func (e *env) pipeline() jobs.Pipeline {
	return jobs.StandardPipeline(parsers.Options{MaxFileSize: int64(e.cfg.MaxFileMB) << 20})
}

func (e *env) migrate(ctx context.Context, args []string) error {
	fs := newFlagSet("migrate", e.stderr)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("migrate takes no arguments")
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	fmt.Fprintln(e.stdout, "database is up to date")
	return nil
}

// parseArgs parses flags that may come before or after positional arguments
// (ingestd add DIR --layer NAME); positionals end up in fs.Args().
func parseArgs(fs *flag.FlagSet, args []string) error {
	pos, err := config.ParseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// listFlag is a repeatable or comma-separated string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// preset is a named bundle of layer defaults.
type preset struct {
	answerMode schema.AnswerMode
	chunkSize  int
}

var presets = map[string]preset{
	"docs":      {answerMode: schema.DefaultAnswerMode, chunkSize: schema.DefaultChunkSize},
	"contracts": {answerMode: schema.AnswerExtractive, chunkSize: 1200},
}

func (e *env) add(ctx context.Context, args []string) error {
	fs := newFlagSet("add", e.stderr)
	name := layerFlag(fs, "layer name: "+jobs.LayerNameRule)
	desc := fs.String("description", "", "what the layer holds (used for routing)")
	mode := fs.String("answer-mode", "", fmt.Sprintf("%s or %s", schema.AnswerGrounded, schema.AnswerExtractive))
	size := fs.Int("chunk-size", 0, fmt.Sprintf("chunk size in bytes of text (%d-%d; default %d, preset contracts %d)",
		schema.MinChunkSize, schema.MaxChunkSize, schema.DefaultChunkSize, presets["contracts"].chunkSize))
	presetName := fs.String("preset", "", "defaults bundle: docs or contracts")
	wait := fs.Bool("wait", false, "wait for the ingest to finish and print a summary")
	modelName := fs.String("model", "", "embedding model: "+embed.LocalModelNames()+" (default: the layer's own, or for a new layer the configured one)")
	allowDeletes := fs.Bool("allow-deletes", false, "let this run delete more than half of the layer's documents")
	pushed := fs.Bool("pushed", false, "the layer is pushed from elsewhere (a CI runner): the schedule skips it (stored; --pushed=false undoes it)")
	schedDeletes := fs.Bool("schedule-allow-deletes", false, "let scheduled runs delete more than half of the layer's documents (stored)")
	var include, exclude, archived, routing listFlag
	fs.Var(&include, "include", "glob of files to ingest, relative to DIR (repeatable)")
	fs.Var(&exclude, "exclude", "glob of files to leave out (repeatable)")
	fs.Var(&archived, "archived", "glob of files that are archived (repeatable)")
	fs.Var(&routing, "route", "routing pattern for questions (repeatable)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("add needs exactly one folder: ingestd add DIR --layer NAME")
	}
	if *name == "" {
		return usagef("add: --layer NAME is required")
	}
	if err := checkLayerName("add", *name); err != nil {
		return err
	}
	dir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return usagef("add: folder %q: %v", fs.Arg(0), err)
	}
	if st, err := os.Stat(dir); err != nil {
		return usagef("add: folder %s does not exist or cannot be read: %v", fs.Arg(0), errors.Unwrap(err))
	} else if !st.IsDir() {
		return usagef("add: %s is not a folder", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, p := range routing {
		if _, err := schema.RoutePattern(p); err != nil {
			return usagef("add: --route: %v", err)
		}
	}

	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()

	layer := jobs.Layer{Name: *name, AnswerMode: presets["docs"].answerMode, ChunkSize: presets["docs"].chunkSize}
	if old, err := jobs.GetLayer(ctx, e.pool, *name); err == nil {
		layer = old
	} else if !errors.Is(err, jobs.ErrLayerNotFound) {
		return err
	}
	layer.Root = dir
	if set["preset"] {
		p, ok := presets[*presetName]
		if !ok {
			return usagef("add: --preset must be one of docs, contracts")
		}
		layer.Preset, layer.AnswerMode, layer.ChunkSize = *presetName, p.answerMode, p.chunkSize
	}
	if set["description"] {
		layer.Description = *desc
	}
	if set["answer-mode"] {
		m, err := schema.ParseAnswerMode(*mode)
		if err != nil {
			return usagef("add: --answer-mode must be %s or %s", schema.AnswerGrounded, schema.AnswerExtractive)
		}
		layer.AnswerMode = m
	}
	if set["chunk-size"] {
		if *size < schema.MinChunkSize || *size > schema.MaxChunkSize {
			return usagef("add: --chunk-size must be from %d to %d", schema.MinChunkSize, schema.MaxChunkSize)
		}
		layer.ChunkSize = *size
	}
	if set["include"] {
		layer.Include = include
	}
	if set["exclude"] {
		layer.Exclude = exclude
	}
	if set["archived"] {
		layer.Archived = archived
	}
	if set["route"] {
		layer.RoutingPatterns = routing
	}
	if set["pushed"] {
		layer.Pushed = *pushed
	}
	if set["schedule-allow-deletes"] {
		layer.ScheduleAllowDeletes = *schedDeletes
	}
	model, changed, err := e.layerModel(layer, *modelName)
	if err != nil {
		return err
	}
	old := layer.EmbeddingModel
	layer.EmbeddingModel = model
	layer, err = jobs.UpsertLayer(ctx, e.pool, layer)
	if err != nil {
		return asUsage("add", err)
	}
	fmt.Fprintf(e.stdout, "layer %s: %s\n", layer.Name, layer.Root)
	if changed {
		fmt.Fprintf(e.stdout, "layer %s: re-embedding with %s; queries use the vectors of %s until every chunk has one\n", layer.Name, model, old)
	}
	err = e.runIngest(ctx, []jobs.Layer{layer}, *wait, *allowDeletes)
	if err == nil && changed && !*wait {
		// The run embeds only the documents it changes: sweep the rest.
		err = e.embedLayer(ctx, layer, model, false)
	}
	return err
}

func (e *env) ingest(ctx context.Context, args []string) error {
	fs := newFlagSet("ingest", e.stderr)
	name := layerFlag(fs, "layer to re-ingest (default: all)")
	wait := fs.Bool("wait", false, "wait for the ingest to finish and print a summary")
	allowDeletes := fs.Bool("allow-deletes", false, "let this run delete more than half of a layer's documents")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("ingest takes no arguments besides flags")
	}
	if err := checkLayerName("ingest", *name); err != nil {
		return err
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	var layers []jobs.Layer
	if *name != "" {
		l, err := jobs.GetLayer(ctx, e.pool, *name)
		if errors.Is(err, jobs.ErrLayerNotFound) {
			return usagef("ingest: no layer named %q ('ingestd status' lists them)", *name)
		}
		if err != nil {
			return err
		}
		layers = []jobs.Layer{l}
	} else {
		all, err := jobs.ListLayers(ctx, e.pool)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			fmt.Fprintln(e.stdout, "no layers yet: add one with 'ingestd add DIR --layer NAME'")
			return nil
		}
		// Like the schedule, a re-ingest of every layer leaves pushed layers
		// to the machine that pushes them; --layer still runs one.
		for _, l := range all {
			if l.Pushed {
				fmt.Fprintf(e.stdout, "layer %s: pushed from elsewhere, skipped ('ingestd ingest --layer %s' runs it here)\n", l.Name, l.Name)
				continue
			}
			layers = append(layers, l)
		}
		if len(layers) == 0 {
			return nil
		}
	}
	return e.runIngest(ctx, layers, *wait, *allowDeletes)
}

// runIngest starts one run per layer. With wait, it works the jobs in this
// process (so no separate 'ingestd serve' is needed), shows progress, and
// prints a summary per layer.
func (e *env) runIngest(ctx context.Context, layers []jobs.Layer, wait, allowDeletes bool) error {
	workers := 0
	if wait {
		workers = e.cfg.Workers
	}
	cc := e.clientConfig(ctx, workers)
	// Once this run's layers are done, the embedding of other layers that
	// this process picked up meanwhile is handed back after the batch in
	// flight, so that stopping does not wait for another layer's backlog.
	stopping := make(chan struct{})
	cc.Stopping = stopping
	var pres *jobs.Presence
	if wait {
		// Registering takes over the jobs a killed earlier run left running.
		p, err := jobs.Register(ctx, e.pool, quietLogger(e.logger))
		if err != nil {
			return err
		}
		defer p.Close(ctx)
		pres, cc.ID = p, p.ClientID
	}
	client, err := jobs.NewClient(e.pool, cc)
	if err != nil {
		return err
	}
	runs := make([]int64, len(layers))
	for i, l := range layers {
		opt := jobs.RunOptions{Trigger: "cli", AllowDeletes: allowDeletes}
		if pres != nil {
			opt.WorkerID = pres.ClientID
		}
		if runs[i], err = jobs.StartIngestWith(ctx, e.pool, client, l.ID, opt); err != nil {
			return err
		}
	}
	if !wait {
		for i, l := range layers {
			fmt.Fprintf(e.stdout, "layer %s: ingest run %d queued; 'ingestd serve' works it, 'ingestd status --layer %s' shows it\n", l.Name, runs[i], l.Name)
		}
		return nil
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	defer func() {
		close(stopping)
		stopClient(client)
	}()
	failed := false
	for i, l := range layers {
		p, err := e.waitRun(ctx, l, runs[i])
		if err != nil {
			return err
		}
		empty, err := e.summary(ctx, l, p)
		if err != nil {
			return err
		}
		if empty {
			failed = true
		}
		if model := l.LayerModel(defaultModel(cc)); model != "" && p.Status != schema.RunFailed {
			if err := e.waitVectors(ctx, client, l, model); err != nil {
				return err
			}
		}
		if p.Status == schema.RunFailed || p.Failed > 0 {
			failed = true
		}
	}
	if failed {
		return errSomeFailed
	}
	return nil
}

// defaultModel is the configured model's vector name, "" when it is not
// available.
func defaultModel(cc jobs.ClientConfig) string {
	if cc.Vectorizer == nil {
		return ""
	}
	return cc.Vectorizer.Model().Name
}

func stopClient(client *river.Client[pgx.Tx]) {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := client.Stop(ctx); err != nil {
		_ = client.StopAndCancel(context.Background())
	}
}

// quietLogger keeps River's own info lines out of the CLI's output.
func quietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{l.Handler(), slog.LevelWarn})
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(a), h.min}
}

func (h levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(n), h.min}
}
