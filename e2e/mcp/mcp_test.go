package mcpe2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

const (
	query       = "How many unused leave days can be carried over?"
	layer       = "handbook"
	readerToken = "e2e-reader-token-7f3a9c21d4"
)

// env is what every test here shares: the binaries, the clients and a
// database with the handbook ingested.
type env struct {
	root, queryd, node, e2eDir string
	bin, dbName                string
	querydEnv                  []string
}

var (
	setupOnce sync.Once
	shared    *env
	setupErr  string
	// extraDBs are the databases tests made besides the shared one, for
	// TestMain to drop.
	extraDBs []string
)

// setup builds the binaries, ingests the handbook and prepares queryd's
// environment (connected as the queryd role). Tests needing something that is
// missing skip, or fail under CI=true.
func setup(t *testing.T) *env {
	t.Helper()
	root := testenv.RepoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed (scripts/setup.sh installs it)")
	}
	e2eDir := filepath.Join(testenv.VarDir(t), "e2e")
	testenv.Require(t, filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"),
		"the MCP TypeScript SDK (run scripts/setup-e2e.sh)")
	testenv.Require(t, filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js"),
		"the MCP Inspector CLI (run scripts/setup-e2e.sh)")
	dbtest.URL(t) // skips, or fails under CI, when there is no database
	setupOnce.Do(func() { shared, setupErr = build(root, node, e2eDir) })
	if setupErr != "" {
		t.Fatal(setupErr)
	}
	return shared
}

// TestMain drops what the shared setup made once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = os.RemoveAll(shared.bin)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if c, err := pgx.Connect(ctx, os.Getenv("TEST_DATABASE_URL")); err == nil {
			for _, name := range append([]string{shared.dbName}, extraDBs...) {
				_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			}
			c.Close(ctx)
		}
		cancel()
	}
	os.Exit(code)
}

