package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
	"github.com/stratakb/stratakb/schema"
)

// ToolName is the tool receipts are issued by.
const ToolName = "strata_verify"

// Request is strata_verify's arguments.
type Request struct {
	Draft    string   `json:"draft"`
	Passages []string `json:"passages"`
}

// Args describes strata_verify's arguments.
func (Request) Args() toolargs.Args {
	return toolargs.Args{
		"draft": {
			Description: "The drafted answer, citing passages by id as [S1], quotes in double quotes.",
			MinLength:   1,
			MaxLength:   MaxDraft,
		},
		"passages": {
			Description: "The refs of the passages the draft cites, in order (the first is S1), exactly as strata_ask returned them.",
			Items:       &toolargs.Arg{MinLength: 1, MaxLength: 64},
			MaxItems:    MaxPassages,
			Expect:      "an array of refs such as \"d42:1830-1905\"",
		},
	}
}

// Validate checks the arguments and parses the refs.
func (r *Request) Validate() error {
	if err := qerr.CheckText("draft", "", r.Draft); err != nil {
		return err
	}
	if strings.TrimSpace(r.Draft) == "" {
		return qerr.Invalidf("draft", "must not be empty")
	}
	if n := utf8.RuneCountInString(r.Draft); n > MaxDraft {
		return qerr.Invalidf("draft", "is %d characters long, at most %d are checked", n, MaxDraft)
	}
	if len(r.Passages) == 0 {
		return qerr.Invalidf("passages", "must name at least one passage ref")
	}
	if len(r.Passages) > MaxPassages {
		return qerr.Invalidf("passages", "has %d refs, at most %d are allowed", len(r.Passages), MaxPassages)
	}
	for i, p := range r.Passages {
		if _, err := schema.ParseRef(p); err != nil {
			return qerr.Invalidf("passages", "entry %d (S%d) %q is not a ref such as d42:1830-1905", i, i+1, qerr.Clip(p))
		}
	}
	return nil
}

// PassageFlag is a problem with a ref rather than with the draft.
type PassageFlag struct {
	Passage string `json:"passage"`
	Ref     string `json:"ref"`
	Problem string `json:"problem"`
	Message string `json:"message"`
}

// Problems with a ref.
const (
	RefNotFound      = "not_found"
	RefOutside       = "outside_document"
	RefSplitsChar    = "splits_a_character"
	RefTooWide       = "too_wide"
	RefTextNotKept   = "text_not_kept"
	RefChanged       = "changed"
	refTooWideSuffix = "pass the refs exactly as strata_ask returned them"
)

// Response is strata_verify's result.
type Response struct {
	Status       string        `json:"status"`
	Flags        []Flag        `json:"flags,omitempty"`
	PassageFlags []PassageFlag `json:"passage_flags,omitempty"`
	Checked      int           `json:"checked"`
	Unchecked    []string      `json:"unchecked_sentences,omitempty"`
	Note         string        `json:"note,omitempty"`
	ReceiptID    string        `json:"receipt_id,omitempty"`
}

// Spans reads refs from the stored documents.
type Spans interface {
	Spans(ctx context.Context, refs []schema.Ref) ([]store.Span, error)
}

// ReceiptPassage is one passage as the server read it for a receipt.
type ReceiptPassage struct {
	ID     string `json:"id"`
	Ref    string `json:"ref"`
	Layer  string `json:"layer"`
	File   string `json:"file"`
	Text   string `json:"text"`
	SHA256 string `json:"sha256"`
}

// Receipts stores receipts and reads them back; *store.Ledger is one. A
// receipt holds the draft and its unchecked sentences (scrubbed unless raw
// queries are kept) and the passages' text as the server read it.
type Receipts interface {
	IssueReceipt(ctx context.Context, r store.ReceiptRecord) (string, error)
	Receipt(ctx context.Context, id string) (store.ReceiptRecord, error)
}

// Options configure a Verifier.
type Options struct {
	Spans Spans
	// Receipts is nil when receipts cannot be stored: a verified result
	// then has no receipt_id and a note says why.
	Receipts Receipts
	// Budget is ANSWER_TOKEN_BUDGET, which bounds an exact clause's span.
	Budget     int
	RawQueries bool
	Logger     *slog.Logger
}

// Verifier answers strata_verify.
type Verifier struct{ opt Options }

