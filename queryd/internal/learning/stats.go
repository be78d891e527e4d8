package learning

import (
	"context"
	"slices"
	"strconv"

	"github.com/stratakb/stratakb/queryd/internal/caller"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
)

// The stats and reset tools' names.
const (
	ToolStats = "strata_learning_stats"
	ToolReset = "strata_reset_learning"
)

// Learned reads what was learned and records reset requests; *store.Ledger
// is one.
type Learned interface {
	LearningStats(ctx context.Context) (store.LearningStats, error)
	RequestReset(ctx context.Context, who, layer string) (int64, error)
}

// StatsRequest is strata_learning_stats's arguments.
type StatsRequest struct {
	Layer string `json:"layer,omitempty"`
}

// Args describes strata_learning_stats's arguments.
func (StatsRequest) Args() toolargs.Args {
	return toolargs.Args{"layer": {Description: "Show only what was learned for this layer (and synonyms and rewrites stored with no layer).", MaxLength: MaxLayerName}}
}

// Validate checks the arguments.
func (r *StatsRequest) Validate() error { return qerr.CheckText("layer", "", r.Layer) }

// StatsResponse is strata_learning_stats's result. Layer ACLs do not exist
// yet, so every caller sees every layer.
type StatsResponse struct {
	Synonyms      []store.LearnedSynonym `json:"synonyms"`
	Rewrites      []store.LearnedRewrite `json:"rewrites"`
	Affinities    []store.LayerAffinity  `json:"affinities"`
	Feedback      store.FeedbackCounts   `json:"feedback"`
	LastRun       *store.PromoterRun     `json:"promoter_last_run"`
	PendingResets int                    `json:"pending_resets"`
	Note          string                 `json:"note,omitempty"`
}

// Stats shows what was learned.
func (s *Service) Stats(ctx context.Context, req StatsRequest) (*StatsResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.opt.Learned == nil {
		return nil, qerr.Unavailablef(nil, "learning is not set up on this server")
	}
	st, err := s.opt.Learned.LearningStats(ctx)
	if err != nil {
		return nil, store.CallerError(ctx, err, "read what was learned")
	}
	resp := &StatsResponse{Synonyms: []store.LearnedSynonym{}, Rewrites: []store.LearnedRewrite{}, Affinities: []store.LayerAffinity{},
		Feedback: st.Feedback, LastRun: st.LastRun, PendingResets: st.PendingResets,
		Note: "Wrong and outdated ratings are kept and counted here but change no ranking."}
	for _, syn := range st.Synonyms {
		if req.Layer == "" || syn.Layer == "" || syn.Layer == req.Layer {
			resp.Synonyms = append(resp.Synonyms, syn)
		}
	}
	for _, rw := range st.Rewrites {
		if req.Layer == "" || rw.Layer == "" || rw.Layer == req.Layer {
			resp.Rewrites = append(resp.Rewrites, rw)
		}
	}
	for _, a := range st.Affinities {
		if req.Layer == "" || a.Layer == req.Layer {
			resp.Affinities = append(resp.Affinities, a)
		}
	}
	return resp, nil
}

// ResetRequest is strata_reset_learning's arguments. What to reset must be
// said: a layer, or the scope "all" for everything. An empty request (no
// body, null, {}) used to reset everything for good (issue 32, item 10).
type ResetRequest struct {
	Scope string `json:"scope,omitempty"`
	Layer string `json:"layer,omitempty"`
}

// The reset scopes a caller may name.
const (
	ResetScopeAll   = "all"
	ResetScopeLayer = "layer"
)

// Args describes strata_reset_learning's arguments.
func (ResetRequest) Args() toolargs.Args {
	return toolargs.Args{
		"scope": {Description: "What to reset: \"all\" removes everything learned, in every layer, for good; " +
			"\"layer\" (or leaving scope out and naming a layer) clears one layer. Required unless layer is given.",
			Enum: []string{ResetScopeAll, ResetScopeLayer}},
		"layer": {Description: "Clear what was learned for this layer only, keeping the history. " +
			"Not with scope \"all\".", MaxLength: MaxLayerName},
	}
}

// Validate checks the arguments: a reset names its scope, and a layer
// reset its layer.
func (r *ResetRequest) Validate() error {
	if err := qerr.CheckText("layer", "", r.Layer); err != nil {
		return err
	}
	switch {
	case r.Scope == "" && r.Layer == "":
		return qerr.Invalidf("scope", "say what to reset: {\"scope\": \"all\"} for everything learned, or {\"layer\": NAME} for one layer; nothing was reset")
	case r.Scope == ResetScopeAll && r.Layer != "":
		return qerr.Invalidf("layer", "is not taken with scope \"all\": name a layer or reset everything, not both; nothing was reset")
	case r.Scope == ResetScopeLayer && r.Layer == "":
		return qerr.Invalidf("layer", "is required with scope \"layer\"; nothing was reset")
	}
	return nil
}

// ResetResponse is strata_reset_learning's result.
type ResetResponse struct {
	Status  string `json:"status"`
	Scope   string `json:"scope"` // layer or global
	Layer   string `json:"layer,omitempty"`
	ResetID string `json:"reset_id"`
	Note    string `json:"note"`
}

// Reset records a reset request. The server lets only admins call it
// (Tool.AdminOnly).
func (s *Service) Reset(ctx context.Context, req ResetRequest) (*ResetResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.opt.Learned == nil {
		return nil, qerr.Unavailablef(nil, "learning is not set up on this server")
	}
	resp := &ResetResponse{Status: "ok", Scope: "global",
		Note: "Everything learned stops being applied now and is deleted on the promoter's next run; evidence from before the reset teaches nothing again."}
	if req.Layer != "" {
		layers, err := s.opt.Layers.Layers(ctx)
		if err != nil {
			return nil, store.CallerError(ctx, err, "list the layers")
		}
		if !slices.ContainsFunc(layers, func(l store.Layer) bool { return l.Name == req.Layer }) {
			return nil, qerr.Invalidf("layer", "there is no layer %q; nothing was reset", qerr.Clip(req.Layer))
		}
		resp.Scope, resp.Layer = "layer", req.Layer
		resp.Note = "What was learned for this layer stops being applied now and is deleted on the promoter's next run; the history is kept, and synonyms stored with no layer are not reached."
	}
	id, err := s.opt.Learned.RequestReset(ctx, caller.From(ctx), req.Layer)
	if err != nil {
		return nil, store.CallerError(ctx, err, "record the reset")
	}
	resp.ResetID = strconv.FormatInt(id, 10)
	return resp, nil
}
