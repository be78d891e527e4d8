package toolargs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

type sample struct {
	Name  string            `json:"name"`
	Tags  []string          `json:"tags,omitempty"`
	Size  int               `json:"size,omitempty"`
	Low   int               `json:"low,omitempty"`
	Mode  string            `json:"mode,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
	On    bool              `json:"on,omitempty"`
	Keep  *bool             `json:"keep,omitempty"`
	// validated counts Validate's runs.
	validated int
}

const maxSize = 9

func (sample) Args() Args {
	return Args{
		"name":  {Description: "A name.", MinLength: 1, MaxLength: 3},
		"tags":  {Description: "Tags.", MaxItems: 2, Items: &Arg{MinLength: 1}, Expect: "an array of tag names (strings)"},
		"size":  {Description: "A size.", Min: Limit(1), Max: Limit(maxSize), Default: 5},
		"low":   {Description: "At least 2.", Min: Limit(2)},
		"mode":  {Description: "A mode.", Enum: []string{"a", "b"}},
		"attrs": {Description: "Attributes.", MaxProperties: 2, Values: &Arg{MaxLength: 2, Expect: `a string, such as "x"`}},
		"on":    {Description: "A switch.", Default: false},
		"keep":  {Description: "On unless set to false.", Default: true},
	}
}

func (s *sample) Validate() error {
	s.validated++
	if s.Name == "bad" {
		return qerr.Invalidf("name", "is bad")
	}
	return nil
}

func TestDecodeErrorsNameTheArgument(t *testing.T) {
	cases := []struct{ args, arg, msg string }{
		{`{}`, "name", "name: is required"},
		{`{"name":null}`, "name", "name: is required"},
		{`[1]`, "arguments", "arguments: must be a JSON object"},
		{`{"name":"a","zz":1,"aa":2}`, "aa", "aa: is not an argument of this tool (it takes name, tags, size, low, mode, attrs, on, keep)"},
		{`{"name":7}`, "name", "name: must be a string"},
		{`{"name":""}`, "name", "name: must not be empty"},
		{`{"name":"abcd"}`, "name", "name: is longer than 3 characters"},
		{`{"name":"a","tags":"x"}`, "tags", "tags: must be an array of tag names (strings)"},
		{`{"name":"a","tags":["x",""]}`, "tags", "tags: entry 1 is empty"},
		{`{"name":"a","tags":["x","y","z"]}`, "tags", "tags: has 3 entries, at most 2 are allowed"},
		{`{"name":"a","size":"5"}`, "size", "size: must be a whole number from 1 to 9"},
		{`{"name":"a","size":true}`, "size", "size: must be a whole number from 1 to 9"},
		{`{"name":"a","size":2.5}`, "size", "size: must be a whole number from 1 to 9, got 2.5"},
		{`{"name":"a","size":1e30}`, "size", "size: must be a whole number from 1 to 9, got 1e30"},
		{`{"name":"a","size":1e400}`, "size", "size: must be a whole number from 1 to 9, got 1e400"},
		{`{"name":"a","size":10.0}`, "size", "size: must be from 1 to 9, got 10"},
		{`{"name":"a","size":10}`, "size", "size: must be from 1 to 9, got 10"},
		{`{"name":"a","size":0}`, "size", "size: must be from 1 to 9, got 0"},
		{`{"name":"a","low":1}`, "low", "low: must be at least 2, got 1"},
		{`{"name":"a","low":"x"}`, "low", "low: must be a whole number"},
		{`{"name":"a","mode":"c"}`, "mode", `mode: must be one of a, b, got "c"`},
		{`{"name":"a","attrs":[]}`, "attrs", "attrs: must be an object of string values"},
		{`{"name":"a","attrs":{"k":1}}`, "attrs", `attrs: the value of "k" must be a string, such as "x"`},
		{`{"name":"a","attrs":{"k":"xyz"}}`, "attrs", `attrs: the value of "k" is longer than 2 characters`},
		{`{"name":"a","attrs":{"a":"","b":"","c":""}}`, "attrs", "attrs: has 3 keys, at most 2 are allowed"},
		{`{"name":"a","on":"yes"}`, "on", "on: must be true or false"},
		{`{"name":"bad"}`, "name", "name: is bad"},
	}
	for _, c := range cases {
		_, err := Decode[sample](json.RawMessage(c.args))
		var e *qerr.Error
		if !errors.As(err, &e) || e.Kind != qerr.Invalid || e.Arg != c.arg || err.Error() != c.msg {
			t.Errorf("%s: error %v, want %q naming %s", c.args, err, c.msg, c.arg)
		}
	}
}

func TestDecodeFillsTheStruct(t *testing.T) {
	got, err := Decode[sample](json.RawMessage(`{"name":"ab","tags":["x"],"size":9,"low":2,"mode":"b","attrs":{"k":"v"},"on":true,"tags":null}`))
	if err != nil {
		t.Fatal(err)
	}
	// A repeated name: encoding/json keeps the last, so tags is left out.
	if got.Name != "ab" || got.Tags != nil || got.Size != 9 || got.Low != 2 || got.Mode != "b" || got.Attrs["k"] != "v" || !got.On || got.validated != 1 {
		t.Errorf("decoded %+v", got)
	}
	// A *bool tells "not given" (nil) from false.
	if got.Keep != nil {
		t.Errorf("keep not given: %v", *got.Keep)
	}
	for raw, want := range map[string]bool{`{"name":"a","keep":false}`: false, `{"name":"a","keep":true}`: true} {
		got, err := Decode[sample](json.RawMessage(raw))
		if err != nil || got.Keep == nil || *got.Keep != want {
			t.Errorf("%s: %+v %v", raw, got.Keep, err)
		}
	}
	if _, err := Decode[sample](json.RawMessage(`{"name":"a","keep":"no"}`)); err == nil || !strings.Contains(err.Error(), "keep: must be true or false") {
		t.Errorf("keep \"no\": %v", err)
	}
	for _, raw := range []string{"", "null", " null "} {
		if _, err := Decode[sample](json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), "name: is required") {
			t.Errorf("%q: %v, want name: is required", raw, err)
		}
	}
	// JSON schema's integers include 2.0 and 2e0.
	if got, err := Decode[sample](json.RawMessage(`{"name":"a","size":2.0,"low":2e0}`)); err != nil || got.Size != 2 || got.Low != 2 {
		t.Errorf("2.0 and 2e0: %+v %v", got, err)
	}
	// Lengths count characters, not bytes.
	if _, err := Decode[sample](json.RawMessage(`{"name":"ééé"}`)); err != nil {
		t.Errorf("three two-byte characters: %v", err)
	}
}

func TestSchemaCarriesTheLimits(t *testing.T) {
	s, err := Schema[sample]()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var got struct {
		Type                 string
		Required             []string
		AdditionalProperties *bool
		Properties           map[string]map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "object" || len(got.Required) != 1 || got.Required[0] != "name" || got.AdditionalProperties == nil || *got.AdditionalProperties {
		t.Errorf("schema %s", b)
	}
	p := got.Properties
	want := map[string]map[string]any{
		"name":  {"type": "string", "minLength": 1.0, "maxLength": 3.0},
		"tags":  {"type": "array", "maxItems": 2.0},
		"size":  {"type": "integer", "minimum": 1.0, "maximum": float64(maxSize), "default": 5.0},
		"low":   {"type": "integer", "minimum": 2.0},
		"attrs": {"type": "object", "maxProperties": 2.0},
		"on":    {"type": "boolean", "default": false},
	}
	for name, kv := range want {
		for k, v := range kv {
			if p[name][k] != v {
				t.Errorf("%s.%s = %v, want %v (%s)", name, k, p[name][k], v, b)
			}
		}
		if p[name]["description"] == "" {
			t.Errorf("%s has no description", name)
		}
	}
	if items := p["tags"]["items"].(map[string]any); items["minLength"] != 1.0 || items["type"] != "string" {
		t.Errorf("tags.items %v", items)
	}
	if e, _ := p["mode"]["enum"].([]any); len(e) != 2 || e[0] != "a" {
		t.Errorf("mode.enum %v", p["mode"]["enum"])
	}
	if v := p["attrs"]["additionalProperties"].(map[string]any); v["maxLength"] != 2.0 || v["type"] != "string" {
		t.Errorf("attrs.additionalProperties %v", v)
	}
}

type noDescription struct {
	A string `json:"a"`
	B string `json:"b"`
}

func (noDescription) Args() Args { return Args{"a": {Description: "A."}} }

type extraArg struct {
	A string `json:"a"`
}

func (extraArg) Args() Args { return Args{"a": {Description: "A."}, "b": {Description: "B."}} }

type badKind struct {
	A float64 `json:"a"`
}

func (badKind) Args() Args { return Args{"a": {Description: "A."}} }

type wrongLimit struct {
	A string `json:"a"`
}

func (wrongLimit) Args() Args { return Args{"a": {Description: "A.", Max: Limit(3)}} }

type noName struct {
	A string
}

func (noName) Args() Args { return Args{"A": {Description: "A."}} }

// TestDefinitionsThatDisagreeAreRefused: a struct and its Args that do not
// match fail Schema and Decode, so the server does not start with a tool
// whose schema says less than its decoder does.
func TestDefinitionsThatDisagreeAreRefused(t *testing.T) {
	for name, f := range map[string]func() error{
		"field without Arg":       func() error { _, err := Schema[noDescription](); return err },
		"Arg without field":       func() error { _, err := Schema[extraArg](); return err },
		"unsupported type":        func() error { _, err := Schema[badKind](); return err },
		"limit of the wrong kind": func() error { _, err := Schema[wrongLimit](); return err },
		"field without json name": func() error { _, err := Schema[noName](); return err },
		"Decode too":              func() error { _, err := Decode[extraArg](json.RawMessage(`{"a":"x"}`)); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
