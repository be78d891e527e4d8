package server

import (
	"context"
	"reflect"

	"github.com/stratakb/stratakb/queryd/internal/learning"
)

// Learner serves strata_feedback, strata_learning_stats and
// strata_reset_learning; *learning.Service is one.
type Learner interface {
	Feedback(ctx context.Context, req learning.FeedbackRequest) (*learning.FeedbackResponse, error)
	Stats(ctx context.Context, req learning.StatsRequest) (*learning.StatsResponse, error)
	Reset(ctx context.Context, req learning.ResetRequest) (*learning.ResetResponse, error)
}

var _ Learner = (*learning.Service)(nil)

var feedbackSpec = toolSpec[learning.FeedbackRequest]{
	Tool: Tool{
		Name: ToolFeedback,
		Description: "Rate a strata_ask answer you received, by its interaction_id: whether it helped, the layer it belonged to, " +
			"a wording that would have worked, and ratings of single passages (useful, wrong, outdated). " +
			"The server learns from ratings, rephrasings and layer switches.",
		HTTPPath: "/v1/feedback",
	},
	Summary:   "Rate an answer (strata_feedback)",
	Component: "Feedback",
	Response:  reflect.TypeFor[learning.FeedbackResponse](),
	Logged:    func(r learning.FeedbackRequest) string { return r.BetterQuery },
	Run: func(s *Server) (func(context.Context, learning.FeedbackRequest) (Outcome, error), bool) {
		if s.deps.Learner == nil {
			return nil, false
		}
		return func(ctx context.Context, req learning.FeedbackRequest) (Outcome, error) {
			resp, err := s.deps.Learner.Feedback(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp}, nil
		}, true
	},
}

var statsSpec = toolSpec[learning.StatsRequest]{
	Tool: Tool{
		Name: ToolLearningStats,
		Description: "Show what the server has learned from its use: each synonym with its layer and usage_count, " +
			"the ratings given, and the promoter's last run.",
		HTTPPath: "/v1/learning/stats",
	},
	Summary:   "Show what was learned (strata_learning_stats)",
	Component: "LearningStats",
	Response:  reflect.TypeFor[learning.StatsResponse](),
	Run: func(s *Server) (func(context.Context, learning.StatsRequest) (Outcome, error), bool) {
		if s.deps.Learner == nil {
			return nil, false
		}
		return func(ctx context.Context, req learning.StatsRequest) (Outcome, error) {
			resp, err := s.deps.Learner.Stats(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp, Results: len(resp.Synonyms)}, nil
		}, true
	},
}

var resetSpec = toolSpec[learning.ResetRequest]{
	Tool: Tool{
		Name: ToolResetLearning,
		Description: "Admins only. Clear what the server learned: for one layer ({\"layer\": NAME}; the history is kept) " +
			"or everything for good ({\"scope\": \"all\"}). A call that names neither is refused.",
		AdminOnly: true,
		HTTPPath:  "/v1/learning/reset",
	},
	Summary:   "Clear what was learned (strata_reset_learning)",
	Component: "ResetLearning",
	Response:  reflect.TypeFor[learning.ResetResponse](),
	Run: func(s *Server) (func(context.Context, learning.ResetRequest) (Outcome, error), bool) {
		if s.deps.Learner == nil {
			return nil, false
		}
		return func(ctx context.Context, req learning.ResetRequest) (Outcome, error) {
			resp, err := s.deps.Learner.Reset(ctx, req)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Value: resp}, nil
		}, true
	},
}
