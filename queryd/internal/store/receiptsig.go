package store

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stratakb/stratakb/internal/keyfile"
)

// ReceiptKey signs receipts with Ed25519. The key is kept in a file outside
// the database (a hex seed, mode 600), so a role that can insert receipts
// cannot make one that verifies.
type ReceiptKey struct {
	priv ed25519.PrivateKey
	// ID names the key: the first 16 hex digits of its public key's
	// SHA-256.
	ID string
}

// Signature states of an opened receipt.
const (
	SignatureValid      = "valid"       // signed by this server's key, content unchanged
	SignatureInvalid    = "invalid"     // signed by this server's key, content changed since
	SignatureUnknownKey = "unknown_key" // signed, but not by the key this server holds
	SignatureUnsigned   = "unsigned"    // no signature (written by hand, or before signing)
	SignatureNoKey      = "not_checked" // this server holds no key to check with
)

// LoadReceiptKey reads the key at path, creating it (and its folder, mode
// 700) when it does not exist; processes that start at once agree on one
// key.
func LoadReceiptKey(path string) (*ReceiptKey, error) {
	b, err := keyfile.ReadOrCreate(path, func() ([]byte, error) {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(seed) + "\n"), nil
	})
	if err != nil {
		return nil, fmt.Errorf("receipt key: %w", err)
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("receipt key %s: want %d bytes of hex", path, ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	sum := sha256.Sum256(priv.Public().(ed25519.PublicKey))
	return &ReceiptKey{priv: priv, ID: hex.EncodeToString(sum[:8])}, nil
}

// PublicKey is the key's public half, base64 (standard encoding), which a
// third party checks signatures with.
func (k *ReceiptKey) PublicKey() string {
	return base64.StdEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
}

func (k *ReceiptKey) sign(r ReceiptRecord) (string, error) {
	msg, err := ReceiptCanonical(r)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(ed25519.Sign(k.priv, msg)), nil
}

// check reports the signature state of r as read.
func (k *ReceiptKey) check(r ReceiptRecord) string {
	switch {
	case r.Signature == "":
		return SignatureUnsigned
	case k == nil:
		return SignatureNoKey
	case r.KeyID != k.ID:
		return SignatureUnknownKey
	}
	sig, err := base64.StdEncoding.DecodeString(r.Signature)
	msg, cerr := ReceiptCanonical(r)
	if err != nil || cerr != nil || !ed25519.Verify(k.priv.Public().(ed25519.PublicKey), msg, sig) {
		return SignatureInvalid
	}
	return SignatureValid
}

// ReceiptCanonical is what a receipt's signature covers: one JSON object
// with the keys caller, checked, checks, draft, id, passages, status, tool
// and unchecked, in that (sorted) order, every nested object's keys sorted
// too, no spaces, and no HTML escaping (Go's encoding/json with
// SetEscapeHTML(false) on values decoded into interfaces). The receipt's
// creation time is the database's and is not covered.
func ReceiptCanonical(r ReceiptRecord) ([]byte, error) {
	doc := map[string]any{"caller": r.Caller, "checked": r.Checked, "draft": r.Draft, "id": r.ID,
		"status": r.Status, "tool": r.Tool}
	for key, raw := range map[string]json.RawMessage{"passages": r.Passages, "checks": r.Checks, "unchecked": r.Unchecked} {
		var v any = []any{}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("receipt %s: %s: %w", r.ID, key, err)
			}
		}
		doc[key] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