// New returns a Verifier.
func New(opt Options) *Verifier {
	if opt.Budget <= 0 {
		opt.Budget = 1500
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &Verifier{opt: opt}
}

// charsPerToken is the one token estimate (see package ask).
const charsPerToken = 4

// exactClauseLimit is how long, in characters, an exact clause's span may
// be: what ANSWER_TOKEN_BUDGET holds, never under 200.
func (v *Verifier) exactClauseLimit() int { return max(200, v.opt.Budget*charsPerToken) }

// Verify checks a draft against the passages it cites, read from the
// store, and issues a receipt when it is verified.
func (v *Verifier) Verify(ctx context.Context, req Request) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	refs := make([]schema.Ref, len(req.Passages))
	for i, p := range req.Passages {
		refs[i], _ = schema.ParseRef(p)
	}
	spans, err := v.opt.Spans.Spans(ctx, refs)
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the passages")
	}
	resp := &Response{}
	changed := map[string]bool{}
	texts := make([]string, len(spans))
	var rps []ReceiptPassage
	for i, sp := range spans {
		id := fmt.Sprintf("S%d", i+1)
		pf := func(problem, msg string) {
			resp.PassageFlags = append(resp.PassageFlags, PassageFlag{Passage: id, Ref: req.Passages[i], Problem: problem, Message: msg})
		}
		chars := utf8.RuneCount(sp.Bytes)
		switch {
		case !sp.Found:
			pf(RefNotFound, fmt.Sprintf("%s names document %d, which the server does not hold (it may have been deleted or re-ingested): ask again and %s.", id, sp.Ref.DocumentID, refTooWideSuffix))
		case !sp.TextKept:
			pf(RefTextNotKept, fmt.Sprintf("%s's document was stored before document text was kept: re-ingest its layer %s.", id, sp.Layer))
		case spanChanged(sp):
			changed[id] = true
			pf(RefChanged, fmt.Sprintf("%s's text in %s is no longer what strata_ask handed back (the document was re-ingested since): ask again and verify the new answer.", id, sp.File))
		case sp.Ref.End > sp.DocBytes:
			pf(RefOutside, fmt.Sprintf("%s ends at byte %d, past the end of %s (%d bytes).", id, sp.Ref.End, sp.File, sp.DocBytes))
		case !utf8.Valid(sp.Bytes):
			pf(RefSplitsChar, fmt.Sprintf("%s starts or ends inside a character of %s: %s.", id, sp.File, refTooWideSuffix))
		case chars > 2*sp.ChunkSize && !(sp.SectionEnd >= 0 && sp.Ref.End <= sp.SectionEnd && chars <= v.exactClauseLimit()):
			pf(RefTooWide, fmt.Sprintf("%s spans %d characters, more than twice the layer's chunk size (%d): %s.", id, chars, sp.ChunkSize, refTooWideSuffix))
		default:
			texts[i] = string(sp.Bytes)
			sum := sha256.Sum256(sp.Bytes)
			rps = append(rps, ReceiptPassage{ID: id, Ref: req.Passages[i], Layer: sp.Layer, File: sp.File,
				Text: texts[i], SHA256: hex.EncodeToString(sum[:])})
		}
	}
	res := Check(req.Draft, texts)
	resp.Status, resp.Flags, resp.Checked, resp.Unchecked, resp.Note = res.Status, withoutChanged(res.Flags, changed), res.Checked, res.Unchecked, res.Note
	if len(resp.PassageFlags) > 0 {
		resp.Status, resp.Note = Flagged, ""
		return resp, nil
	}
	if resp.Status != Verified {
		return resp, nil
	}
	if v.opt.Receipts == nil {
		resp.Note = "Verified, but this server stores no receipts (LEARNING_ENABLED=false or no write access), so there is no receipt_id."
		return resp, nil
	}
	draft, unchecked := req.Draft, append([]string{}, res.Unchecked...)
	checks := append([]Match{}, res.Matches...)
	if !v.opt.RawQueries {
		// Each quote and fact is scrubbed as it stands in the draft, so
		// that no part of an account number the draft loses is kept.
		cuts := scrub.Find(draft)
		draft = scrub.Text(draft)
		for i, u := range unchecked {
			unchecked[i] = scrub.Text(u)
		}
		for i, m := range checks {
			checks[i].Text = cuts.Apply(m.Text, m.DraftStart)
		}
	}
	passages, err := json.Marshal(rps)
	if err != nil {
		return nil, err
	}
	uj, err := json.Marshal(unchecked)
	if err != nil {
		return nil, err
	}
	cj, err := json.Marshal(checks)
	if err != nil {
		return nil, err
	}
	id, err := v.opt.Receipts.IssueReceipt(ctx, store.ReceiptRecord{Caller: caller.From(ctx), Tool: ToolName,
		Status: Verified, Draft: draft, Passages: passages, Checked: res.Checked, Unchecked: uj, Checks: cj})
	if err != nil {
		v.opt.Logger.Warn("receipt_not_stored", "err", err.Error())
		return nil, store.CallerError(ctx, err, "store the receipt")
	}
	resp.ReceiptID = id
	return resp, nil
}

