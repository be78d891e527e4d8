// Package learning serves what queryd does for the learning loop:
// strata_feedback (a caller rates one of its answers), strata_learning_stats
// and strata_reset_learning. queryd only reads what was learned; the
// promoter in ingestd (package jobs) learns it. See docs/learning.md.
package learning

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
)

// ToolFeedback is the rating tool's name.
const ToolFeedback = "strata_feedback"

// FeedbackWindow is how long after an answer its caller may rate it.
const FeedbackWindow = 24 * time.Hour

// Argument limits of strata_feedback.
const (
	MaxLayerName   = 128
	MaxBetterQuery = 1000
	MaxRatings     = 50
)

// ratedTool is the tool whose interactions can be rated.
const ratedTool = "strata_ask"

// FeedbackRequest is strata_feedback's arguments.
type FeedbackRequest struct {
	InteractionID string            `json:"interaction_id"`
	Helpful       bool              `json:"helpful"`
	CorrectLayer  string            `json:"correct_layer,omitempty"`
	BetterQuery   string            `json:"better_query,omitempty"`
	ChunkFeedback map[string]string `json:"chunk_feedback,omitempty"`
}

// Args describes strata_feedback's arguments.
func (FeedbackRequest) Args() toolargs.Args {
	return toolargs.Args{
		"interaction_id": {
			Description: "The interaction_id of the strata_ask response being rated. Only the caller who asked may rate it, within 24 hours.",
			MinLength:   1,
			MaxLength:   20,
		},
		"helpful": {Description: "Whether the answer helped."},
		"correct_layer": {
			Description: "The layer the question belongs to, when the answer came from the wrong one.",
			MaxLength:   MaxLayerName,
		},
		"better_query": {
			Description: "A wording of the question that would have found the answer.",
			MaxLength:   MaxBetterQuery,
		},
		"chunk_feedback": {
			Description: "Ratings of single passages, keyed by the answer's passage id (S1) or by chunk id: useful, wrong or outdated. " +
				"A passage of a named clause (match exact) has no chunk id and cannot be rated yet: it comes back under not_stored.",
			MaxProperties: MaxRatings,
			Values:        &toolargs.Arg{Enum: store.Ratings()},
			Expect:        `an object such as {"S1": "useful"}`,
		},
	}
}

// Validate checks the arguments that a schema cannot: the id's digits, and
// (for callers building the struct in Go) each rating.
func (r *FeedbackRequest) Validate() error {
	if _, err := r.id(); err != nil {
		return err
	}
	for _, f := range []struct{ arg, v string }{{"correct_layer", r.CorrectLayer}, {"better_query", r.BetterQuery}} {
		if err := qerr.CheckText(f.arg, "", f.v); err != nil {
			return err
		}
	}
	if len(r.ChunkFeedback) > MaxRatings {
		return qerr.Invalidf("chunk_feedback", "has %d ratings, at most %d are allowed", len(r.ChunkFeedback), MaxRatings)
	}
	for _, k := range sortedKeys(r.ChunkFeedback) {
		if v := r.ChunkFeedback[k]; !slices.Contains(store.Ratings(), v) {
			return qerr.Invalidf("chunk_feedback", "rating of %q must be one of %s, got %q; nothing was stored",
				qerr.Clip(k), strings.Join(store.Ratings(), ", "), qerr.Clip(v))
		}
		if !passageIDRe.MatchString(k) && !chunkIDRe.MatchString(k) {
			return qerr.Invalidf("chunk_feedback", "key %q is neither a passage id such as S1 nor a chunk id (digits); nothing was stored", qerr.Clip(k))
		}
	}
	return nil
}

func (r *FeedbackRequest) id() (int64, error) {
	id, err := strconv.ParseInt(r.InteractionID, 10, 64)
	if err != nil || id <= 0 || !chunkIDRe.MatchString(r.InteractionID) {
		return 0, qerr.Invalidf("interaction_id", "must be the interaction_id a strata_ask response gave (digits), got %q", qerr.Clip(r.InteractionID))
	}
	return id, nil
}

var (
	passageIDRe = regexp.MustCompile(`^S[1-9][0-9]{0,3}$`)
	chunkIDRe   = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)
)

// FeedbackResponse is strata_feedback's result.
type FeedbackResponse struct {
	Status     string `json:"status"`
	FeedbackID string `json:"feedback_id"`
	// NotStored names each extra that was not stored; Warning says why.
	NotStored []string `json:"not_stored,omitempty"`
	Warning   string   `json:"warning,omitempty"`
}

// FeedbackLedger reads interactions and stores ratings; *store.Ledger is
// one.
type FeedbackLedger interface {
	Interaction(ctx context.Context, id int64) (store.InteractionRecord, error)
	RecordFeedback(ctx context.Context, f store.FeedbackRecord) (int64, error)
}

