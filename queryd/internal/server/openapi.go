package server

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// openapi.json is generated: openAPIDocument writes it from
// openapi_base.json and toolDefs, and TestOpenAPIFileIsGenerated fails when
// the committed copy differs (-update rewrites it).
//go:generate go test -run TestOpenAPIFileIsGenerated -update .

// openAPIBase is the hand-written part of the OpenAPI document: info, the
// routes that are not tools, and the response schemas. Everything about a
// tool's arguments and errors is generated.
//
//go:embed openapi_base.json
var openAPIBase []byte

// Error codes of answers given before a tool runs; the tools' own errors
// take their codes from errorKinds.
const (
	codeMethodNotAllowed     = "method_not_allowed"
	codeRequestTimeout       = "request_timeout"
	codeTooLarge             = "too_large"
	codeUnsupportedMediaType = "unsupported_media_type"
)

// httpErrors are the error answers of a tool's HTTP endpoint, as the
// OpenAPI document lists them. TestOpenAPIListsEveryErrorStatus holds it to
// errorKinds.
var httpErrors = []struct {
	status      int
	name        string // of the component under #/components/responses
	codes       []string
	description string
}{
	{http.StatusBadRequest, "Invalid", []string{"invalid_argument"},
		"An argument is wrong; error.argument names it. Arguments given as null count as left out; an argument the tool does not take is refused, naming it."},
	{http.StatusUnauthorized, "Unauthorized", []string{"unauthorized"}, "No bearer token, or an unknown one."},
	{http.StatusForbidden, "Forbidden", []string{"forbidden"},
		"The role may not do this, the Origin is not allowed, or a non-loopback client reached a server without tokens."},
	{http.StatusNotFound, "NotFound", []string{"not_found"}, "The thing asked for does not exist."},
	{http.StatusMethodNotAllowed, "MethodNotAllowed", []string{codeMethodNotAllowed}, "Tools take POST; the Allow header says so."},
	{http.StatusRequestTimeout, "RequestTimeout", []string{codeRequestTimeout}, "The body did not arrive within QUERYD_READ_TIMEOUT."},
	{http.StatusRequestEntityTooLarge, "TooLarge", []string{codeTooLarge}, "The body is over QUERYD_MAX_REQUEST_BYTES."},
	{http.StatusUnsupportedMediaType, "UnsupportedMediaType", []string{codeUnsupportedMediaType}, "The body is not application/json."},
	{http.StatusInternalServerError, "Internal", []string{"internal"}, "An internal fault; the server log has the details."},
	{http.StatusServiceUnavailable, "Unavailable", []string{"unavailable"},
		"The database is down, the request timed out, or every search slot stayed busy; retry after Retry-After seconds."},
}

