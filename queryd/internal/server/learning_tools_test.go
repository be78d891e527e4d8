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
	if r := post(t, ts.url+"/v1/learning/reset", adminToken, `{"scope": "all"}`); r.status != 200 || l.resets != 1 {
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

// TestResetLearningNeedsAScope: an admin's reset with no body, null or {}
// reset everything learned for good (issue 32, item 10). A reset now says
// what it resets, {"scope": "all"} or a layer, over HTTP and MCP alike.
func TestResetLearningNeedsAScope(t *testing.T) {
	l := &countingLearner{}
	ts := newTestServer(t, func(_ *Config, d *Deps) { d.Learner = l })
	for _, body := range []string{``, `null`, `{}`, `{"layer": ""}`, `{"layer": null}`, `{"scope": "everything"}`,
		`{"scope": "layer"}`, `{"scope": "all", "layer": "sepa"}`, `{"scope": ""}`} {
		r := post(t, ts.url+"/v1/learning/reset", adminToken, body)
		if r.status != 400 || r.errorBody(t).Code != "invalid_argument" {
			t.Errorf("reset with %q: status %d: %s", body, r.status, r.body)
		}
	}
	if l.resets != 0 {
		t.Fatalf("%d resets ran without a scope", l.resets)
	}
	for _, body := range []string{`{"scope": "all"}`, `{"layer": "sepa"}`, `{"scope": "layer", "layer": "sepa"}`} {
		if r := post(t, ts.url+"/v1/learning/reset", adminToken, body); r.status != 200 {
			t.Errorf("reset with %s: status %d: %s", body, r.status, r.body)
		}
	}
	if l.resets != 3 {
		t.Errorf("%d resets ran, want 3", l.resets)
	}
	c, _ := connect(t, ts.url, adminToken)
	for _, args := range []any{nil, map[string]any{}} {
		res, err := callTool(t, c, ToolResetLearning, args)
		if err != nil || !res.IsError || !strings.Contains(resultText(res), "scope") {
			t.Errorf("MCP reset with %v: %v %+v", args, err, res)
		}
	}
	if res, err := callTool(t, c, ToolResetLearning, map[string]any{"scope": "all"}); err != nil || res.IsError {
		t.Errorf("MCP reset of everything: %v %+v", err, res)
	}
	if l.resets != 4 {
		t.Errorf("%d resets ran, want 4", l.resets)
	}
}
