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
