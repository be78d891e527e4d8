package store

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
)

// TestReceiptSignatures (issue 27, item 7): a receipt is signed when issued
// with a key kept outside the database; opening it checks the signature.
// Changing its text, verdict or spans in the database, writing one by hand
// as the queryd role, or opening it with another key is reported.
func TestReceiptSignatures(t *testing.T) {
	ctx := context.Background()
	owner, ownerURL := dbtest.NewPool(t)
	ingesttest.Migrate(t, owner)
	qurl := dbtest.QuerydURL(t, ownerURL)
	keyPath := filepath.Join(t.TempDir(), "secrets", "receipt.key")
	key, err := LoadReceiptKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(keyPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v: want mode 600", st, err)
	}
	again, err := LoadReceiptKey(keyPath)
	if err != nil || again.ID != key.ID {
		t.Fatalf("the key read again: %v, id %q want %q", err, again.ID, key.ID)
	}
	l, err := OpenLedger(ctx, qurl, WithReceiptKey(key))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	issue := func() string {
		id, err := l.IssueReceipt(ctx, ReceiptRecord{Tool: "strata_verify", Status: "verified", Draft: "The fee is EUR 1.000,00 <net> [S1].",
			Passages: json.RawMessage(`[{"id": "S1", "ref": "doc:1:0-20", "text": "The fee is EUR 1.000,00 <net>.", "sha256": "x"}]`),
			Checked:  1, Checks: json.RawMessage(`[{"kind": "amount", "text": "EUR 1.000,00", "passage": "S1", "start": 11, "end": 23}]`)})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	state := func(l *Ledger, id string) ReceiptRecord {
		r, err := l.Receipt(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	id := issue()
	r := state(l, id)
	if r.SignatureState != SignatureValid || r.KeyID != key.ID || r.PublicKey != key.PublicKey() {
		t.Fatalf("a fresh receipt: %q key %q", r.SignatureState, r.KeyID)
	}
	// A third party checks it with the public key and the canonical form.
	pub, _ := base64.StdEncoding.DecodeString(r.PublicKey)
	sig, _ := base64.StdEncoding.DecodeString(r.Signature)
	msg, err := ReceiptCanonical(r)
	if err != nil || !ed25519.Verify(pub, msg, sig) {
		t.Errorf("the signature does not verify with the public key over %s (%v)", msg, err)
	}
	for _, tamper := range []string{
		`UPDATE strata.receipts SET draft = 'The fee is EUR 2.000,00 [S1].' WHERE id = $1`,
		`UPDATE strata.receipts SET status = 'flagged' WHERE id = $1`,
		`UPDATE strata.receipts SET passages = jsonb_set(passages, '{0,text}', '"The fee is EUR 9,00."') WHERE id = $1`,
		`UPDATE strata.receipts SET checks = jsonb_set(checks, '{0,end}', '30') WHERE id = $1`,
	} {
		id := issue()
		if _, err := owner.Exec(ctx, tamper, id); err != nil {
			t.Fatal(err)
		}
		if got := state(l, id).SignatureState; got != SignatureInvalid {
			t.Errorf("%s: signature %q, want %q", tamper, got, SignatureInvalid)
		}
	}
	// Written by hand as queryd, which may insert receipts.
	q, _ := OpenLedger(ctx, qurl)
	defer q.Close()
	if _, err := q.pool.Exec(ctx, `INSERT INTO strata.receipts (id, tool, status, draft, passages, checked)
		VALUES ('rcpt_00000000000000000000000000000001', 'strata_verify', 'verified', 'forged', '[]', 0)`); err != nil {
		t.Fatal(err)
	}
	if got := state(l, "rcpt_00000000000000000000000000000001").SignatureState; got != SignatureUnsigned {
		t.Errorf("a receipt written by hand: %q, want %q", got, SignatureUnsigned)
	}
	other, _ := LoadReceiptKey(filepath.Join(t.TempDir(), "other.key"))
	lo, _ := OpenLedger(ctx, qurl, WithReceiptKey(other))
	defer lo.Close()
	if got := state(lo, id).SignatureState; got != SignatureUnknownKey {
		t.Errorf("opened with another key: %q, want %q", got, SignatureUnknownKey)
	}
	if got := state(q, id).SignatureState; got != SignatureNoKey {
		t.Errorf("opened without a key: %q, want %q", got, SignatureNoKey)
	}
}