// ReceiptRequest is strata_get_receipt's arguments.
type ReceiptRequest struct {
	ReceiptID string `json:"receipt_id"`
}

// Args describes strata_get_receipt's arguments.
func (ReceiptRequest) Args() toolargs.Args {
	return toolargs.Args{"receipt_id": {
		Description: "The receipt_id strata_verify returned, as rcpt_ and 32 hexadecimal digits.",
		MinLength:   1,
		MaxLength:   64,
	}}
}

// Validate checks the id's shape.
func (r *ReceiptRequest) Validate() error {
	r.ReceiptID = strings.TrimSpace(r.ReceiptID)
	if !store.ValidReceiptID(r.ReceiptID) {
		return qerr.Invalidf("receipt_id", "%q is not a receipt id (rcpt_ and 32 hexadecimal digits)", qerr.Clip(r.ReceiptID))
	}
	return nil
}

// ReceiptPassageNow is a receipt's passage with whether the stored
// document still holds the same text at its ref.
type ReceiptPassageNow struct {
	ID     string `json:"id"`
	Ref    string `json:"ref"`
	Layer  string `json:"layer"`
	File   string `json:"file"`
	Text   string `json:"text"`
	SHA256 string `json:"sha256"`
	// Unchanged is true when the span reads the same today; false when the
	// document changed or is gone (the receipt still shows what was read).
	Unchanged bool `json:"unchanged"`
}

// ReceiptCheck is one quote or fact a receipt records as checked, and
// where it was found.
type ReceiptCheck struct {
	// Kind is quote or the fact's kind (number, date, amount, percent,
	// code, clause).
	Kind string `json:"kind"`
	// Text is the quote or fact as the draft wrote it, scrubbed like the
	// draft.
	Text string `json:"text"`
	// Sentence is its sentence's number in the draft (1-based).
	Sentence int `json:"sentence"`
	// Passage is the id of the receipt's passage it was found in ("S2").
	Passage string `json:"passage"`
	// Start and End are the bytes [Start, End) of that passage's text
	// that matched, and Matched is that text.
	Start   int    `json:"start"`
	End     int    `json:"end"`
	Matched string `json:"matched"`
}

// ReceiptResponse is a receipt as strata_get_receipt returns it.
type ReceiptResponse struct {
	ReceiptID string              `json:"receipt_id"`
	CreatedAt string              `json:"created_at"`
	Tool      string              `json:"tool"`
	Status    string              `json:"status"`
	Draft     string              `json:"draft"`
	Passages  []ReceiptPassageNow `json:"passages"`
	Checked   int                 `json:"checked"`
	// Checks are the quotes and facts checked, in the draft's order; for
	// an extractive answer, its sentences (kind "sentence", each the whole
	// of its passage; the draft is then the question); empty for a receipt
	// issued before they were kept.
	Checks    []ReceiptCheck `json:"checks"`
	Unchecked []string       `json:"unchecked_sentences,omitempty"`
	// Signature is what opening the receipt found of its signature.
	Signature ReceiptSignature `json:"signature"`
}

// ReceiptSignature is a receipt's Ed25519 signature and whether it holds
// (docs/ask.md, "Signed receipts").
type ReceiptSignature struct {
	// State is valid, invalid, unknown_key, unsigned or not_checked.
	State string `json:"state"`
	// Holds is true only for valid: this server issued the receipt and
	// nothing in it changed since.
	Holds bool `json:"holds"`
	// Algorithm, KeyID and Value are the signature; PublicKey (base64) is
	// this server's key when it made it, for a third party to check with.
	Algorithm string `json:"algorithm,omitempty"`
	KeyID     string `json:"key_id,omitempty"`
	Value     string `json:"value,omitempty"`
	PublicKey string `json:"public_key,omitempty"`
	Message   string `json:"message"`
}

