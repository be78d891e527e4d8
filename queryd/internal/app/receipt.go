package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/stratakb/stratakb/internal/config"
	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/verify"
)

// receiptVerb is `queryd receipt ID`: the receipt for a reader, each quote
// marked >>> <<< in its passage; --json prints strata_get_receipt's
// response.
func receiptVerb(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("receipt", stderr)
	asJSON := fs.Bool("json", false, "print strata_get_receipt's JSON response")
	pos, err := config.ParseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	if len(pos) != 1 {
		return usagef("receipt takes one receipt id, as rcpt_0123…")
	}
	req := verify.ReceiptRequest{ReceiptID: pos[0]}
	if err := req.Validate(); err != nil {
		return usagef("receipt: %v", err)
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	corpus, err := openCorpus(ctx, cfg)
	if err != nil {
		return err
	}
	defer corpus.Close()
	ledger, err := store.OpenLedger(ctx, cfg.DatabaseURL, store.WithCheck(roleCheck(cfg.AllowOwner, nil)), cfg.receiptKeyOption(nil))
	if err != nil {
		return err
	}
	defer ledger.Close()
	r, err := verify.New(verify.Options{Spans: corpus, Receipts: ledger}).GetReceipt(ctx, req)
	if k := qerr.KindOf(err); k == qerr.Invalid || k == qerr.NotFound {
		return usagef("receipt: %v", err)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, r)
	}
	renderReceipt(stdout, r)
	fmt.Fprintf(stdout, "\nIn the explorer: %s\n", receiptPage(getenv, r.ReceiptID))
	return nil
}

// receiptPage is the explorer's page of a receipt on the queryd serve the
// command line would call (QUERYD_URL, else a loopback QUERYD_ADDR), or
// its path alone when there is none to name.
func receiptPage(getenv func(string) string, id string) string {
	return remoteBase(getenv) + "/ui/receipts/" + url.PathEscape(id)
}

// renderReceipt writes a receipt for a reader.
func renderReceipt(w io.Writer, r *verify.ReceiptResponse) {
	extractive := isExtractive(r)
	fmt.Fprintf(w, "Receipt %s\nIssued %s by %s\n", r.ReceiptID, r.CreatedAt, r.Tool)
	sig := r.Signature
	fmt.Fprintf(w, "Signature: %s", sig.Message)
	if sig.KeyID != "" {
		fmt.Fprintf(w, " (%s, key %s)", sig.Algorithm, sig.KeyID)
	}
	fmt.Fprintln(w)
	if extractive {
		fmt.Fprintf(w, "Answer: %s, %d sentences quoted word for word from the documents\n\nQuestion:\n", r.Status, r.Checked)
	} else {
		fmt.Fprintf(w, "Verification: %s, %d quotes and facts checked\n\nDraft:\n", r.Status, r.Checked)
	}
	for _, line := range strings.Split(r.Draft, "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
	for _, p := range r.Passages {
		state := "the document still reads the same"
		if !p.Unchanged {
			state = "CHANGED since: the document no longer reads this way at this ref"
		}
		fmt.Fprintf(w, "\n[%s] %s/%s (%s; %s)\n", p.ID, p.Layer, p.File, p.Ref, state)
		text := p.Text
		if !extractive {
			text = verify.MarkQuotes(r.Draft, p.Text)
		}
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	var quotes, facts []verify.ReceiptCheck
	for _, c := range r.Checks {
		if c.Kind == askpkg.ReceiptSentence {
			continue // the passages above are the sentences themselves
		}
		if c.Kind == "quote" {
			quotes = append(quotes, c)
		} else {
			facts = append(facts, c)
		}
	}
	for _, list := range []struct {
		title  string
		checks []verify.ReceiptCheck
	}{{"Quotes", quotes}, {"Facts", facts}} {
		if len(list.checks) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", list.title)
		for _, c := range list.checks {
			where := c.Passage
			if c.Kind != "quote" {
				where += ", " + c.Kind
			}
			fmt.Fprintf(w, "  - %q (%s) matched %q\n", oneLine(c.Text), where, oneLine(c.Matched))
		}
	}
	if len(r.Unchecked) > 0 {
		fmt.Fprintf(w, "\nNot checked (no quote or fact to compare):\n")
		for _, s := range r.Unchecked {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}

// oneLine runs a text's white space together, so that a quote over a line
// break stays on its line of the list.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// isExtractive reports whether r is an extractive answer's receipt: its
// checks are the answer's sentences and its draft the question.
func isExtractive(r *verify.ReceiptResponse) bool {
	for _, c := range r.Checks {
		if c.Kind == askpkg.ReceiptSentence {
			return true
		}
	}
	return false
}
