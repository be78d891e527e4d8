package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
	"github.com/stratakb/stratakb/schema"
)

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

// Receipt is what a verified draft's receipt holds: the draft and its
// unchecked sentences (scrubbed unless raw queries are kept) and the
// passages' text as the server read it.
type Receipt struct {
	Caller    string
	Draft     string
	Passages  []ReceiptPassage
	Checked   int
	Unchecked []string
}

// Receipts stores receipts and returns their ids.
type Receipts interface {
	IssueReceipt(ctx context.Context, r Receipt) (string, error)
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
	resp.Status, resp.Flags, resp.Checked, resp.Unchecked, resp.Note = res.Status, res.Flags, res.Checked, res.Unchecked, res.Note
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
	rc := Receipt{Caller: caller.From(ctx), Draft: req.Draft, Passages: rps, Checked: res.Checked, Unchecked: res.Unchecked}
	if !v.opt.RawQueries {
		rc.Draft = scrub.Text(rc.Draft)
		rc.Unchecked = make([]string, len(res.Unchecked))
		for i, u := range res.Unchecked {
			rc.Unchecked[i] = scrub.Text(u)
		}
	}
	id, err := v.opt.Receipts.IssueReceipt(ctx, rc)
	if err != nil {
		v.opt.Logger.Warn("receipt_not_stored", "err", err.Error())
		return nil, store.CallerError(ctx, err, "store the receipt")
	}
	resp.ReceiptID = id
	return resp, nil
}
