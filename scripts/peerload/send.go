package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"
)

// sender sends one query as client c and returns the documents answered,
// best first.
type sender func(c int, text string) ([]string, error)

// newSender returns the sender of the target and mode. Each client has a
// keep-alive connection, and over StrataKB's MCP a session of its own.
func newSender(c config) (sender, error) {
	if c.url == "" {
		return nil, errors.New("-url is required")
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: c.clients + 1, MaxConnsPerHost: c.clients + 1}}
	switch {
	case c.target == "strata" && c.mode == "rest":
		return func(_ int, text string) ([]string, error) {
			body := map[string]any{"query": text, "layers": []string{c.layer}, "top_k": c.top}
			raw, _, err := post(hc, c.url+"/v1/search", body, nil)
			if err != nil {
				return nil, err
			}
			return strataDocs(raw)
		}, nil
	case c.target == "strata" && c.mode == "mcp":
		return strataMCP(hc, c)
	case c.target == "qmd" && (c.mode == "rest" || c.mode == "mcp"):
		return qmdSender(hc, c), nil
	}
	return nil, fmt.Errorf("unknown target %q or mode %q", c.target, c.mode)
}

func strataMCP(hc *http.Client, c config) (sender, error) {
	sessions := make([]string, c.clients)
	for i := range sessions {
		init := rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "peerload", "version": "1"}})
		_, h, err := post(hc, c.url+"/mcp", init, nil)
		if err != nil {
			return nil, fmt.Errorf("mcp initialize: %w", err)
		}
		sessions[i] = h.Get("Mcp-Session-Id")
		note := map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}
		if _, _, err := post(hc, c.url+"/mcp", note, sessionHeader(sessions[i])); err != nil {
			return nil, fmt.Errorf("mcp initialized: %w", err)
		}
	}
	return func(client int, text string) ([]string, error) {
		args := map[string]any{"query": text, "layers": []string{c.layer}, "top_k": c.top}
		raw, _, err := post(hc, c.url+"/mcp", rpc(2, "tools/call", map[string]any{"name": "strata_search", "arguments": args}),
			sessionHeader(sessions[client]))
		if err != nil {
			return nil, err
		}
		res, err := rpcResult(raw)
		if err != nil {
			return nil, err
		}
		var r struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
			return nil, fmt.Errorf("mcp: no content in %.200s", res)
		}
		return strataDocs([]byte(r.Content[0].Text))
	}, nil
}

// qmdSender sends qmd's lex-only query (rerank off), over REST POST /query
// or MCP tools/call "query", as the peer harness does.
func qmdSender(hc *http.Client, c config) sender {
	return func(_ int, text string) ([]string, error) {
		args := map[string]any{"searches": []map[string]string{{"type": "lex", "query": text}}, "limit": c.top, "rerank": false}
		var rows []struct{ File string }
		if c.mode == "rest" {
			raw, _, err := post(hc, c.url+"/query", args, nil)
			if err != nil {
				return nil, err
			}
			var r struct{ Results []struct{ File string } }
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, fmt.Errorf("qmd: %w", err)
			}
			rows = r.Results
		} else {
			raw, _, err := post(hc, c.url+"/mcp", rpc(2, "tools/call", map[string]any{"name": "query", "arguments": args}), nil)
			if err != nil {
				return nil, err
			}
			res, err := rpcResult(raw)
			if err != nil {
				return nil, err
			}
			var r struct {
				Structured struct{ Results []struct{ File string } } `json:"structuredContent"`
			}
			if err := json.Unmarshal(res, &r); err != nil {
				return nil, fmt.Errorf("qmd mcp: %w", err)
			}
			rows = r.Structured.Results
		}
		docs := make([]string, len(rows))
		for i, r := range rows {
			docs[i] = docID(r.File)
		}
		return docs, nil
	}
}

// strataDocs reads a strata_search answer's files as document ids.
func strataDocs(raw []byte) ([]string, error) {
	var r struct {
		Status  string
		Results []struct{ File string }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("strata: %w: %.200s", err, raw)
	}
	docs := make([]string, len(r.Results))
	for i, x := range r.Results {
		docs[i] = docID(x.File)
	}
	return docs, nil
}

// docID turns qmd://scifact/d123.md, d123.md or 123.txt into 123.
func docID(file string) string {
	name := path.Base(file)
	name = strings.TrimSuffix(name, path.Ext(name))
	return strings.TrimPrefix(name, "d")
}

func rpc(id int, method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

func sessionHeader(id string) http.Header {
	h := http.Header{}
	if id != "" {
		h.Set("Mcp-Session-Id", id)
	}
	return h
}

// rpcResult reads a JSON-RPC reply, plain or as the last SSE data frame.
func rpcResult(raw []byte) (json.RawMessage, error) {
	if s := string(raw); strings.Contains(s, "data:") && !strings.HasPrefix(strings.TrimSpace(s), "{") {
		last := ""
		for _, line := range strings.Split(s, "\n") {
			if rest, ok := strings.CutPrefix(line, "data:"); ok {
				last = strings.TrimSpace(rest)
			}
		}
		raw = []byte(last)
	}
	var m struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("mcp reply: %w: %.200s", err, raw)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("mcp error: %s", m.Error.Message)
	}
	var tool struct{ IsError bool }
	if json.Unmarshal(m.Result, &tool) == nil && tool.IsError {
		return nil, fmt.Errorf("tool error: %.300s", m.Result)
	}
	return m.Result, nil
}

// post sends body as JSON and returns the reply's body and headers; a
// status other than 200 and 202 is an error.
func post(hc *http.Client, url string, body any, h http.Header) ([]byte, http.Header, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return nil, nil, fmt.Errorf("POST %s: HTTP %d: %.200s", url, resp.StatusCode, raw)
	}
	return raw, resp.Header, nil
}
