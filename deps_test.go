// Package stratakb_test checks the import edges ARCHITECTURE.md allows, with
// `go list -deps`, so a wrong import fails CI instead of waiting for review.
package stratakb_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/stratakb/stratakb"

// rule forbids packages under one prefix from depending on any of the listed
// import-path prefixes, directly or not.
type rule struct {
	from   string
	forbid []string
	why    string
}

var rules = []rule{
	{module + "/queryd", []string{module + "/jobs", "github.com/riverqueue/", module + "/ingestd"},
		"queryd reads through its own store and never imports jobs or River"},
	{module + "/parsers", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, "parsers is pure"},
	{module + "/structure", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, "structure is pure"},
	{module + "/chunker", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, "chunker is pure"},
	{module + "/embed", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, "embed is pure"},
	{module + "/schema", []string{"github.com/riverqueue/", module + "/parsers", module + "/structure",
		module + "/chunker", module + "/embed", module + "/jobs", module + "/ingestd", module + "/queryd"},
		"schema is the leaf"},
	{module + "/jobs", []string{module + "/ingestd", module + "/queryd"}, "jobs sits below the daemons"},
	{module + "/ingestd", []string{module + "/queryd"}, "the daemons never import each other"},
	{module + "/queryd/internal/toolargs", []string{module + "/queryd/internal/server", module + "/queryd/internal/app",
		module + "/queryd/internal/search", module + "/queryd/internal/store", "github.com/jackc/"},
		"toolargs is a leaf: the packages that define tools' arguments import it, never the other way"},
}

// violations returns, for one package and its dependencies, each forbidden
// edge with the rule's reason.
func violations(pkg string, deps []string) []string {
	var out []string
	for _, r := range rules {
		if pkg != r.from && !strings.HasPrefix(pkg, r.from+"/") {
			continue
		}
		for _, d := range deps {
			for _, f := range r.forbid {
				hit := d == f || strings.HasPrefix(d, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(d, f))
				if hit {
					out = append(out, pkg+" depends on "+d+": "+r.why)
				}
			}
		}
	}
	return out
}

func TestImportEdges(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		seen[fields[0]] = true
		for _, v := range violations(fields[0], fields[1:]) {
			t.Error(v)
		}
	}
	for _, must := range []string{module + "/schema", module + "/jobs", module + "/queryd", module + "/ingestd"} {
		if !seen[must] {
			t.Errorf("go list did not list %s: the check would miss it", must)
		}
	}
}

// TestViolationsMatcher makes sure the matcher is not vacuous.
func TestViolationsMatcher(t *testing.T) {
	cases := []struct {
		pkg  string
		deps []string
		bad  bool
	}{
		{module + "/queryd/internal/app", []string{"github.com/riverqueue/river"}, true},
		{module + "/queryd", []string{module + "/jobs"}, true},
		{module + "/structure", []string{"github.com/jackc/pgx/v5"}, true},
		{module + "/embed/uselite", []string{"github.com/riverqueue/river/rivertype"}, true},
		{module + "/queryd", []string{module + "/jobsmith", "github.com/jackc/pgx/v5"}, false},
		{module + "/jobs", []string{"github.com/riverqueue/river", "github.com/jackc/pgx/v5"}, false},
	}
	for _, c := range cases {
		if got := len(violations(c.pkg, c.deps)) > 0; got != c.bad {
			t.Errorf("violations(%s, %v) flagged=%v, want %v", c.pkg, c.deps, got, c.bad)
		}
	}
}
