package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stratakb/stratakb/queryd/internal/toolargs"
)

// limitsArgs are the arguments of a tool that exists only in this test: it
// declares the limits strata_search does not use (enum, maxItems, bounds on
// one side only, lengths of entries and values), so the agreement test
// below covers every keyword that toolargs can publish.
type limitsArgs struct {
	Mode  string            `json:"mode"`
	Tags  []string          `json:"tags,omitempty"`
	Count int               `json:"count,omitempty"`
	Page  int               `json:"page,omitempty"`
	Label string            `json:"label,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
	Dry   bool              `json:"dry,omitempty"`
}

func (limitsArgs) Args() toolargs.Args {
	return toolargs.Args{
		"mode":  {Description: "A mode.", Enum: []string{"fast", "slow"}},
		"tags":  {Description: "Tags.", MaxItems: 3, Items: &toolargs.Arg{MinLength: 1, MaxLength: 5}},
		"count": {Description: "A count.", Min: toolargs.Limit(0)},
		"page":  {Description: "A page.", Max: toolargs.Limit(9)},
		"label": {Description: "A label.", MinLength: 2, MaxLength: 4},
		"attrs": {Description: "Attributes.", MaxProperties: 2, Values: &toolargs.Arg{Enum: []string{"on", "off"}}},
		"dry":   {Description: "Dry run.", Default: false},
	}
}

var limitsSpec = toolSpec[limitsArgs]{
	Tool:    Tool{Name: "test_limits", Description: "Takes arguments with every kind of limit.", HTTPPath: "/v1/test-limits"},
	Summary: "test", Component: "TestLimits",
	Run: func(*Server) (func(context.Context, limitsArgs) (Outcome, error), bool) {
		return func(context.Context, limitsArgs) (Outcome, error) {
			return Outcome{Value: map[string]string{"status": "ok"}}, nil
		}, true
	},
}

// exercised are the schema keywords the agreement test generates values
// for. A property with another keyword fails the test: a limit the test
// cannot exercise could be published without being enforced.
var exercised = []string{"type", "description", "default", "minimum", "maximum", "minLength", "maxLength", "enum",
	"items", "maxItems", "additionalProperties", "maxProperties"}

// TestSchemaAndHandlersAgree holds each tool's published schema to what its
// handler does. For every property, values at and just past each declared
// limit, and values of every JSON type, go to the real handler over HTTP
// and over MCP; each must be accepted exactly when jsonschema-go's
// validator accepts it against the schema, and each refusal must be
// invalid_argument naming the property. Unknown properties are refused
// (additionalProperties false), naming them; null counts as left out.
func TestSchemaAndHandlersAgree(t *testing.T) {
	d := limitsSpec.def()
	if d.err != nil {
		t.Fatal(d.err)
	}
	call, _ := d.bind(nil)
	limits := d.tool
	limits.Call = call
	ts := newTestServer(t, nil)
	s, err := newServer(ts.cfg, ts.deps, []Tool{limits})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	url := hs.URL
	c, _ := connect(t, url, readerToken)

	tested := 0
	for _, tool := range s.tools {
		if tool.Name == "test_admin_only" {
			continue
		}
		tested++
		t.Run(tool.Name, func(t *testing.T) {
			var sch jsonschema.Schema
			if err := json.Unmarshal(tool.Schema, &sch); err != nil {
				t.Fatal(err)
			}
			resolved, err := sch.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				Properties map[string]map[string]any
				Required   []string
			}
			_ = json.Unmarshal(tool.Schema, &raw)
			base := map[string]any{}
			for _, name := range raw.Required {
				base[name] = valid(raw.Properties[name])
			}
			check := func(what string, args map[string]any, wantOK bool, wantArg string) {
				t.Helper()
				body, _ := json.Marshal(args)
				r := post(t, url+tool.HTTPPath, readerToken, string(body))
				switch {
				case wantOK && r.status != 200:
					t.Errorf("%s: HTTP %d, the schema accepts it: %.300s", what, r.status, r.body)
				case !wantOK && r.status != 400:
					t.Errorf("%s: HTTP %d, the schema refuses it: %.300s", what, r.status, r.body)
				case !wantOK:
					if e := r.errorBody(t); e.Code != "invalid_argument" || e.Argument != wantArg {
						t.Errorf("%s: HTTP error %+v, want invalid_argument naming %s", what, e, wantArg)
					}
				}
				res, err := callTool(t, c, tool.Name, args)
				switch {
				case err != nil:
					t.Errorf("%s: MCP error %v", what, err)
				case wantOK && res.IsError:
					t.Errorf("%s: MCP refused it, the schema accepts it: %.300s", what, resultText(res))
				case !wantOK && (!res.IsError || !strings.Contains(resultText(res), `"argument":"`+wantArg+`"`)):
					t.Errorf("%s: MCP result %.300s, want a tool error naming %s", what, resultText(res), wantArg)
				}
			}
			if err := resolved.Validate(base); err != nil {
				t.Fatalf("the base arguments %v do not fit the schema: %v", base, err)
			}
			check("the required arguments only", base, true, "")
			for _, name := range slices.Sorted(maps.Keys(raw.Properties)) {
				p := raw.Properties[name]
				for k := range p {
					if !slices.Contains(exercised, k) {
						t.Errorf("%s has keyword %s, which this test does not exercise", name, k)
					}
				}
				for _, v := range candidates(p) {
					args := maps.Clone(base)
					args[name] = v
					ok := resolved.Validate(args) == nil
					check(fmt.Sprintf("%s=%s", name, short(v)), args, ok, name)
				}
				args := maps.Clone(base)
				args[name] = nil
				check(name+"=null (left out)", args, !slices.Contains(raw.Required, name), name)
			}
			args := maps.Clone(base)
			args["no_such_argument"] = 1
			if resolved.Validate(args) == nil {
				t.Errorf("the schema accepts unknown arguments")
			}
			check("an unknown argument", args, false, "no_such_argument")
		})
	}
	if tested < 2 {
		t.Errorf("tested %d tools", tested)
	}
}

// valid returns a value the property's schema accepts.
func valid(p map[string]any) any {
	if e, ok := p["enum"].([]any); ok {
		return e[0]
	}
	switch p["type"] {
	case "string":
		return strings.Repeat("a", max(1, num(p, "minLength")))
	case "integer":
		if m, ok := p["minimum"].(float64); ok {
			return int(m)
		}
		if m, ok := p["maximum"].(float64); ok {
			return int(m)
		}
		return 1
	case "boolean":
		return true
	case "array":
		return []any{valid(sub(p, "items"))}
	case "object":
		return map[string]any{"k0": valid(sub(p, "additionalProperties"))}
	}
	return nil
}

// candidates returns values of every JSON type, values far out (long,
// many, large) that a property without limits must take, and for each
// limit the property declares, values at the limit and just past it.
func candidates(p map[string]any) []any {
	out := []any{"x", 7, 2.5, true, []any{"x"}, map[string]any{"k0": "x"}}
	switch p["type"] {
	case "string":
		out = append(out, strings.Repeat("a", 5000), "")
		if n, ok := p["minLength"].(float64); ok {
			out = append(out, strings.Repeat("a", int(n)), strings.Repeat("a", int(n)-1))
		}
		if n, ok := p["maxLength"].(float64); ok {
			// Lengths count characters: é is two bytes.
			out = append(out, strings.Repeat("a", int(n)), strings.Repeat("a", int(n)+1), strings.Repeat("é", int(n)), strings.Repeat("é", int(n)+1))
		}
		if e, ok := p["enum"].([]any); ok {
			out = append(out, e...)
			out = append(out, fmt.Sprint(e[0])+"-not")
		}
	case "integer":
		for _, k := range []string{"minimum", "maximum"} {
			if n, ok := p[k].(float64); ok {
				out = append(out, int(n)-1, int(n), int(n)+1)
			}
		}
		out = append(out, 0, -1, 1_000_000, -1_000_000)
	case "boolean":
		out = append(out, false)
	case "array":
		items := sub(p, "items")
		for _, v := range candidates(items) {
			out = append(out, []any{v})
		}
		if n, ok := p["maxItems"].(float64); ok {
			for _, k := range []int{int(n), int(n) + 1} {
				var a []any
				for range k {
					a = append(a, valid(items))
				}
				out = append(out, a)
			}
		}
		out = append(out, []any{}, slices.Repeat([]any{valid(items)}, 100))
	case "object":
		values := sub(p, "additionalProperties")
		for _, v := range candidates(values) {
			out = append(out, map[string]any{"k0": v})
		}
		if n, ok := p["maxProperties"].(float64); ok {
			for _, k := range []int{int(n), int(n) + 1} {
				m := map[string]any{}
				for i := range k {
					m[fmt.Sprintf("k%d", i)] = valid(values)
				}
				out = append(out, m)
			}
		}
		many := map[string]any{}
		for i := range 100 {
			many[fmt.Sprintf("k%d", i)] = valid(values)
		}
		out = append(out, map[string]any{}, many)
	}
	return out
}

func sub(p map[string]any, k string) map[string]any {
	m, _ := p[k].(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

func num(p map[string]any, k string) int {
	n, _ := p[k].(float64)
	return int(n)
}

// short describes a value in a failure message.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return fmt.Sprintf("%.40s… (%d bytes, %s)", b, len(b), reflect.TypeOf(v))
	}
	return string(b)
}
