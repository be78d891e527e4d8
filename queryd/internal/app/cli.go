package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratakb/stratakb/internal/config"
)

// verbUsage is each verb's synopsis and what it does, printed by 'queryd
// VERB -h' above its flags.
var verbUsage = map[string]config.Usage{
	"search": {"queryd search QUERY [--layers a,b] [--top-k N] [--filter KEY=VALUE]... [--explain] [--local]",
		"Searches the layers (all, or those --layers or --layer names) and prints\nstrata_search's JSON response. A queryd serve answering at QUERYD_ADDR\n(loopback; or QUERYD_URL, with QUERYD_TOKEN) runs it; else it runs here."},
	"ask": {"queryd ask QUESTION [--layers a,b] [--top-k N] [--detailed] [--mode extractive|grounded] [--json] [--local]",
		"Answers a question (strata_ask): JSON when piped, a readable answer with\ncitations on a terminal. --layer is another spelling of --layers. A queryd\nserve answering at QUERYD_ADDR (loopback; or QUERYD_URL, with QUERYD_TOKEN)\nruns it; else it runs here."},
	"receipt": {"queryd receipt ID [--json]",
		"Shows a receipt: the draft, each passage as read with its quotes marked\n>>> <<<, and whether it changed since."},
	"serve": {"queryd serve",
		"Serves MCP (streamable HTTP at /mcp) and the HTTP JSON API at QUERYD_ADDR\n(default 127.0.0.1:8377) until SIGINT or SIGTERM. It takes no arguments;\nthe environment configures it ('queryd help' lists the variables)."},
	"mcp": {"queryd mcp",
		"Serves MCP over stdin and stdout, for a client that starts the server\nitself. It takes no arguments; 'queryd mcp-config' prints a client\nconfiguration that starts it."},
	"mcp-config": {"queryd mcp-config [--http] [--name NAME]",
		"Prints a ready-to-paste MCP client configuration (the \"mcpServers\" JSON of\nClaude Desktop, Claude Code, Cursor and others): by default one that starts\nthis queryd over stdio, with absolute paths; with --http one for the\nstreamable HTTP endpoint of 'queryd serve' at QUERYD_ADDR, with a placeholder\nfor the token."},
}

// newFlagSet returns verb's flag set (config.NewFlagSet): -h prints its
// usage.
func newFlagSet(verb string, out io.Writer) *flag.FlagSet {
	return config.NewFlagSet("queryd", verb, verbUsage, out)
}

// layersFlag is --layers a,b, also spelled --layer (ingestd's spelling),
// repeatable: comma-separated names, blanks dropped.
type layersFlag []string

func (l *layersFlag) String() string { return strings.Join(*l, ",") }
func (l *layersFlag) Set(v string) error {
	*l = append(*l, layerList(v)...)
	return nil
}

// defineLayers defines --layers and --layer on fs, into one list.
func defineLayers(fs *flag.FlagSet, help string) *layersFlag {
	var l layersFlag
	fs.Var(&l, "layers", help)
	fs.Var(&l, "layer", "the same as --layers (repeatable)")
	return &l
}

// names returns the layers named, nil when none.
func (l *layersFlag) names() []string {
	if len(*l) == 0 {
		return nil
	}
	return []string(*l)
}

// authError explains a password the server refused: which role, and where
// the password comes from. It returns nil for any other error.
func authError(err error, cfg Config) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28P01" { // invalid_password
		return nil
	}
	role := ""
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Config != nil {
		role = ce.Config.User
	}
	return fmt.Errorf("password authentication failed for role %q: the password comes from %s; "+
		"check it there (or set QUERYD_DATABASE_URL)", role, cfg.DatabaseURLFrom)
}

// databaseURLFrom says where queryd's database URL comes from, by
// config.QuerydDatabaseURL's order.
func databaseURLFrom(getenv func(string) string) string {
	for _, name := range []string{"QUERYD_READ_DATABASE_URL", "QUERYD_DATABASE_URL", "DATABASE_URL"} {
		if getenv(name) != "" {
			return name
		}
	}
	return config.UnderHome(getenv(config.HomeVar), "var/db.env")
}
