package server

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func connect(t *testing.T, url, token string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: "2025-11-25", ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, init
}

func callTool(t *testing.T, c *client.Client, name string, args any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestMCPOverHTTP(t *testing.T) {
	ts := newTestServer(t, nil)
	c, init := connect(t, ts.url, readerToken)
	if !strings.Contains(init.Instructions, "strata_search") {
		t.Errorf("instructions do not arrive at connect: %q", init.Instructions)
	}
	ctx := context.Background()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	for _, tool := range tools.Tools {
		if tool.Name == ToolSearch {
			b, _ := json.Marshal(tool.InputSchema)
			if len(tool.RawInputSchema) > 0 {
				b = tool.RawInputSchema
			}
			_ = json.Unmarshal(b, &schema)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	topK, _ := props["top_k"].(map[string]any)
	if topK["type"] != "integer" || topK["minimum"] != 1.0 || topK["maximum"] != 50.0 || topK["default"] != 5.0 {
		t.Errorf("top_k schema %v", topK)
	}
	for _, p := range []string{"query", "layers", "metadata_filter", "explain"} {
		if d, _ := props[p].(map[string]any)["description"].(string); d == "" {
			t.Errorf("argument %s has no description", p)
		}
	}

	res, err := callTool(t, c, ToolSearch, map[string]any{"query": "carry over", "top_k": 3})
	if err != nil || res.IsError {
		t.Fatalf("strata_search: %v %s", err, resultText(res))
	}
	var text struct {
		Results []struct{ File, Lines string }
	}
	if err := json.Unmarshal([]byte(resultText(res)), &text); err != nil || len(text.Results) != 1 || text.Results[0].Lines != "12-14" {
		t.Errorf("text content %q", resultText(res))
	}
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"file":"leave-policy.md"`) {
		t.Errorf("structured content %s", sc)
	}

	res, err = callTool(t, c, ToolSearch, map[string]any{"query": "x", "top_k": 99})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), `"argument":"top_k"`) {
		t.Errorf("bad top_k: %v %s", err, resultText(res))
	}
	res, err = callTool(t, c, "test_admin_only", map[string]any{})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "forbidden") {
		t.Errorf("a reader calling an admin tool: %v %s", err, resultText(res))
	}

	admin, _ := connect(t, ts.url, adminToken)
	if res, err := callTool(t, admin, "test_admin_only", map[string]any{}); err != nil || res.IsError {
		t.Errorf("an admin calling an admin tool: %v %s", err, resultText(res))
	}
}

func TestMCPInternalErrorIsProtocolError(t *testing.T) {
	ts := newTestServer(t, func(_ *Config, d *Deps) { d.Searcher = &fakeSearcher{err: errSQL} })
	c, _ := connect(t, ts.url, readerToken)
	res, err := callTool(t, c, ToolSearch, map[string]any{"query": "x"})
	if err == nil {
		t.Fatalf("want an MCP error, got a result %s", resultText(res))
	}
	if strings.Contains(err.Error(), "SELECT") || strings.Contains(err.Error(), "SQLSTATE") || strings.Contains(err.Error(), "goroutine") {
		t.Errorf("the MCP error leaks: %v", err)
	}
}

func TestStdioEndsWhenClientCloses(t *testing.T) {
	s, err := New(DefaultConfig(), Deps{Searcher: &fakeSearcher{}})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	dec := json.NewDecoder(outR)
	send := func(msg string) { _, _ = io.WriteString(inW, msg+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	var init struct {
		Result struct{ Instructions string }
	}
	if err := dec.Decode(&init); err != nil || !strings.Contains(init.Result.Instructions, "strata_search") {
		t.Fatalf("initialize: %v %+v", err, init)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"strata_search","arguments":{"query":"x","layers":"handbook"}}}`)
	var call struct {
		Result struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := dec.Decode(&call); err != nil || !call.Result.IsError || !strings.Contains(call.Result.Content[0].Text, `"argument":"layers"`) {
		t.Errorf("bad layers over stdio: %v %+v", err, call)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after the client closed stdin: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return when stdin closed")
	}
}

func TestStdioCallerIsAdmin(t *testing.T) {
	s, err := newServer(DefaultConfig(), Deps{}, []Tool{adminOnlyTool()})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	defer inW.Close()
	dec := json.NewDecoder(outR)
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_admin_only","arguments":{}}}`+"\n")
	var call struct {
		Result struct{ IsError bool }
		Error  any
	}
	if err := dec.Decode(&call); err != nil || call.Result.IsError || call.Error != nil {
		t.Errorf("the stdio owner calling an admin tool: %v %+v", err, call)
	}
}