var signatureMessages = map[string]string{
	store.SignatureValid:      "The signature holds: this server issued the receipt, and nothing in it changed since.",
	store.SignatureInvalid:    "The signature does NOT hold: the receipt was changed after it was issued. Do not rely on it.",
	store.SignatureUnknownKey: "The receipt is signed with a key this server does not hold, so it cannot vouch for it. Do not rely on it.",
	store.SignatureUnsigned:   "The receipt carries no signature: it was written by hand or issued before receipts were signed. Do not rely on it.",
	store.SignatureNoKey:      "This server holds no receipt key, so the signature was not checked.",
}

func receiptSignature(r store.ReceiptRecord) ReceiptSignature {
	s := ReceiptSignature{State: r.SignatureState, Holds: r.SignatureState == store.SignatureValid,
		KeyID: r.KeyID, Value: r.Signature, PublicKey: r.PublicKey, Message: signatureMessages[r.SignatureState]}
	if r.Signature != "" {
		s.Algorithm = "ed25519"
	}
	return s
}

// GetReceipt reads a receipt and checks each passage against the stored
// documents as they are now.
func (v *Verifier) GetReceipt(ctx context.Context, req ReceiptRequest) (*ReceiptResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if v.opt.Receipts == nil {
		return nil, qerr.NotFoundf("this server stores no receipts")
	}
	r, err := v.opt.Receipts.Receipt(ctx, req.ReceiptID)
	if errors.Is(err, store.ErrNoReceipt) {
		return nil, qerr.NotFoundf("no receipt %s", req.ReceiptID)
	}
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the receipt")
	}
	resp := &ReceiptResponse{ReceiptID: r.ID, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339), Tool: r.Tool,
		Status: r.Status, Draft: r.Draft, Checked: r.Checked, Signature: receiptSignature(r)}
	var ps []ReceiptPassage
	if err := json.Unmarshal(r.Passages, &ps); err != nil {
		return nil, fmt.Errorf("receipt %s: passages: %w", r.ID, err)
	}
	if err := json.Unmarshal(r.Unchecked, &resp.Unchecked); err != nil {
		return nil, fmt.Errorf("receipt %s: unchecked sentences: %w", r.ID, err)
	}
	resp.Checks = []ReceiptCheck{}
	if len(r.Checks) > 0 {
		if err := json.Unmarshal(r.Checks, &resp.Checks); err != nil {
			return nil, fmt.Errorf("receipt %s: checks: %w", r.ID, err)
		}
	}
	texts := map[string]string{}
	for _, p := range ps {
		texts[p.ID] = p.Text
	}
	for i, c := range resp.Checks {
		if t, ok := texts[c.Passage]; ok && 0 <= c.Start && c.Start <= c.End && c.End <= len(t) {
			resp.Checks[i].Matched = t[c.Start:c.End]
		}
	}
	refs := make([]schema.Ref, len(ps))
	for i, p := range ps {
		refs[i], _ = schema.ParseRef(p.Ref)
	}
	spans, err := v.opt.Spans.Spans(ctx, refs)
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the passages")
	}
	for i, p := range ps {
		sum := sha256.Sum256(spans[i].Bytes)
		same := spans[i].Found && hex.EncodeToString(sum[:]) == p.SHA256
		resp.Passages = append(resp.Passages, ReceiptPassageNow{ID: p.ID, Ref: p.Ref, Layer: p.Layer, File: p.File,
			Text: p.Text, SHA256: p.SHA256, Unchanged: same})
	}
	return resp, nil
}

// spanChanged reports whether a ref that carries the hash of its text
// (as strata_ask hands refs out) names a span whose text is no longer
// that: the document was re-ingested and edited. A ref without a hash is
// taken as it is.
func spanChanged(sp store.Span) bool {
	if sp.Ref.Hash == "" {
		return false
	}
	return sp.Ref.End > sp.DocBytes || schema.SpanHash(string(sp.Bytes)) != sp.Ref.Hash
}

// withoutChanged drops the draft's flags about passages whose text changed:
// a quote the old text held is not wrong because the new text lacks it, and
// the passage flag already says to ask again.
func withoutChanged(flags []Flag, changed map[string]bool) []Flag {
	if len(changed) == 0 {
		return flags
	}
	out := flags[:0:0]
	for _, f := range flags {
		if !slices.ContainsFunc(f.Searched, func(id string) bool { return changed[id] }) {
			out = append(out, f)
		}
	}
	return out
}