// build runs once for the package; TestMain removes the binaries and the
// database at the end.
func build(root, node, e2eDir string) (*env, string) {
	bin, err := os.MkdirTemp("", "stratakb-e2e-mcp-bin")
	if err != nil {
		return nil, err.Error()
	}
	e := &env{root: root, node: node, e2eDir: e2eDir, bin: bin}
	for _, pkg := range []string{"ingestd", "queryd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "./"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	e.queryd = filepath.Join(bin, "queryd")

	name, querydURL, err := e.ingestedDB("fixtures/handbook", "--layer", layer)
	e.dbName = name
	if err != nil {
		return nil, err.Error()
	}
	e.querydEnv = append(withoutDatabaseURLs(os.Environ()), "QUERYD_DATABASE_URL="+querydURL,
		"STRATA_E2E_DIR="+e2eDir, "SEARCH_QUERY="+query, "SEARCH_LAYER="+layer,
		"VERIFY_DRAFT=Up to 5 unused days may be carried into the next calendar year [S1].")
	// queryd runs in its client's working directory (this package's, or
	// the Inspector's), where the local model's default paths, relative
	// to the root, name nothing: it then ran without its embedding model
	// and answered from the lexical channel only (degraded), unlike
	// ingestd, which runs from the root.
	for key, def := range map[string]string{"STRATA_MODEL_DIR": filepath.Join(embed.ModelsDir, embed.DefaultLocalModel), "ONNXRUNTIME_LIB": embed.DefaultLibraryPath} {
		if os.Getenv(key) == "" {
			e.querydEnv = append(e.querydEnv, key+"="+filepath.Join(root, def))
		}
	}
	return e, ""
}

// ingestedDB creates a database, runs `ingestd add DIR ADDARGS... --wait`
// into it as the owner and returns its name and the URL queryd connects
// with (as the queryd role). The caller drops it (TestMain).
func (e *env) ingestedDB(dir string, addArgs ...string) (name, querydURL string, err error) {
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", fmt.Errorf("connect as the test database's owner: %w", err)
	}
	defer admin.Close(ctx)
	name = fmt.Sprintf("t_e2e_mcp_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, _ := url.Parse(base)
	u.Path = "/" + name
	ownerURL := u.String()

	add := exec.Command(filepath.Join(e.bin, "ingestd"), append(append([]string{"add", dir}, addArgs...), "--wait")...)
	add.Dir, add.Env = e.root, append(os.Environ(), "DATABASE_URL="+ownerURL)
	if out, err := add.CombinedOutput(); err != nil {
		return name, "", fmt.Errorf("ingestd add %s: %w\n%s", dir, err, out)
	}
	// The queryd role comes from the migrations, without a login; the test
	// cluster trusts local connections, so LOGIN is all it needs.
	if _, err := admin.Exec(ctx, "ALTER ROLE queryd LOGIN"); err != nil {
		return name, "", fmt.Errorf("let the queryd role log in: %w", err)
	}
	u.User = url.User("queryd")
	return name, u.String(), nil
}

func withoutDatabaseURLs(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "QUERYD_DATABASE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}

// session is what session.cjs prints.
type session struct {
	Error           string
	SDKVersion      string `json:"sdk_version"`
	Server          struct{ Name, Version string }
	ProtocolVersion string `json:"protocol_version"`
	Instructions    string
	Tools           []struct {
		Name        string
		Description string
		InputSchema struct {
			Properties map[string]map[string]any
			Required   []string
		}
	}
	Prompts []struct {
		Name      string
		Arguments []struct {
			Name     string
			Required bool
		}
	}
	Search      toolResult
	Ask         askResult
	AskDetailed askResult `json:"ask_detailed"`
	// AskExtractive is the same question with mode extractive.
	AskExtractive askResult  `json:"ask_extractive"`
	BadAsk        toolResult `json:"bad_ask"`
	Verify        verifyResult
	VerifyWrong   verifyResult `json:"verify_wrong"`
	Receipt       struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Status   string
			Draft    string
			Passages []struct {
				Ref, Text string
				Unchanged bool
			}
		} `json:"structuredContent"`
	}
	// ExtractiveReceipt is the extractive answer's receipt, opened.
	ExtractiveReceipt receiptResult `json:"extractive_receipt"`
	BadTopK           toolResult    `json:"bad_top_k"`
	BadLayers         toolResult    `json:"bad_layers"`
	UnknownLayer      toolResult    `json:"unknown_layer"`
	Prompt            struct {
		Messages []struct {
			Role    string
			Content struct{ Type, Text string }
		}
	}
	PromptWithoutQuestion refusal `json:"prompt_without_question"`
	// Over HTTP: whether the server issued a session id, and what using it
	// after the client ended the session (DELETE) gave.
	SessionIDIssued bool    `json:"session_id_issued"`
	AfterDelete     refusal `json:"after_delete"`
}

// refusal is an error a client call met: its JSON-RPC code or HTTP status.
type refusal struct {
	Refused bool
	Code    int
	Message string
}

type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type, Text string
	}
	StructuredContent struct {
		Status  string
		Results []struct {
			File, Lines, Text, Layer, Ref string
		}
	} `json:"structuredContent"`
}

// verifyResult is a strata_verify tool result.
type verifyResult struct {
	IsError           bool `json:"isError"`
	StructuredContent struct {
		Status    string
		ReceiptID string `json:"receipt_id"`
		Flags     []struct {
			Kind, Text string
			Sentence   int
			Searched   []string
		}
		PassageFlags []struct{ Passage, Problem string } `json:"passage_flags"`
		Checked      int
	} `json:"structuredContent"`
}

// receiptResult is a strata_get_receipt tool result.
type receiptResult struct {
	IsError           bool `json:"isError"`
	StructuredContent struct {
		Status, Tool, Draft string
		Passages            []struct {
			ID, Ref, Text string
			Unchanged     bool
		}
	} `json:"structuredContent"`
}

// askResult is a strata_ask tool result as the SDK client returns it.
type askResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type, Text string
	}
	StructuredContent struct {
		Status, Mode, Basis string
		AnswerStatus        string `json:"answer_status"`
		Passages            []askPassage
		Notes               []string
		Answer              []struct {
			Text, Ref, Passage string
			TextOrigin         string `json:"text_origin"`
			Citation           struct {
				File, Lines, Layer string
				ClausePath         string `json:"clause_path"`
			}
		}
		InteractionID string   `json:"interaction_id"`
		QueryVariants []string `json:"query_variants"`
		ReceiptID     string   `json:"receipt_id"`
	} `json:"structuredContent"`
}

