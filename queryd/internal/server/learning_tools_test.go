package server

import (
	"context"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/learning"
)

// countingLearner counts resets; the real service is tested against
// PostgreSQL in package learning.
type countingLearner struct{ resets int }

func (c *countingLearner) Feedback(context.Context, learning.FeedbackRequest) (*learning.FeedbackResponse, error) {
	return &learning.FeedbackResponse{Status: "ok", FeedbackID: "1"}, nil
}

func (c *countingLearner) Stats(context.Context, learning.StatsRequest) (*learning.StatsResponse, error) {
	return &learning.StatsResponse{}, nil
}

func (c *countingLearner) Reset(_ context.Context, req learning.ResetRequest) (*learning.ResetResponse, error) {
	c.resets++
	return &learning.ResetResponse{Status: "ok", Scope: "global", ResetID: "1", Note: "n"}, nil
}

func TestResetLearningIsForAdminsOnly(t *testing.T) {
	l := &countingLearner{}
	ts := newTestServer(t, func(_ *Config, d *Deps) { d.Learner = l })
	r := post(t, ts.url+"/v1/learning/reset", readerToken, `{"layer": "sepa"}`)
	if r.status != 403 || !strings.Contains(r.errorBody(t).Message, "admins only") || l.resets != 0 {
		t.Errorf("reader: status %d, %d resets: %s", r.status, l.resets, r.body)
	}
	if r := post(t, ts.url+"/v1/learning/reset", adminToken, `{}`); r.status != 200 || l.resets != 1 {
		t.Errorf("admin: status %d, %d resets: %s", r.status, l.resets, r.body)
	}
	if r := post(t, ts.url+"/v1/learning/stats", readerToken, `{}`); r.status != 200 {
		t.Errorf("stats as reader: status %d: %s", r.status, r.body)
	}
	r = post(t, ts.url+"/v1/feedback", readerToken, `{"interaction_id": "1", "helpful": true, "chunk_feedback": {"S1": "great"}}`)
	if r.status != 400 || !strings.Contains(r.errorBody(t).Message, "useful, wrong, outdated") {
		t.Errorf("a bad rating over HTTP: status %d: %s", r.status, r.body)
	}
}
