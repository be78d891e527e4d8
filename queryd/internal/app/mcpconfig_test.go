package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
)

// printedConfig is what `queryd mcp-config` prints.
type printedConfig struct {
	MCPServers map[string]mcpServer `json:"mcpServers"`
}

// TestMCPConfigStartsFromRoot: the stdio configuration `queryd mcp-config`
// prints, started as a client starts it (from "/", with only the
// environment it names), answers with the embedding model: not degraded.
// Before, an MCP client's queryd resolved var/models and var/lib against
// its own folder and ran without embeddings.
func TestMCPConfigStartsFromRoot(t *testing.T) {
	v := testenv.VarDir(t)
	model := filepath.Join(v, "models", embed.DefaultLocalModel)
	testenv.Require(t, filepath.Join(model, "model.onnx"), "the local embedding model (make setup)")
	testenv.Require(t, filepath.Join(v, "lib", "libonnxruntime.so.1"), "ONNX Runtime (make setup)")
	owner, qurl := asQuerydRole(t)

	// The handbook, embedded by the default model as ingestd embeds it.
	cfg := embed.DefaultConfig()
	cfg.ModelName, cfg.ModelDir = embed.DefaultLocalModel, model
	cfg.LibraryPath = filepath.Join(v, "lib", "libonnxruntime.so.1")
	emb, err := embedding.Load(cfg, nil)
	if err != nil {
		t.Fatalf("load %s: %v", embed.DefaultLocalModel, err)
	}
	t.Cleanup(func() { _ = embed.Close(emb) })
	root := testenv.RepoRoot(t)
	ingesttest.Ingest(t, owner, jobs.Layer{Name: "handbook", Root: filepath.Join(root, "fixtures", "handbook")},
		ingesttest.Options{Vectorizer: jobs.SingleVector(emb)})

	// An installation's home: var/db.env names the test database, and the
	// models and ONNX Runtime are this checkout's.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "var"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "var", "db.env"), []byte("QUERYD_DATABASE_URL="+qurl+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"models", "lib"} {
		if err := os.Symlink(filepath.Join(v, d), filepath.Join(home, "var", d)); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "queryd")
	build := exec.Command("go", "build", "-o", bin, "./queryd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./queryd: %v\n%s", err, out)
	}
	printCmd := exec.Command(bin, "mcp-config")
	printCmd.Dir = "/"
	printCmd.Env = []string{"PATH=" + os.Getenv("PATH"), "STRATA_HOME=" + home}
	out, err := printCmd.Output()
	if err != nil {
		t.Fatalf("queryd mcp-config: %v\n%s", err, out)
	}
	var pc printedConfig
	if err := json.Unmarshal(out, &pc); err != nil {
		t.Fatalf("mcp-config's output is not JSON: %v\n%s", err, out)
	}
	srv, ok := pc.MCPServers["stratakb"]
	if !ok || !filepath.IsAbs(srv.Command) || len(srv.Args) != 1 || srv.Args[0] != "mcp" {
		t.Fatalf("mcp-config printed no stdio entry with an absolute command:\n%s", out)
	}
	for k, val := range srv.Env {
		if strings.Contains(k, "PATH") || strings.Contains(k, "HOME") || strings.Contains(k, "DIR") || strings.Contains(k, "LIB") {
			if !filepath.IsAbs(val) {
				t.Errorf("mcp-config printed a relative path: %s=%s", k, val)
			}
		}
	}

	// Start it as a client does: from "/", with the printed environment
	// only.
	var env []string
	for k, val := range srv.Env {
		env = append(env, k+"="+val)
	}
	sort.Strings(env)
	var stderr bytes.Buffer
	c, err := client.NewStdioMCPClientWithOptions(srv.Command, env, srv.Args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Dir, cmd.Env = "/", append([]string{"PATH=/usr/bin:/bin"}, env...)
			return cmd, nil
		}), transport.WithCommandStderrWriter(&stderr))
	if err != nil {
		t.Fatalf("start %s: %v", srv.Command, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-config-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v\nqueryd's stderr:\n%s", err, stderr.String())
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "strata_search"
	call.Params.Arguments = map[string]any{"query": "How many unused leave days can be carried over?", "layers": []string{"handbook"}}
	res, err := c.CallTool(ctx, call)
	if err != nil {
		t.Fatalf("strata_search: %v\nqueryd's stderr:\n%s", err, stderr.String())
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var sr struct {
		Degraded       bool   `json:"degraded"`
		DegradedReason string `json:"degraded_reason"`
		Results        []struct {
			File string `json:"file"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &sr); err != nil {
		t.Fatalf("strata_search's structured content: %v\n%s", err, raw)
	}
	if res.IsError || len(sr.Results) == 0 {
		t.Fatalf("strata_search found nothing: %s\nqueryd's stderr:\n%s", raw, stderr.String())
	}
	if sr.Degraded {
		t.Errorf("queryd started from / by mcp-config's configuration answers degraded: %s\nqueryd's stderr:\n%s", sr.DegradedReason, stderr.String())
	}
	if sr.Results[0].File != "leave-policy.md" {
		t.Errorf("top result %s, want leave-policy.md", sr.Results[0].File)
	}
}

// TestMCPConfigHTTP: the HTTP variant points at QUERYD_ADDR's real port
// (the loopback address for a wildcard one) with a token placeholder.
func TestMCPConfigHTTP(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:9311": "http://127.0.0.1:9311/mcp", "0.0.0.0:8400": "http://127.0.0.1:8400/mcp",
		"[::1]:8401": "http://[::1]:8401/mcp"} {
		env := map[string]string{"QUERYD_DATABASE_URL": "postgres://queryd:s3cret@127.0.0.1:15432/stratakb", "QUERYD_ADDR": addr,
			"QUERYD_TOKENS": "reader:abcdefghijklmnopqrstuvwxyz"}
		var out, errb strings.Builder
		if err := Run(context.Background(), []string{"mcp-config", "--http"}, func(k string) string { return env[k] }, nil, &out, &errb); err != nil {
			t.Fatalf("mcp-config --http: %v\n%s", err, errb.String())
		}
		var pc printedConfig
		if err := json.Unmarshal([]byte(out.String()), &pc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out.String())
		}
		srv := pc.MCPServers["stratakb"]
		if srv.Type != "http" || srv.URL != want || srv.Headers["Authorization"] != "Bearer "+TokenPlaceholder {
			t.Errorf("QUERYD_ADDR=%s: %s", addr, out.String())
		}
		if strings.Contains(out.String(), "abcdefghij") || strings.Contains(out.String(), "s3cret") {
			t.Errorf("mcp-config printed a secret:\n%s", out.String())
		}
	}
	// The stdio variant passes a database named in the environment on,
	// with the real port, but not its password.
	env := map[string]string{"QUERYD_DATABASE_URL": "postgres://queryd:s3cret@127.0.0.1:15433/stratakb", "STRATA_HOME": "/srv/strata"}
	var out, errb strings.Builder
	if err := Run(context.Background(), []string{"mcp-config"}, func(k string) string { return env[k] }, nil, &out, &errb); err != nil {
		t.Fatalf("mcp-config: %v\n%s", err, errb.String())
	}
	var pc printedConfig
	if err := json.Unmarshal([]byte(out.String()), &pc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	srv := pc.MCPServers["stratakb"]
	if got := srv.Env["QUERYD_DATABASE_URL"]; got != "postgres://queryd:PASSWORD@127.0.0.1:15433/stratakb" || srv.Env["STRATA_HOME"] != "/srv/strata" {
		t.Errorf("stdio entry: %s", out.String())
	}
}

// TestQuerydVerbHelp: -h on every verb prints its synopsis and exits 0,
// without a database configured.
func TestQuerydVerbHelp(t *testing.T) {
	for _, verb := range []string{"serve", "mcp", "search", "ask", "receipt", "mcp-config"} {
		var out, errb strings.Builder
		code := Main(context.Background(), []string{verb, "-h"}, func(string) string { return "" }, nil, &out, &errb)
		got := out.String() + errb.String()
		if code != 0 || !strings.Contains(got, "Usage: queryd "+verb) || strings.Contains(got, "Usage of") {
			t.Errorf("queryd %s -h: exit %d:\n%s", verb, code, got)
		}
	}
	var out, errb strings.Builder
	Main(context.Background(), []string{"ask", "-h"}, func(string) string { return "" }, nil, &out, &errb)
	if !strings.Contains(errb.String(), "QUESTION") || !strings.Contains(errb.String(), "-layer") {
		t.Errorf("queryd ask -h names neither QUESTION nor --layer:\n%s", errb.String())
	}
}

// TestAskAcceptsLayer: `queryd ask --layer NAME` reads as --layers, as
// ingestd spells it.
func TestAskAcceptsLayer(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	for _, name := range []string{"rules", "other"} {
		root := filepath.Join(t.TempDir(), name)
		testenv.WriteFiles(t, root, map[string]string{"leave.md": "# Leave\n\nUp to five unused leave days may be carried into the next calendar year.\n"})
		ingesttest.Ingest(t, owner, jobs.Layer{Name: name, Root: root}, ingesttest.Options{})
	}
	env := map[string]string{"QUERYD_DATABASE_URL": qurl, "STRATA_MODEL_DIR": t.TempDir()}
	for _, verb := range []string{"ask", "search"} {
		args := []string{verb, "How many unused leave days may be carried over?", "--layer", "rules"}
		if verb == "ask" {
			args = append(args, "--json")
		}
		var out, errb strings.Builder
		err := Run(ctx, args, func(k string) string { return env[k] }, nil, &out, &errb)
		if err != nil {
			t.Fatalf("queryd %s --layer rules: %v\n%s", verb, err, errb.String())
		}
		if !strings.Contains(out.String(), `"rules"`) || strings.Contains(out.String(), `"other"`) {
			t.Errorf("queryd %s --layer rules did not keep to the layer:\n%s", verb, out.String())
		}
	}
}

// TestQuerydWrongPasswordSaysSo: a refused password is named as such, with
// where the password comes from, not as an unreachable database.
func TestQuerydWrongPasswordSaysSo(t *testing.T) {
	url := "postgres://queryd:wrong@" + dbtest.RefusingServer(t) + "/stratakb?sslmode=disable&connect_timeout=5"
	var out, errb strings.Builder
	code := Main(context.Background(), []string{"search", "leave"}, func(k string) string {
		if k == "QUERYD_DATABASE_URL" {
			return url
		}
		return ""
	}, nil, &out, &errb)
	got := errb.String()
	if code != 1 || !strings.Contains(got, `password authentication failed for role "queryd"`) ||
		!strings.Contains(got, "QUERYD_DATABASE_URL") || strings.Contains(got, "unreachable") {
		t.Errorf("wrong password: exit %d, stderr %q", code, got)
	}
}
