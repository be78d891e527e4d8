package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReceiptRecord is one receipt as the ledger keeps it.
type ReceiptRecord struct {
	ID        string
	CreatedAt time.Time
	Caller    string
	Tool      string // the tool that issued it, as strata_verify
	Status    string // the verdict, as verified
	Draft     string // scrubbed unless raw queries are kept
	// Passages is a JSON array of the passages as the server read them.
	Passages json.RawMessage
	Checked  int
	// Unchecked is a JSON array of the sentences that held nothing to
	// check.
	Unchecked json.RawMessage
	// Checks is a JSON array of the quotes and facts checked and where each
	// was found; [] for an extractive answer's receipt and for receipts
	// issued before checks were kept (migration 0018).
	Checks json.RawMessage
	// Signature and KeyID are the Ed25519 signature over ReceiptCanonical
	// and the id of the key that made it; empty when unsigned.
	Signature, KeyID string
	// SignatureState is Receipt's check of the signature (Signature*);
	// PublicKey is the ledger's key (base64) when it made the signature.
	SignatureState, PublicKey string
}

// receiptIDRe is a receipt id: rcpt_ and 128 random bits, so an id cannot
// be guessed from another.
var receiptIDRe = regexp.MustCompile(`^rcpt_[0-9a-f]{32}$`)

// ValidReceiptID reports whether id has a receipt id's shape.
func ValidReceiptID(id string) bool { return receiptIDRe.MatchString(id) }

// ErrNoReceipt is returned for a receipt id the ledger does not hold.
var ErrNoReceipt = errors.New("no such receipt")

// IssueReceipt stores r under a new id and returns it.
func (l *Ledger) IssueReceipt(ctx context.Context, r ReceiptRecord) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("issue receipt: %w", err)
	}
	id := "rcpt_" + hex.EncodeToString(b[:])
	if len(r.Passages) == 0 {
		r.Passages = json.RawMessage(`[]`)
	}
	if len(r.Unchecked) == 0 {
		r.Unchecked = json.RawMessage(`[]`)
	}
	if len(r.Checks) == 0 {
		r.Checks = json.RawMessage(`[]`)
	}
	r.ID = id
	var sig, keyID *string
	if k := l.receiptKey; k != nil {
		s, err := k.sign(r)
		if err != nil {
			return "", fmt.Errorf("issue receipt: sign: %w", err)
		}
		sig, keyID = &s, &k.ID
	}
	var got string
	err := l.db.QueryRow(ctx, `INSERT INTO strata.receipts (id, caller, tool, status, draft, passages, checked, unchecked, checks, signature, key_id)
		VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb, $9::jsonb, $10, $11) RETURNING id`,
		id, r.Caller, r.Tool, r.Status, r.Draft, string(r.Passages), r.Checked, string(r.Unchecked), string(r.Checks), sig, keyID).Scan(&got)
	if err != nil {
		return "", fmt.Errorf("issue receipt: %w", err)
	}
	return id, nil
}

// Receipt reads a receipt; ErrNoReceipt when there is none with that id.
// It reads the primary, where receipts are written, so a receipt just
// issued is found.
func (l *Ledger) Receipt(ctx context.Context, id string) (ReceiptRecord, error) {
	var r ReceiptRecord
	var passages, unchecked, checks string
	err := l.db.QueryRow(ctx, `SELECT id, created_at, caller, tool, status, draft, passages::text, checked, unchecked::text, checks::text,
		coalesce(signature, ''), coalesce(key_id, '')
		FROM strata.receipts WHERE id = $1`, id).Scan(&r.ID, &r.CreatedAt, &r.Caller, &r.Tool, &r.Status, &r.Draft,
		&passages, &r.Checked, &unchecked, &checks, &r.Signature, &r.KeyID)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ErrNoReceipt
	}
	if err != nil {
		return r, fmt.Errorf("read receipt: %w", err)
	}
	r.Passages, r.Unchecked, r.Checks = json.RawMessage(passages), json.RawMessage(unchecked), json.RawMessage(checks)
	r.SignatureState = l.receiptKey.check(r)
	if k := l.receiptKey; k != nil && r.KeyID == k.ID {
		r.PublicKey = k.PublicKey()
	}
	return r, nil
}
