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
	"strconv"
	"strings"

	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Config is queryd's configuration, read from the environment.
type Config struct {
	DatabaseURL string     // DATABASE_URL, else var/db.env written by `make db-start`
	LogLevel    slog.Level // LOG_LEVEL
}

// LoadConfig builds the configuration from the environment; errors name the
// variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var err error
	if c.DatabaseURL, err = config.DatabaseURL(getenv); err != nil {
		return c, err
	}
	if c.LogLevel, err = config.LogLevel(getenv); err != nil {
		return c, err
	}
	return c, nil
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

const usage = `queryd: StrataKB's query daemon

Usage:
  queryd search QUERY [--layers a,b] [--top-k N]   search the layers, print JSON results

Configuration comes from the environment: DATABASE_URL (default: var/db.env
from 'make db-start'), LOG_LEVEL.
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
	default:
		return usagef("unknown verb %q (try 'queryd help')", args[0])
	}
}

// SearchResult is one result as queryd search prints it.
type SearchResult struct {
	Rank       int     `json:"rank"`
	ChunkID    int64   `json:"chunk_id"`
	Ref        string  `json:"ref"`
	Layer      string  `json:"layer"`
	File       string  `json:"file"`
	Lines      string  `json:"lines"`
	Page       *int    `json:"page"`
	ClausePath string  `json:"clause_path"`
	Score      float64 `json:"score"`
	Text       string  `json:"text"`
}

// SearchResponse is what queryd search prints.
type SearchResponse struct {
	Query   string         `json:"query"`
	Layers  []string       `json:"layers,omitempty"`
	Results []SearchResult `json:"results"`
}

func search(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("queryd search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	layersFlag := fs.String("layers", "", "comma-separated layer names (default: all)")
	topK := fs.Int("top-k", 5, "number of results, 1 to 50")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	query := strings.TrimSpace(strings.Join(pos, " "))
	if query == "" {
		return usagef("search: a query is required: queryd search \"QUERY\"")
	}
	if *topK < 1 || *topK > 50 {
		return usagef("search: --top-k must be from 1 to 50, got %s", strconv.Itoa(*topK))
	}
	var layers []string
	for _, l := range strings.Split(*layersFlag, ",") {
		if l = strings.TrimSpace(l); l != "" {
			layers = append(layers, l)
		}
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if len(layers) > 0 {
		known, err := st.LayerNames(ctx)
		if err != nil {
			return err
		}
		for _, l := range layers {
			if !contains(known, l) {
				return usagef("search: --layers: no layer named %q (known: %s)", l, strings.Join(known, ", "))
			}
		}
	}
	hits, err := st.SearchText(ctx, query, layers, *topK)
	if err != nil {
		return err
	}
	resp := SearchResponse{Query: query, Layers: layers, Results: []SearchResult{}}
	for i, h := range hits {
		resp.Results = append(resp.Results, SearchResult{
			Rank: i + 1, ChunkID: h.ChunkID, Ref: h.Ref(), Layer: h.Layer, File: h.File,
			Lines: fmt.Sprintf("%d-%d", h.LineStart, h.LineEnd), Page: h.Page, ClausePath: h.ClausePath,
			Score: h.Score, Text: h.Text,
		})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(resp)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
