package server

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stratakb/stratakb/queryd/internal/ask"
)

// TestAskOutputSchemaAcceptsEveryPassageKind: strata_ask's outputSchema
// (what MCP clients validate structuredContent against) accepts a
// response holding each kind of passage the asker hands back: an ordinary
// one, a named section and a names passage. An enum that lags behind the
// asker makes the SDK client reject the whole answer.
func TestAskOutputSchemaAcceptsEveryPassageKind(t *testing.T) {
	raw, err := outputSchema("Ask")
	if err != nil {
		t.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	resolved, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	cite := ask.Citation{File: "supply.md", Lines: "3-4", Layer: "contracts"}
	resp := ask.Response{Status: "found", Mode: ask.ModeGrounded, Passages: []ask.Passage{
		{ID: "S1", Ref: "d1:10-20", Text: "clause text", Citation: cite},
		{ID: "S2", Ref: "d1:30-40", Text: "7.2 Notice", Citation: cite, Match: "exact"},
		{ID: "S3", Ref: "d1:0-9", Text: "the parties", Citation: cite, Match: ask.MatchNames},
	}}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(v); err != nil {
		t.Errorf("the outputSchema refuses %s: %v", b, err)
	}
	// The check can fail: a match the schema does not list is refused.
	resp.Passages[2].Match = "guessed"
	b, _ = json.Marshal(resp)
	_ = json.Unmarshal(b, &v)
	if err := resolved.Validate(v); err == nil {
		t.Errorf("the outputSchema accepts a passage with match %q", "guessed")
	}
}
