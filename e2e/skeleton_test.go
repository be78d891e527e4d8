// Package e2e runs the built binaries the way the README tells a user to:
// ingestd add, then queryd search, against a fresh database.
package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

func build(t *testing.T, root, bin, pkg string) string {
	t.Helper()
	out := filepath.Join(bin, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, "./"+pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func TestReadmeFlow(t *testing.T) {
	url := dbtest.NewDatabase(t)
	root := testenv.RepoRoot(t)
	bin := t.TempDir()
	ingestd := build(t, root, bin, "ingestd")
	queryd := build(t, root, bin, "queryd")
	env := append(withoutDatabaseURLs(os.Environ()), "DATABASE_URL="+url)

	add := exec.Command(ingestd, "add", "fixtures/handbook", "--layer", "handbook", "--wait")
	add.Dir, add.Env = root, env
	out, err := add.CombinedOutput()
	if err != nil {
		t.Fatalf("ingestd add: %v\n%s", err, out)
	}

	question := "How many unused leave days can be carried over?"
	// As the owner (a superuser here), queryd refuses to search and says how
	// to fix it, unless QUERYD_ALLOW_OWNER says so.
	asOwner := exec.Command(queryd, "search", question, "--layers", "handbook")
	asOwner.Dir, asOwner.Env = root, env
	if out, err := asOwner.CombinedOutput(); err == nil || !strings.Contains(string(out), "is a superuser") ||
		!strings.Contains(string(out), "QUERYD_DATABASE_URL") || !strings.Contains(string(out), "QUERYD_ALLOW_OWNER=true") {
		t.Errorf("queryd search as a superuser: err %v, output %s; want a refusal naming the fix", err, out)
	}
	allowed := exec.Command(queryd, "search", question, "--layers", "handbook")
	allowed.Dir, allowed.Env = root, append(env, "QUERYD_ALLOW_OWNER=true")
	if out, err := allowed.CombinedOutput(); err != nil {
		t.Errorf("queryd search as a superuser with QUERYD_ALLOW_OWNER=true: %v\n%s", err, out)
	}

	// The README's way: queryd as the read-only role.
	env = append(withoutDatabaseURLs(os.Environ()), "QUERYD_DATABASE_URL="+dbtest.QuerydURL(t, url))
	search := exec.Command(queryd, "search", question, "--layers", "handbook", "--top-k", "3")
	search.Dir, search.Env = root, env
	out, err = search.Output()
	if err != nil {
		t.Fatalf("queryd search: %v\n%s", err, out)
	}
	var resp struct {
		Results []struct {
			File  string `json:"file"`
			Lines string `json:"lines"`
			Text  string `json:"text"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("queryd search printed no JSON: %v\n%s", err, out)
	}
	if len(resp.Results) == 0 {
		t.Fatalf("no results:\n%s", out)
	}
	top := resp.Results[0]
	if top.File != "leave-policy.md" {
		t.Errorf("top result from %s, want leave-policy.md", top.File)
	}
	// The cited lines must hold the carry-over rule, read from the file itself.
	data, err := os.ReadFile(filepath.Join(root, "fixtures", "handbook", "leave-policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var from, to int
	if _, err := fmt.Sscanf(top.Lines, "%d-%d", &from, &to); err != nil || from < 1 || to > len(lines) || from > to {
		t.Fatalf("bad line range %q", top.Lines)
	}
	cited := strings.Join(lines[from-1:to], "\n")
	if !strings.Contains(cited, "Up to 5 unused days may be carried") {
		t.Errorf("lines %s of leave-policy.md do not hold the carry-over rule:\n%s", top.Lines, cited)
	}
	if !strings.Contains(cited, strings.TrimSpace(top.Text)) {
		t.Errorf("the result text is not the text of lines %s", top.Lines)
	}

	bad := exec.Command(queryd, "search", "x", "--top-k", "99")
	bad.Dir, bad.Env = root, env
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "top_k: must be from 1 to 50") {
		t.Errorf("queryd search --top-k 99: err %v, output %s", err, out)
	}
}

func withoutDatabaseURLs(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "QUERYD_DATABASE_URL=") &&
			!strings.HasPrefix(kv, "QUERYD_ALLOW_OWNER=") {
			out = append(out, kv)
		}
	}
	return out
}
