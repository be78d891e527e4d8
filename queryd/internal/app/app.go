// Package app is queryd's command line.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
	"github.com/stratakb/stratakb/queryd/internal/server"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

const usage = `queryd: StrataKB's query daemon

Usage:
  queryd serve                                     serve MCP (streamable HTTP at /mcp) and the HTTP JSON API
  queryd mcp                                       serve MCP over stdin/stdout, for clients that spawn the server
  queryd search QUERY [--layers a,b] [--top-k N] [--filter KEY=VALUE]... [--explain] [--local]
                                                  search the layers, print JSON results
  queryd ask QUESTION [--layers a,b] [--top-k N] [--detailed] [--mode extractive|grounded] [--json] [--local]
                                                  answer a question: JSON, or a readable answer on a terminal
  queryd receipt ID [--json]                       show a receipt, each quote marked >>> <<< in its passage
  queryd mcp-config [--http] [--name NAME]         print a ready-to-paste MCP client configuration

--layer is another spelling of --layers. Run 'queryd VERB -h' for a verb's flags.
search and ask go to the queryd serve at QUERYD_ADDR when one answers
(loopback only; QUERYD_URL names another, QUERYD_TOKEN is its bearer
token), else run in-process; --local always runs in-process.

Configuration comes from the environment (README's configuration table
lists every variable): QUERYD_DATABASE_URL (else DATABASE_URL, else
var/db.env from 'make db-start'), LOG_LEVEL, QUERYD_ALLOW_OWNER, the
EMBEDDING_* variables, HYBRID_KEYWORD_SLOTS, and for serve QUERYD_ADDR
(default ` + server.DefaultAddr + `), QUERYD_TOKENS ("reader:TOKEN,admin:TOKEN"),
QUERYD_TOKEN_FILE, QUERYD_ALLOWED_ORIGINS, QUERYD_MAX_REQUEST_BYTES,
QUERYD_REQUEST_TIMEOUT, QUERYD_MAX_CONCURRENT_SEARCHES, QUERYD_QUEUE_WAIT,
QUERYD_SHUTDOWN_TIMEOUT, QUERYD_READ_TIMEOUT, QUERYD_MAX_CONNS_PER_CLIENT,
LEARNING_ENABLED, LEARNING_STORE_RAW_QUERIES, ANSWER_TOKEN_BUDGET,
RERANKING_ENABLED, RERANKING_MODEL and the QUERY_REWRITE_* variables.
Booleans take true/false, 1/0, yes/no or on/off; durations "30s", "2m" or
whole seconds ("30").
`

// Main runs queryd and returns the exit code: 0 on success, 1 on failure, 2
// for a usage error.
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := Run(ctx, args, getenv, stdin, stdout, stderr)
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "queryd: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "queryd: %v\n", err)
		return 1
	}
}

// Run runs one verb.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return usagef("a verb is required")
		}
		return nil
	}
	switch args[0] {
	case "search":
		return search(ctx, args[1:], getenv, stdout, stderr)
	case "ask":
		return askVerb(ctx, args[1:], getenv, stdout, stderr)
	case "receipt":
		return receiptVerb(ctx, args[1:], getenv, stdout, stderr)
	case "serve":
		return serve(ctx, args[1:], getenv, stderr, false, nil, nil)
	case "mcp":
		return serve(ctx, args[1:], getenv, stderr, true, stdin, stdout)
	case "mcp-config":
		return mcpConfigVerb(args[1:], getenv, stdout, stderr)
	default:
		return usagef("unknown verb %q (try 'queryd help')", args[0])
	}
}

func search(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("search", stderr)
	layers := defineLayers(fs, "comma-separated layer names (default: all)")
	topK := fs.Int("top-k", searchpkg.DefaultTopK, "number of results, 1 to 50")
	explain := fs.Bool("explain", false, "show how each result was found and placed")
	local := fs.Bool("local", false, "run in-process even when a queryd serve answers at QUERYD_ADDR")
	filter := map[string]string{}
	fs.Func("filter", "metadata filter KEY=VALUE, exact match (repeatable), e.g. --filter page=3", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		filter[strings.TrimSpace(k)] = val
		return nil
	})
	pos, err := config.ParseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	// 0 would mean "the default" to Validate; on the command line it is a
	// mistake.
	if *topK < 1 || *topK > searchpkg.MaxTopK {
		return usagef("search: top_k: must be from 1 to %d, got %d (--top-k)", searchpkg.MaxTopK, *topK)
	}
	req := searchpkg.Request{Query: strings.Join(pos, " "), TopK: *topK, Explain: *explain}
	if len(filter) > 0 {
		req.MetadataFilter = filter
	}
	req.Layers = layers.names()
	if err := req.Validate(); err != nil {
		return usagef("search: %v", err)
	}
	var remote error
	if !*local {
		out, err := tryRemote(ctx, getenv, "search", "/v1/search", req)
		var el errLocal
		if !errors.As(err, &el) {
			if err != nil {
				return err
			}
			var resp searchpkg.Response
			derr := json.Unmarshal(out, &resp)
			if derr == nil {
				// The server records the search for its learning loop;
				// the command line prints what it prints in-process,
				// which records none.
				resp.InteractionID = ""
				return printJSON(stdout, &resp)
			}
			el = errLocal{fmt.Errorf("the server's answer: %w", derr)}
		}
		remote = el
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	logLocal(stderr, cfg, remote)
	// The model loads while the database is opened (issue 31: the
	// command line's time is mostly the model's load).
	cfg.Embed.FewCalls = true // one query, then the process exits
	q := newQueryEmbedder(cfg.Embed, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	defer q.close()
	q.warm()
	st, err := openCorpus(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	resp, err := searchpkg.NewWithOptions(st, q.options(cfg)).Search(ctx, req)
	if qerr.KindOf(err) == qerr.Invalid {
		return usagef("search: %v", err)
	}
	if err != nil {
		return err
	}
	return printJSON(stdout, resp)
}

// logLocal logs, at debug level, why a verb runs in-process rather than
// on a running queryd serve (nil: --local).
func logLocal(stderr io.Writer, cfg Config, why error) {
	if why == nil || cfg.LogLevel > slog.LevelDebug {
		return
	}
	slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel})).Debug("no queryd serve used", slog.String("reason", why.Error()))
}

// openCorpus opens the read handle for a command-line verb, checking the
// role as queryd serve does.
func openCorpus(ctx context.Context, cfg Config) (*store.Corpus, error) {
	c, err := store.OpenCorpus(ctx, cfg.ReadDatabaseURL, cfg.corpusOptions(store.WithCheck(roleCheck(cfg.AllowOwner, nil)), nil)...)
	if aerr := authError(err, cfg); aerr != nil {
		return nil, aerr
	}
	if store.IsUnreachable(err) {
		return nil, fmt.Errorf("the database is unreachable (is it running? 'make db-start' starts one): %w", err)
	}
	return c, err
}

// printJSON writes a tool's response as the command-line verbs print it:
// indented, with <, > and & as they are.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// layerList reads a --layers flag: comma-separated names, blanks dropped;
// nil when it names none.
func layerList(flag string) []string {
	var out []string
	for _, l := range strings.Split(flag, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
