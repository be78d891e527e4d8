package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the tool definitions")

// TestOpenAPIFileIsGenerated keeps the committed openapi.json, which
// readers of the repository see, equal to what the server serves.
func TestOpenAPIFileIsGenerated(t *testing.T) {
	got, err := openAPIDocument(toolDefs)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("openapi.json differs from the generated document at line %d:\n  file:      %s\n  generated: %s\nrun go generate ./queryd/internal/server (go test -run TestOpenAPIFileIsGenerated -update)", i+1, w, g)
			}
		}
	}
	ts := newTestServer(t, nil)
	if r := do(t, "GET", ts.url+"/openapi.json", "", nil, nil); !bytes.Equal(r.body, want) {
		t.Errorf("/openapi.json serves something else than openapi.json")
	}
}

// TestOpenAPIRefsResolve: every $ref points at a component that exists.
func TestOpenAPIRefsResolve(t *testing.T) {
	b, err := openAPIDocument(toolDefs)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				n++
				if lookup(doc, r) == nil {
					t.Errorf("$ref %s resolves to nothing", r)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if n < 10 {
		t.Errorf("only %d $refs: the walk is broken", n)
	}
}

// lookup follows a local JSON pointer such as #/components/schemas/Error.
func lookup(doc map[string]any, ref string) map[string]any {
	cur := doc
	for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// TestOpenAPIListsEveryErrorStatus: each error kind's status and code, and
// each code the transports answer with, is documented on every tool path.
func TestOpenAPIListsEveryErrorStatus(t *testing.T) {
	documented := map[int][]string{}
	for _, e := range httpErrors {
		documented[e.status] = e.codes
	}
	for kind, k := range errorKinds {
		if !slices.Contains(documented[k.status], k.code) {
			t.Errorf("error kind %v (%d %s) is not in httpErrors", kind, k.status, k.code)
		}
	}
	for _, c := range []string{codeMethodNotAllowed, codeRequestTimeout, codeTooLarge, codeUnsupportedMediaType} {
		found := false
		for _, codes := range documented {
			found = found || slices.Contains(codes, c)
		}
		if !found {
			t.Errorf("code %s is not in httpErrors", c)
		}
	}
	b, _ := openAPIDocument(toolDefs)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range toolDefs {
		if d.tool.HTTPPath == "" {
			continue
		}
		var got []string
		for s := range doc.Paths[d.tool.HTTPPath]["post"].Responses {
			got = append(got, s)
		}
		sort.Strings(got)
		want := []string{"200", "400", "401", "403", "404", "405", "408", "413", "415", "500", "503"}
		if !slices.Equal(got, want) {
			t.Errorf("%s documents responses %v, want %v", d.tool.HTTPPath, got, want)
		}
	}
}

// TestOpenAPIResponseSchemasMatchGoTypes: the hand-written response schema
// of each tool names exactly the JSON fields of its Go type, and so do the
// object schemas it refers to for fields that are structs.
func TestOpenAPIResponseSchemasMatchGoTypes(t *testing.T) {
	b, _ := openAPIDocument(toolDefs)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range toolDefs {
		if d.tool.HTTPPath == "" {
			continue
		}
		if d.response == nil {
			t.Errorf("tool %s: no response type", d.tool.Name)
			continue
		}
		matchType(t, doc, d.component+"Response", lookup(doc, "#/components/schemas/"+d.component+"Response"), d.response)
	}
}

func matchType(t *testing.T, doc map[string]any, where string, schema map[string]any, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
		if items, ok := schema["items"].(map[string]any); ok {
			schema = items
		}
	}
	if r, ok := schema["$ref"].(string); ok {
		where, schema = r, lookup(doc, r)
	}
	props, _ := schema["properties"].(map[string]any)
	if typ.Kind() != reflect.Struct || props == nil {
		return // documented as a free-form object, or not an object
	}
	fields := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			fields[name] = f.Type
		}
	}
	for name, ft := range fields {
		p, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s does not document %s.%s", where, typ.Name(), name)
			continue
		}
		matchType(t, doc, where+"."+name, p, ft)
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s documents %s, which %s does not have", where, name, typ.Name())
		}
	}
}