type askPassage struct {
	ID, Ref, Text string
	Citation      struct{ File, Lines, Layer string }
}

func (e *env) node_(t *testing.T, args ...string) []byte {
	t.Helper()
	return e.nodeEnv(t, e.querydEnv, args...)
}

// nodeEnv runs session.cjs with args in the environment env and returns
// what it printed.
func (e *env) nodeEnv(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, append([]string{filepath.Join(e.root, "e2e", "mcp", "session.cjs")}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node session.cjs %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

func (e *env) runSession(t *testing.T, args ...string) session {
	t.Helper()
	out := e.node_(t, args...)
	// STRATA_E2E_TRANSCRIPT=DIR keeps each client session's JSON, for the
	// record of what a real client saw.
	if dir := os.Getenv("STRATA_E2E_TRANSCRIPT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "session-"+args[0]+".json"), out, 0o644); err != nil {
			t.Errorf("keep transcript: %v", err)
		}
	}
	var s session
	if err := json.Unmarshal(out, &s); err != nil || s.Error != "" {
		t.Fatalf("session.cjs %s: %v %s\n%s", args[0], err, s.Error, out)
	}
	if s.SDKVersion == "" {
		t.Errorf("session.cjs did not report the SDK's version")
	}
	t.Logf("MCP TypeScript SDK %s over %s: server %s %s, protocol %s, tools %d, prompts %d", s.SDKVersion, args[0],
		s.Server.Name, s.Server.Version, s.ProtocolVersion, len(s.Tools), len(s.Prompts))
	if r := s.Search.StructuredContent.Results; len(r) > 0 {
		t.Logf("strata_search %q: %d results, top %s lines %s (%s)", query, len(r), r[0].File, r[0].Lines, r[0].Ref)
	}
	return s
}

// check asserts what a client session must have seen.
func (e *env) check(t *testing.T, s session) {
	t.Helper()
	for _, want := range []string{"strata_search", "never an order to follow", "exactly as the passage writes them", "not in the documents"} {
		if !strings.Contains(s.Instructions, want) {
			t.Errorf("the instructions at connect lack %q:\n%s", want, s.Instructions)
		}
	}
	var names []string
	for _, tool := range s.Tools {
		names = append(names, tool.Name)
		if tool.Name == "strata_search" {
			topK := tool.InputSchema.Properties["top_k"]
			if topK["type"] != "integer" || topK["maximum"] != 50.0 || topK["minimum"] != 1.0 {
				t.Errorf("top_k schema %v", topK)
			}
			if len(tool.InputSchema.Required) != 1 || tool.InputSchema.Required[0] != "query" {
				t.Errorf("required %v, want [query]", tool.InputSchema.Required)
			}
		}
	}
	if strings.Join(names, ",") != "strata_ask,strata_feedback,strata_get_receipt,strata_learning_stats,strata_reset_learning,strata_search,strata_verify" {
		t.Errorf("tools %v, want strata_ask, strata_search, strata_verify, strata_get_receipt and the three learning tools", names)
	}
	if len(s.Prompts) != 1 || s.Prompts[0].Name != "answer_from_documents" || len(s.Prompts[0].Arguments) != 2 {
		t.Errorf("prompts %+v", s.Prompts)
	}

	if s.Search.IsError || len(s.Search.StructuredContent.Results) == 0 {
		t.Fatalf("strata_search: %+v", s.Search)
	}
	var text struct {
		Results []struct{ File, Lines, Text string }
	}
	if err := json.Unmarshal([]byte(s.Search.Content[0].Text), &text); err != nil || len(text.Results) != len(s.Search.StructuredContent.Results) {
		t.Errorf("the text content is not the JSON of the structured content: %v", err)
	}
	top := s.Search.StructuredContent.Results[0]
	if top.File != "leave-policy.md" || top.Layer != layer {
		t.Errorf("top result from %s in %s, want leave-policy.md in %s", top.File, top.Layer, layer)
	}
	// The cited lines hold the carry-over rule, read from the file itself.
	data, err := os.ReadFile(filepath.Join(e.root, "fixtures", "handbook", top.File))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var from, to int
	if _, err := fmt.Sscanf(top.Lines, "%d-%d", &from, &to); err != nil || from < 1 || to > len(lines) || from > to {
		t.Fatalf("bad line range %q", top.Lines)
	}
	cited := strings.Join(lines[from-1:to], "\n")
	if !strings.Contains(cited, "Up to 5 unused days may be carried") || !strings.Contains(cited, strings.TrimSpace(top.Text)) {
		t.Errorf("lines %s of %s do not hold the result's text and the carry-over rule:\n%s", top.Lines, top.File, cited)
	}

	// strata_ask answers the same question from the handbook, citing the
	// carry-over rule's file; the detailed form (routed, no layers named)
	// says so in answer_status.
	a := s.Ask.StructuredContent
	if s.Ask.IsError || a.Status == "" || a.Mode != "grounded" || len(a.Passages) == 0 {
		t.Fatalf("strata_ask: %+v", s.Ask)
	}
	if a.Passages[0].ID != "S1" || a.Passages[0].Citation.File != "leave-policy.md" || !strings.Contains(a.Passages[0].Text, "carried") {
		t.Errorf("strata_ask's first passage: %+v", a.Passages[0])
	}
	if d := s.AskDetailed.StructuredContent; s.AskDetailed.IsError || d.Status != "ok" || d.AnswerStatus == "" || d.Basis == "" {
		t.Errorf("strata_ask detailed: %+v", s.AskDetailed)
	}
	// mode extractive quotes the clause the question names sentence by
	// sentence, whole (the wrapped line stays in its sentence, the heading
	// is left out), with a receipt that holds the sentences as read.
	x := s.AskExtractive.StructuredContent
	if s.AskExtractive.IsError || x.Mode != "extractive" || x.Status != "found" || !strings.HasPrefix(x.ReceiptID, "rcpt_") || len(x.Answer) != 2 {
		t.Fatalf("strata_ask extractive: %+v", s.AskExtractive)
	}
	if want := "Up to 5 unused days may be carried into the next calendar year."; x.Answer[0].Text != want {
		t.Errorf("extractive sentence %q, want %q", x.Answer[0].Text, want)
	}
	for _, sent := range x.Answer {
		if sent.TextOrigin != "text" || sent.Citation.File != "leave-policy.md" || !strings.HasPrefix(sent.Passage, "S") {
			t.Errorf("extractive sentence %+v", sent)
		}
	}
	if r := s.ExtractiveReceipt.StructuredContent; s.ExtractiveReceipt.IsError || r.Status != "found" || len(r.Passages) != len(x.Answer) ||
		r.Passages[0].Text != x.Answer[0].Text || r.Passages[0].Ref != x.Answer[0].Ref || !r.Passages[0].Unchanged {
		t.Errorf("the extractive answer's receipt: %+v", s.ExtractiveReceipt)
	}
	// strata_verify checks a draft against the ref strata_ask returned and
	// issues a receipt that holds the passage as the server read it; a
	// changed number is flagged.
	if v := s.Verify.StructuredContent; s.Verify.IsError || v.Status != "verified" || !strings.HasPrefix(v.ReceiptID, "rcpt_") {
		t.Errorf("strata_verify: %+v", s.Verify)
	}
	if v := s.VerifyWrong.StructuredContent; v.Status != "flagged" || len(v.Flags) == 0 || v.Flags[0].Text != "13" {
		t.Errorf("strata_verify with a changed number: %+v", s.VerifyWrong)
	}
	if r := s.Receipt.StructuredContent; s.Receipt.IsError || r.Status != "verified" || len(r.Passages) != 1 ||
		r.Passages[0].Ref != a.Passages[0].Ref || r.Passages[0].Text != a.Passages[0].Text || !r.Passages[0].Unchanged {
		t.Errorf("strata_get_receipt: %+v", s.Receipt)
	}
	for name, c := range map[string]struct {
		r   toolResult
		arg string
	}{"response_format long": {s.BadAsk, "response_format"}, "top_k 99": {s.BadTopK, "top_k"}, "layers as a string": {s.BadLayers, "layers"}, "unknown layer": {s.UnknownLayer, "layers"}} {
		if !c.r.IsError || len(c.r.Content) == 0 || !strings.Contains(c.r.Content[0].Text, `"argument":"`+c.arg+`"`) {
			t.Errorf("%s: want a tool error naming %s, got %+v", name, c.arg, c.r)
		}
	}
	// Before: -32603 internal error.
	if r := s.PromptWithoutQuestion; !r.Refused || r.Code != -32602 || !strings.Contains(r.Message, "question") {
		t.Errorf("the prompt without its question: want invalid params (-32602) naming question, got %+v", r)
	}
	if len(s.Prompt.Messages) != 1 {
		t.Fatalf("prompt messages %+v", s.Prompt.Messages)
	}
	p := s.Prompt.Messages[0].Content.Text
	if !strings.Contains(p, query) || !strings.Contains(p, `["handbook","other"]`) || !strings.Contains(p, "1. Call strata_ask") {
		t.Errorf("prompt text:\n%s", p)
	}
}

func TestSDKOverStdio(t *testing.T) {
	e := setup(t)
	e.check(t, e.runSession(t, "stdio", e.queryd))
}

// serve starts `queryd serve` on a free loopback port and returns its base
// URL and a function that stops it with SIGTERM and returns its exit error.
func (e *env) serve(t *testing.T, extraEnv ...string) (string, func() error) {
	t.Helper()
	base, stop, _ := e.serveProc(t, extraEnv...)
	return base, stop
}

// serveProc is serve that also gives the process id.
func (e *env) serveProc(t *testing.T, extraEnv ...string) (string, func() error, int) {
	t.Helper()
	return e.serveUntil(t, func(status int) bool { return status == http.StatusOK }, extraEnv...)
}

// serveUntil starts queryd serve and waits until /healthz answers with a
// status up accepts.
func (e *env) serveUntil(t *testing.T, up func(status int) bool, extraEnv ...string) (string, func() error, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(e.queryd, "serve")
	cmd.Env = append(append([]string{}, e.querydEnv...), append([]string{"QUERYD_ADDR=" + addr, "QUERYD_TOKENS=reader:" + readerToken}, extraEnv...)...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			return fmt.Errorf("queryd serve did not stop within 15 s of SIGTERM")
		}
	}
	t.Cleanup(func() {
		_ = stop()
		if t.Failed() {
			t.Logf("queryd serve log:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), readerToken) {
			t.Errorf("the bearer token reached queryd's log")
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if up(resp.StatusCode) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("queryd serve not healthy: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base, stop, cmd.Process.Pid
}

func TestSDKOverStreamableHTTP(t *testing.T) {
	e := setup(t)
	base, stop := e.serve(t)
	s := e.runSession(t, "http", base+"/mcp", readerToken)
	e.check(t, s)
	// Before: any well-formed session id was accepted, also after DELETE.
	if !s.SessionIDIssued || !s.AfterDelete.Refused || s.AfterDelete.Code != http.StatusNotFound {
		t.Errorf("a session id used after DELETE: issued %v, want 404, got %+v", s.SessionIDIssued, s.AfterDelete)
	}

	for _, token := range []string{"", "wrong-token-0123456789abc"} {
		out := e.node_(t, "http-refused", base+"/mcp", token)
		var r struct {
			Refused bool
			Error   string
		}
		if err := json.Unmarshal(out, &r); err != nil || !r.Refused {
			t.Errorf("token %q: the SDK client was not refused: %s", token, out)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("queryd serve on SIGTERM: %v", err)
	}
}

// TestSDKSamplingClientRewrites: with QUERY_REWRITE_PROVIDER=mcp_sampling,
// strata_ask asks a client that declared sampling for rewrites of the
// question (sampling/createMessage) and searches them beside the question;
// the client's reply wraps its JSON list in prose.
func TestSDKSamplingClientRewrites(t *testing.T) {
	e := setup(t)
	base, _ := e.serve(t, "QUERY_REWRITE_PROVIDER=mcp_sampling")
	out := e.node_(t, "http-sampling", base+"/mcp", readerToken)
	var s struct {
		SamplingRequests int    `json:"sampling_requests"`
		SamplingPrompt   string `json:"sampling_prompt"`
		Ask              askResult
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("session: %v\n%s", err, out)
	}
	if s.SamplingRequests != 1 || !strings.Contains(s.SamplingPrompt, "carried over") {
		t.Errorf("sampling requests %d, prompt %s", s.SamplingRequests, s.SamplingPrompt)
	}
	vs := s.Ask.StructuredContent.QueryVariants
	if s.Ask.IsError || len(vs) != 2 || vs[1] != "carry over unused annual leave days" {
		t.Errorf("strata_ask with a sampling client: variants %q, %+v", vs, s.Ask)
	}
}

// inspector runs the MCP Inspector's CLI mode and decodes its JSON output.
func (e *env) inspector(t *testing.T, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	build := filepath.Join(e.e2eDir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	cmd := exec.CommandContext(ctx, e.node, append([]string{filepath.Join(build, "index.js")}, args...)...)
	// The CLI finds its own package.json relative to the working directory.
	cmd.Dir, cmd.Env = build, append(append([]string{}, e.querydEnv...), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "catalog.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("inspector printed no JSON: %v\n%s", err, out)
	}
	return v
}

func TestInspectorCLI(t *testing.T) {
	e := setup(t)
	base, _ := e.serve(t)
	targets := map[string][]string{
		"stdio": {e.queryd, "mcp"},
		"http":  {base + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + readerToken},
	}
	for _, name := range []string{"stdio", "http"} {
		target := targets[name]
		t.Run(name, func(t *testing.T) {
			list := e.inspector(t, append(append([]string{}, target...), "--method", "tools/list")...)
			b, _ := json.Marshal(list)
			if !strings.Contains(string(b), `"name":"strata_search"`) {
				t.Errorf("tools/list: %s", b)
			}
			call := e.inspector(t, append(append([]string{}, target...), "--method", "tools/call", "--tool-name", "strata_search",
				"--tool-arg", "query="+query, "layers=[\"handbook\"]", "top_k=2")...)
			b, _ = json.Marshal(call)
			if call["isError"] == true || !strings.Contains(string(b), `leave-policy.md`) {
				t.Errorf("tools/call strata_search: %s", b)
			}
		})
	}
}

// TestHTTPSearchLatency measures POST /v1/search over loopback: sequential
// requests for the median, then 16 concurrent clients (STRATA_LOAD_SECONDS,
// default 2) for p50 and p95. Every request must succeed.
func TestHTTPSearchLatency(t *testing.T) {
	e := setup(t)
	base, _ := e.serve(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	var n atomic.Int64
	one := func() (time.Duration, error) {
		// A word no document holds makes every query new to the search
		// cache, so this measures searches, not cache hits.
		body := fmt.Sprintf(`{"query":"%s zq%d","layers":[%q],"top_k":5}`, query, n.Add(1), layer)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/search", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+readerToken)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), nil
	}
	var seq []time.Duration
	for range 50 {
		d, err := one()
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, d)
	}
	t.Logf("POST /v1/search, 50 sequential: p50 %v", pct(seq, 50))

	secs := 2
	if v := os.Getenv("STRATA_LOAD_SECONDS"); v != "" {
		fmt.Sscan(v, &secs)
	}
	var mu sync.Mutex
	var all []time.Duration
	var failures []error
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				d, err := one()
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				} else {
					all = append(all, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed under 16 concurrent clients, first: %v", len(failures), len(failures)+len(all), failures[0])
	}
	t.Logf("POST /v1/search, 16 concurrent clients for %d s: %d requests (%.0f/s), p50 %v, p95 %v",
		secs, len(all), float64(len(all))/float64(secs), pct(all, 50), pct(all, 95))
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(10 * time.Microsecond)
}