// openAPIDocument builds the OpenAPI document served at /openapi.json:
// openapi_base.json, plus for each tool with an HTTP path its operation,
// its request schema (the one MCP clients get) and its error responses,
// and the error body with every code the server answers with.
func openAPIDocument(defs []toolDef) ([]byte, error) {
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Info       json.RawMessage           `json:"info"`
		Servers    json.RawMessage           `json:"servers"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes json.RawMessage            `json:"securitySchemes"`
			Schemas         map[string]json.RawMessage `json:"schemas"`
			Responses       map[string]any             `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIBase, &doc); err != nil {
		return nil, fmt.Errorf("read openapi_base.json: %w", err)
	}
	schemas := doc.Components.Schemas
	ref := func(kind, name string) map[string]string {
		return map[string]string{"$ref": "#/components/" + kind + "/" + name}
	}
	jsonBody := func(schema any) map[string]any {
		return map[string]any{"application/json": map[string]any{"schema": schema}}
	}
	for _, d := range defs {
		if d.err != nil {
			return nil, d.err
		}
		if d.tool.HTTPPath == "" {
			continue
		}
		req, resp := d.component+"Request", d.component+"Response"
		if _, ok := schemas[resp]; !ok {
			return nil, fmt.Errorf("tool %s: openapi_base.json has no schema %s", d.tool.Name, resp)
		}
		if _, ok := schemas[req]; ok {
			return nil, fmt.Errorf("tool %s: %s is generated, remove it from openapi_base.json", d.tool.Name, req)
		}
		schemas[req] = d.tool.Schema
		responses := map[string]any{
			"200": map[string]any{"description": "The tool ran.", "content": jsonBody(ref("schemas", resp))},
		}
		for _, e := range httpErrors {
			responses[strconv.Itoa(e.status)] = ref("responses", e.name)
		}
		desc := d.tool.Description + " Served over MCP as the tool " + d.tool.Name + ", with the same arguments."
		if d.tool.AdminOnly {
			desc += " Admin role only."
		}
		if _, dup := doc.Paths[d.tool.HTTPPath]; dup {
			return nil, fmt.Errorf("tool %s: path %s is in openapi_base.json or taken by another tool", d.tool.Name, d.tool.HTTPPath)
		}
		doc.Paths[d.tool.HTTPPath] = map[string]any{"post": map[string]any{
			"operationId": d.tool.Name,
			"summary":     d.summary,
			"description": desc,
			"security":    []any{map[string]any{"bearer": []any{}}},
			"requestBody": map[string]any{"required": true, "content": jsonBody(ref("schemas", req))},
			"responses":   responses,
		}}
	}
	var codes []string
	doc.Components.Responses = map[string]any{}
	for _, e := range httpErrors {
		codes = append(codes, e.codes...)
		r := map[string]any{"description": e.description, "content": jsonBody(ref("schemas", "Error"))}
		if e.status == http.StatusServiceUnavailable {
			r["headers"] = map[string]any{"Retry-After": map[string]any{"schema": map[string]string{"type": "integer"}}}
		}
		doc.Components.Responses[e.name] = r
	}
	slices.Sort(codes)
	errSchema, err := json.Marshal(map[string]any{
		"type":     "object",
		"required": []string{"error"},
		"properties": map[string]any{"error": map[string]any{
			"type":     "object",
			"required": []string{"code", "message"},
			"properties": map[string]any{
				"code":     map[string]any{"type": "string", "enum": codes},
				"message":  map[string]any{"type": "string", "description": "What is wrong, starting with the argument's name for invalid_argument."},
				"argument": map[string]any{"type": "string", "description": "The argument at fault, for invalid_argument."},
			},
		}},
	})
	if err != nil {
		return nil, err
	}
	schemas["Error"] = errSchema
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("write the OpenAPI document: %w", err)
	}
	return out.Bytes(), nil
}

// outputSchema returns a tool's response schema from openapi_base.json with
// every $ref inlined, as MCP's outputSchema wants a self-contained JSON
// schema; nil when the tool documents none.
func outputSchema(component string) (json.RawMessage, error) {
	var base struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIBase, &base); err != nil {
		return nil, fmt.Errorf("read openapi_base.json: %w", err)
	}
	schemas := base.Components.Schemas
	root, ok := schemas[component+"Response"]
	if !ok {
		return nil, nil
	}
	var inline func(v any, depth int) (any, error)
	inline = func(v any, depth int) (any, error) {
		if depth > 16 {
			return nil, fmt.Errorf("schema %sResponse: $ref nesting too deep", component)
		}
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				name, found := bytes.CutPrefix([]byte(r), []byte("#/components/schemas/"))
				target, ok := schemas[string(name)]
				if !found || !ok {
					return nil, fmt.Errorf("schema %sResponse: unknown $ref %s", component, r)
				}
				return inline(target, depth+1)
			}
			out := make(map[string]any, len(x))
			for k, e := range x {
				var err error
				if out[k], err = inline(e, depth); err != nil {
					return nil, err
				}
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				var err error
				if out[i], err = inline(e, depth); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		return v, nil
	}
	s, err := inline(root, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}
