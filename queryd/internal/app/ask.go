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
	"strconv"
	"strings"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config"
	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/learning"
	"github.com/stratakb/stratakb/queryd/internal/lrank"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/rerank"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// newAsker builds strata_ask over the corpus with the query embedder;
// ledger, when set, records the interactions; receipts, when set, stores
// the extractive answers' receipts.
func newAsker(corpus *store.Corpus, ledger, receipts *store.Ledger, q *queryEmbedder, cfg Config, log *slog.Logger) (*askpkg.Asker, error) {
	opts := q.options(cfg)
	// strata_ask's lists keep the document evidence in every layer: its
	// reranker and marks were fitted and chosen on such lists
	// (retrieve.Options.DocEvidenceEverywhere).
	eng := retrieve.New(corpus, retrieve.Options{Embedder: opts.Embedder, EmbedderError: opts.EmbedderError,
		Models: opts.Models, KeywordSlots: opts.KeywordSlots, DocEvidenceEverywhere: true, Vectors: opts.Vectors})
	o := askpkg.Options{Engine: eng, Docs: corpus, Logger: log,
		Budget: cfg.AnswerTokenBudget, RawQueries: cfg.Server.RawQueries}
	var err error
	var cross *crossEncoder
	if cfg.Reranking.HTTP.Provider == rerank.ProviderONNX {
		cross = newCrossEncoder(cfg)
	}
	if o.Reranker, o.NoReranker, err = newReranker(cfg, log, cross); err != nil {
		return nil, err
	}
	if o.Rewriter, err = newRewriter(cfg, log); err != nil {
		return nil, err
	}
	if ledger != nil && cfg.LearningEnabled {
		o.Recorder = recorder{ledger}
		o.Rewriter = learning.WithLearned(o.Rewriter, corpus, log)
		o.Affinities = corpus
	}
	// Extractive answers: sentences are scored by the reranking model also
	// with reranking off, and their receipts go to the ledger.
	o.Embedder = opts.Embedder
	o.Sentences, o.SentencesError = newSentenceScorer(cfg, opts.Embedder, log, cross)
	if receipts != nil {
		o.Receipts = receipts
	}
	return askpkg.New(o), nil
}

// newSentenceScorer returns the model that scores extractive sentences:
// RERANKING_MODEL's, whether or not reranking is on. Its error is why it
// cannot load; an extractive call then fails with it.
func newSentenceScorer(cfg Config, emb embed.Embedder, log *slog.Logger, cross *crossEncoder) (askpkg.SentenceScorer, error) {
	if cross != nil {
		return askpkg.TextSentences{R: cross}, nil
	}
	if cfg.Reranking.HTTP.Provider == rerank.ProviderHTTP {
		h, err := rerank.NewHTTP(cfg.rerankHTTP(), log)
		if err != nil {
			return nil, fmt.Errorf("the reranking model %s: %w", cfg.Reranking.Model, err)
		}
		return askpkg.TextSentences{R: h}, nil
	}
	if err := lrank.Default.Check(); err != nil {
		return nil, fmt.Errorf("the offline reranking model: %w", err)
	}
	return askpkg.OfflineSentences{Model: lrank.Default, Embedder: emb, Logger: log}, nil
}

// recorder stores strata_ask's interactions in the ledger.
type recorder struct{ l *store.Ledger }

