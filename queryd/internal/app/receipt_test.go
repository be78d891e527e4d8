package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/verify"
	"github.com/stratakb/stratakb/schema"
)

// TestReceiptVerb: `queryd receipt ID` shows a receipt strata_verify issued,
// the quote marked in its passage, and says when the document changed;
// --json prints the tool's response; a bad id is a usage error.
func TestReceiptVerb(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	var layer, doc int64
	body := "Up to 5 unused days may be carried into the next calendar year."
	if err := owner.QueryRow(ctx, `INSERT INTO strata.layers (name, root) VALUES ('handbook', '/docs') RETURNING id`).Scan(&layer); err != nil {
		t.Fatal(err)
	}
	if err := owner.QueryRow(ctx, `INSERT INTO strata.documents (layer_id, path, status, body) VALUES ($1, 'leave.md', 'ok', $2) RETURNING id`, layer, body).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	corpus, err := store.OpenCorpus(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	defer corpus.Close()
	ledger, err := store.OpenLedger(ctx, qurl)
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.Close()
	ref := schema.Ref{DocumentID: doc, Start: 0, End: len(body)}.String()
	v, err := verify.New(verify.Options{Spans: corpus, Receipts: ledger}).Verify(ctx,
		verify.Request{Draft: "You may carry \"5 unused days\" into next year [S1]. That is five days at most [S1]. Ask HR for more [S1].", Passages: []string{ref}})
	if err != nil || v.ReceiptID == "" {
		t.Fatalf("verify: %+v %v", v, err)
	}
	env := map[string]string{"QUERYD_DATABASE_URL": qurl, "STRATA_MODEL_DIR": t.TempDir(), "QUERYD_URL": "https://kb.example.org/"}
	run := func(args ...string) (string, error) {
		var out, errOut strings.Builder
		err := Run(ctx, append([]string{"receipt"}, args...), func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
		return out.String(), err
	}
	out, err := run(v.ReceiptID)
	if err != nil || !strings.Contains(out, "Up to >>>5 unused days<<< may be carried") || !strings.Contains(out, "still reads the same") {
		t.Fatalf("receipt: %v\n%s", err, out)
	}
	// After the passages: each quote and fact and what it matched (the
	// quote's "5" is a fact too), then the sentences not checked.
	tail := `
Quotes:
  - "5 unused days" (S1) matched "5 unused days"

Facts:
  - "5" (S1, number) matched "5"
  - "five" (S1, number) matched "5"

Not checked (no quote or fact to compare):
  - Ask HR for more [S1].

In the explorer: https://kb.example.org/ui/receipts/` + v.ReceiptID + `
`
	if !strings.HasSuffix(out, tail) || strings.Index(out, ">>>5 unused days<<<") > strings.Index(out, "Quotes:") {
		t.Errorf("receipt: want the passages, then\n%s\ngot\n%s", tail, out)
	}
	// A receipt stored before checks were kept, or of an extractive answer,
	// lists none.
	old := "rcpt_" + strings.Repeat("cd", 16)
	if _, err := owner.Exec(ctx, `INSERT INTO strata.receipts (id, tool, status, draft, passages, checked)
		VALUES ($1, 'strata_verify', 'verified', 'Up to 5 days [S1].', '[]', 1)`, old); err != nil {
		t.Fatal(err)
	}
	if out, err := run(old); err != nil || strings.Contains(out, "Facts:") || strings.Contains(out, "Quotes:") || !strings.Contains(out, "1 quotes and facts checked") {
		t.Errorf("receipt without checks: %v\n%s", err, out)
	}
	if _, err := owner.Exec(ctx, `UPDATE strata.documents SET body = 'Up to 9 unused days may be carried into the next calendar year.' WHERE id = $1`, doc); err != nil {
		t.Fatal(err)
	}
	out, err = run("--json", v.ReceiptID)
	var r verify.ReceiptResponse
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || len(r.Passages) != 1 || r.Passages[0].Unchanged || r.Passages[0].Text != body {
		t.Fatalf("receipt --json after a change: %v\n%s", err, out)
	}
	// The checks say what was read then, not what the document says now
	// (the quote, its number, then the second sentence's "five").
	if len(r.Checks) != 3 || r.Checks[2] != (verify.ReceiptCheck{Kind: "number", Text: "five", Sentence: 2, Passage: "S1", Start: 6, End: 7, Matched: "5"}) {
		t.Errorf("receipt --json checks: %+v", r.Checks)
	}
	var ue usageError
	if _, err := run("rcpt_nope"); !errors.As(err, &ue) {
		t.Errorf("bad id: %v, want a usage error", err)
	}
	if _, err := run("rcpt_" + strings.Repeat("0", 32)); !errors.As(err, &ue) || !strings.Contains(err.Error(), "no receipt") {
		t.Errorf("unknown id: %v", err)
	}
}

// TestReceiptPage: the explorer's page of a receipt is on the server the
// command line would call: QUERYD_URL, else a loopback QUERYD_ADDR (an
// unspecified host is reached on 127.0.0.1); with neither, the path alone.
func TestReceiptPage(t *testing.T) {
	id := "rcpt_" + strings.Repeat("ab", 16)
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"QUERYD_URL": "https://kb.example.org/"}, "https://kb.example.org/ui/receipts/" + id},
		{map[string]string{"QUERYD_ADDR": ":8377"}, "http://127.0.0.1:8377/ui/receipts/" + id},
		{map[string]string{"QUERYD_ADDR": "10.0.0.5:8377"}, "/ui/receipts/" + id},
		{map[string]string{}, "/ui/receipts/" + id},
	} {
		if got := receiptPage(func(k string) string { return c.env[k] }, id); got != c.want {
			t.Errorf("%v: %s, want %s", c.env, got, c.want)
		}
	}
}
