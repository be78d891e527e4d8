package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/stratakb/stratakb/internal/config"
	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// noReranker is why strata_ask runs without a reranker until one is wired:
// the detailed response says so.
const noReranker = "no reranker is available in this build (the offline reranker is not built yet and RERANKING_PROVIDER is not wired)"

// newAsker builds strata_ask over the store with the query embedder.
func newAsker(st *store.Store, q *queryEmbedder, cfg Config, log *slog.Logger) *askpkg.Asker {
	opts := q.options(cfg)
	eng := retrieve.New(st, retrieve.Options{Embedder: opts.Embedder, EmbedderError: opts.EmbedderError,
		KeywordSlots: opts.KeywordSlots})
	return askpkg.New(askpkg.Options{Engine: eng, Docs: st, NoReranker: noReranker, Logger: log})
}

// askVerb is `queryd ask QUESTION`: it prints the JSON response, or on a
// terminal a readable rendering (--json prints JSON there too).
func askVerb(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("queryd ask", flag.ContinueOnError)
	fs.SetOutput(stderr)
	layersFlag := fs.String("layers", "", "comma-separated layer names (default: routing chooses)")
	topK := fs.Int("top-k", askpkg.DefaultTopK, "results per search and in the merged list, 1 to 50")
	detailed := fs.Bool("detailed", false, "the detailed response: confidence, variants, retrieved chunks, sources")
	mode := fs.String("mode", "", "extractive or grounded (default: the layers' answer mode)")
	asJSON := fs.Bool("json", false, "print JSON also on a terminal")
	pos, err := config.ParseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	if *topK < 1 || *topK > askpkg.MaxTopK {
		return usagef("ask: top_k: must be from 1 to %d, got %d (--top-k)", askpkg.MaxTopK, *topK)
	}
	req := askpkg.Request{Question: strings.Join(pos, " "), TopK: *topK, Mode: *mode}
	if *detailed {
		req.ResponseFormat = askpkg.FormatDetailed
	}
	for _, l := range strings.Split(*layersFlag, ",") {
		if l = strings.TrimSpace(l); l != "" {
			req.Layers = append(req.Layers, l)
		}
	}
	if err := req.Validate(); err != nil {
		return usagef("ask: %v", err)
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
	if err := checkRole(ctx, st.Pool(), cfg.AllowOwner); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	q := newQueryEmbedder(cfg.Embed, log)
	defer q.close()
	resp, err := newAsker(st, q, cfg, log).Ask(caller.With(ctx, caller.Stdio()), req)
	if qerr.KindOf(err) == qerr.Invalid {
		return usagef("ask: %v", err)
	}
	if err != nil {
		return err
	}
	if !*asJSON && isTerminal(stdout) {
		render(stdout, resp)
		return nil
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(resp)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// render writes a strata_ask response for a reader: the status, each
// passage with its citation, the notes and the next step.
func render(w io.Writer, r *askpkg.Response) {
	status := r.Status
	if r.AnswerStatus != "" {
		status = r.AnswerStatus
	}
	fmt.Fprintf(w, "%s (%s answer)\n", strings.ReplaceAll(status, "_", " "), r.Mode)
	for _, p := range r.Passages {
		c := p.Citation
		where := c.Layer + "/" + c.File
		if c.Page != nil {
			where += fmt.Sprintf(", page %d", *c.Page)
		}
		where += ", lines " + c.Lines
		if c.ClausePath != "" {
			where += ", " + c.ClausePath
		}
		if c.Date != nil {
			where += ", dated " + *c.Date
		}
		var labels []string
		if p.Match == "exact" {
			labels = append(labels, "the section named")
		}
		if p.Cut {
			labels = append(labels, "cut: read the whole clause in the file")
		}
		if c.ReplacedBy != "" {
			labels = append(labels, "replaced by "+c.ReplacedBy)
		}
		if c.Archived {
			labels = append(labels, "archived")
		}
		if p.OutsideRouting {
			labels = append(labels, "from outside the routed layers")
		}
		fmt.Fprintf(w, "\n[%s] %s", p.ID, where)
		if len(labels) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(labels, "; "))
		}
		fmt.Fprintf(w, "\n")
		for _, line := range strings.Split(strings.TrimRight(p.Text, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\nNote: %s\n", n)
	}
	if r.Warning != "" {
		fmt.Fprintf(w, "\nWarning: %s\n", r.Warning)
	}
	if r.NextStep != "" {
		fmt.Fprintf(w, "\nNext step: %s\n", r.NextStep)
	}
}