// Layers lists the layers; *store.Corpus is one.
type Layers interface {
	Layers(ctx context.Context) ([]store.Layer, error)
}

// Options configure a Service.
type Options struct {
	Ledger FeedbackLedger
	Layers Layers
	// Learned serves strata_learning_stats and strata_reset_learning.
	Learned Learned
	// RawQueries (LEARNING_STORE_RAW_QUERIES) keeps better_query as
	// written; otherwise it is scrubbed.
	RawQueries bool
	Logger     *slog.Logger
}

// Service serves the learning tools.
type Service struct {
	opt Options
	log *slog.Logger
}

// New returns a Service.
func New(opt Options) *Service {
	lg := opt.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Service{opt: opt, log: lg}
}

// Feedback stores one rating. A refused call stores nothing; only the
// caller's mistakes about the call itself (a bad rating value or key, an
// interaction it may not rate) refuse it, while an extra that cannot be
// stored is named under not_stored. A later rating of the same interaction
// replaces the earlier one (see store.Ledger.RecordFeedback).
func (s *Service) Feedback(ctx context.Context, req FeedbackRequest) (*FeedbackResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	id, _ := req.id()
	in, err := s.opt.Ledger.Interaction(ctx, id)
	if errors.Is(err, store.ErrNoInteraction) {
		return nil, qerr.NotFoundf("no interaction %d: pass the interaction_id of a strata_ask response", id)
	}
	if err != nil {
		return nil, store.CallerError(ctx, err, "read the interaction")
	}
	who := caller.From(ctx)
	if who == "" || in.Caller != who {
		return nil, qerr.Forbiddenf("interaction %d was not made by this caller: only the caller who asked (the same token or MCP session; over stdio the process owner) may rate an answer", id)
	}
	if in.Tool != ratedTool {
		return nil, qerr.Invalidf("interaction_id", "interaction %d is a %s call; only %s answers can be rated", id, in.Tool, ratedTool)
	}
	if in.Age > FeedbackWindow {
		return nil, qerr.Invalidf("interaction_id", "interaction %d was recorded %s ago; answers can be rated for %s after they are given",
			id, in.Age.Round(time.Minute), FeedbackWindow)
	}

	rec := store.FeedbackRecord{InteractionID: id, Caller: who, Helpful: req.Helpful, ChunkRatings: map[int64]string{}}
	var notStored, why []string
	inAnswer := map[int64]bool{}
	for _, c := range in.ChunkIDs {
		inAnswer[c] = true
	}
	for _, k := range sortedKeys(req.ChunkFeedback) {
		v := req.ChunkFeedback[k]
		if passageIDRe.MatchString(k) {
			if slices.Contains(in.ExactPassages, k) {
				// Only a bad rating value refuses the call; a passage that
				// cannot be rated is an extra that is not stored.
				notStored = append(notStored, "chunk_feedback."+k)
				why = append(why, fmt.Sprintf("chunk_feedback %s: passage %s is a named clause (match exact) and has no chunk id, so it cannot be rated yet", k, k))
				continue
			}
			c, ok := in.PassageChunks[k]
			if !ok {
				notStored = append(notStored, "chunk_feedback."+k)
				why = append(why, fmt.Sprintf("chunk_feedback %s: the answer has no passage %s", k, k))
				continue
			}
			rec.ChunkRatings[c] = v
			continue
		}
		c, _ := strconv.ParseInt(k, 10, 64)
		if !inAnswer[c] {
			notStored = append(notStored, "chunk_feedback."+k)
			why = append(why, fmt.Sprintf("chunk_feedback %s: chunk %s is not one of the answer's passages", k, k))
			continue
		}
		rec.ChunkRatings[c] = v
	}
	if req.CorrectLayer != "" {
		layers, err := s.opt.Layers.Layers(ctx)
		if err != nil {
			return nil, store.CallerError(ctx, err, "list the layers")
		}
		if slices.ContainsFunc(layers, func(l store.Layer) bool { return l.Name == req.CorrectLayer }) {
			rec.CorrectLayer = req.CorrectLayer
		} else {
			notStored = append(notStored, "correct_layer")
			why = append(why, fmt.Sprintf("correct_layer: there is no layer %q", qerr.Clip(req.CorrectLayer)))
		}
	}
	rec.BetterQuery = strings.TrimSpace(req.BetterQuery)
	if !s.opt.RawQueries {
		rec.BetterQuery = scrub.Text(rec.BetterQuery)
	}
	fid, err := s.opt.Ledger.RecordFeedback(ctx, rec)
	if err != nil {
		return nil, store.CallerError(ctx, err, "store the feedback")
	}
	resp := &FeedbackResponse{Status: "ok", FeedbackID: strconv.FormatInt(fid, 10), NotStored: notStored}
	if len(why) > 0 {
		resp.Warning = "The rating was stored, but not these extras: " + strings.Join(why, "; ") + "."
	}
	return resp, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