func (r recorder) RecordInteraction(ctx context.Context, in askpkg.Interaction) (string, error) {
	detail, err := json.Marshal(map[string]any{"variants": in.Variants, "chunk_ids": in.ChunkIDs, "confidence": in.Confidence,
		"passage_chunks": in.PassageChunks, "exact_passages": in.ExactPassages})
	if err != nil {
		return "", err
	}
	id, err := r.l.RecordInteraction(ctx, store.Interaction{Caller: in.Caller, Tool: in.Tool, Question: in.Question,
		Layers: in.Layers, Status: in.Status, Detail: detail})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

// askVerb is `queryd ask QUESTION`: it prints the JSON response, or on a
// terminal a readable rendering (--json prints JSON there too).
func askVerb(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ask", stderr)
	layers := defineLayers(fs, "comma-separated layer names (default: routing chooses)")
	topK := fs.Int("top-k", askpkg.DefaultTopK, "results per search and in the merged list, 1 to 50")
	detailed := fs.Bool("detailed", false, "the detailed response: confidence, variants, retrieved chunks, sources")
	mode := fs.String("mode", "", "extractive or grounded (default: the layers' answer mode)")
	asJSON := fs.Bool("json", false, "print JSON also on a terminal")
	local := fs.Bool("local", false, "run in-process even when a queryd serve answers at QUERYD_ADDR")
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
	req.Layers = layers.names()
	if err := req.Validate(); err != nil {
		return usagef("ask: %v", err)
	}
	readable := !*asJSON && isTerminal(stdout)
	var remote error
	if !*local {
		out, err := tryRemote(ctx, getenv, "ask", "/v1/ask", req)
		var el errLocal
		switch {
		case errors.As(err, &el):
			remote = el
		case err != nil:
			return err
		default:
			var resp askpkg.Response
			if err := json.Unmarshal(out, &resp); err != nil {
				remote = errLocal{fmt.Errorf("the server's answer: %w", err)}
				break
			}
			// The server records the interaction for its learning loop;
			// the command line prints what it prints in-process, which
			// records none.
			resp.InteractionID = ""
			if readable {
				render(stdout, &resp)
				return nil
			}
			return printJSON(stdout, &resp)
		}
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	logLocal(stderr, cfg, remote)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	// The model loads while the database is opened.
	cfg.Embed.FewCalls = true // one question, then the process exits
	q := newQueryEmbedder(cfg.Embed, log)
	defer q.close()
	q.warm()
	corpus, err := openCorpus(ctx, cfg)
	if err != nil {
		return err
	}
	defer corpus.Close()
	// The command line records no interaction (nobody can rate it later),
	// but an extractive answer gets its receipt, which `queryd receipt`
	// shows.
	receipts, err := store.OpenLedger(ctx, cfg.DatabaseURL, store.WithCheck(roleCheck(cfg.AllowOwner, nil)), cfg.receiptKeyOption(nil))
	if err != nil {
		return err
	}
	defer receipts.Close()
	asker, err := newAsker(corpus, nil, receipts, q, cfg, log)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	resp, err := asker.Ask(caller.With(ctx, caller.Stdio()), req)
	if qerr.KindOf(err) == qerr.Invalid {
		return usagef("ask: %v", err)
	}
	if err != nil {
		return err
	}
	if readable {
		render(stdout, resp)
		return nil
	}
	return printJSON(stdout, resp)
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

// render writes a strata_ask response for a reader: the status, an
// extractive answer's sentences, each passage with its citation, the notes
// and the next step.
func render(w io.Writer, r *askpkg.Response) {
	status := r.Status
	if r.AnswerStatus != "" {
		status = r.AnswerStatus
	}
	fmt.Fprintf(w, "%s (%s answer)\n", strings.ReplaceAll(status, "_", " "), r.Mode)
	// An extractive answer's sentences come first; the passages they were
	// taken from follow.
	if len(r.Answer) > 0 {
		fmt.Fprintf(w, "\nAnswer, in the documents' own words:\n")
		for _, s := range r.Answer {
			fmt.Fprintf(w, "\n[%s] %s/%s, lines %s\n", s.Passage, s.Citation.Layer, s.Citation.File, s.Citation.Lines)
			for _, line := range strings.Split(s.Text, "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
			if s.Warning != "" {
				fmt.Fprintf(w, "    (%s)\n", s.Warning)
			}
		}
	}
	if len(r.Answer) > 0 && len(r.Passages) > 0 {
		fmt.Fprintf(w, "\nThe passages they come from:\n")
	}
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
		if p.Match == askpkg.MatchNames {
			labels = append(labels, "holds the names the question gives")
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
	if r.ReceiptID != "" {
		fmt.Fprintf(w, "\nReceipt: %s (queryd receipt %s shows it)\n", r.ReceiptID, r.ReceiptID)
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
