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
// allow names exceptions to forbid.
type rule struct {
	from   string
	forbid []string
	allow  []string
	why    string
}

var rules = []rule{
	{module + "/queryd", []string{module + "/jobs", "github.com/riverqueue/", module + "/ingestd"},
		nil, "queryd reads through its own store and never imports jobs or River"},
	{module + "/parsers", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, nil, "parsers is pure"},
	{module + "/structure", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, nil, "structure is pure"},
	{module + "/chunker", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, nil, "chunker is pure"},
	{module + "/embed", []string{"github.com/jackc/", "github.com/riverqueue/", module + "/jobs"}, nil, "embed is pure"},
	{module + "/schema", []string{"github.com/riverqueue/", module + "/parsers", module + "/structure",
		module + "/chunker", module + "/embed", module + "/jobs", module + "/ingestd", module + "/queryd"},
		nil, "schema is the leaf"},
	{module + "/jobs", []string{module + "/ingestd", module + "/queryd"}, nil, "jobs sits below the daemons"},
	{module + "/ingestd", []string{module + "/queryd"}, nil, "the daemons never import each other"},
	// Inside queryd: the engine and the tools sit below the transports and
	// the wiring; the store sits below everything but the error kinds.
	{module + "/queryd/internal/retrieve", []string{qd + "server", qd + "app"}, nil, "retrieve never imports server or app"},
	{module + "/queryd/internal/route", []string{qd + "server", qd + "app"}, nil, "route never imports server or app"},
	{module + "/queryd/internal/search", []string{qd + "server", qd + "app"}, nil, "search never imports server or app"},
	{module + "/queryd/internal/ask", []string{qd + "server", qd + "app", qd + "search"}, nil,
		"ask never imports server or app, nor strata_search's response"},
	{module + "/queryd/internal/lrank", []string{qd + "server", qd + "app", qd + "search", qd + "ask"}, nil,
		"the offline reranker reads candidates only"},
	{module + "/queryd/internal/caller", []string{qd}, nil, "caller is a leaf"},
	{module + "/queryd/internal/scrub", []string{qd}, nil, "scrub is a leaf"},
	{module + "/queryd/internal/store", []string{qd}, []string{qd + "store", qd + "qerr"},
		"store imports no other queryd package but qerr"},
	{module + "/queryd/internal/rewrite", []string{qd + "server", qd + "app", qd + "store"}, nil,
		"rewrite never imports server, app or store: it is bytes in, strings out"},
	{module + "/queryd/internal/rerank", []string{qd + "server", qd + "app", qd + "store"}, nil,
		"rerank never imports server, app or store: passages in, scores out"},
	{module + "/internal/provider", []string{module + "/"}, nil,
		"internal/provider is shared HTTP plumbing and imports nothing of the repository"},
	{module + "/internal/rescan", []string{module + "/"}, nil,
		"internal/rescan is a pure helper of regexp and imports nothing of the repository"},
	{module + "/queryd/internal/toolargs", []string{qd + "server", qd + "app", qd + "search", qd + "store", "github.com/jackc/"},
		nil, "toolargs is a leaf: the packages that define tools' arguments import it, never the other way"},
}

// qd is the prefix of queryd's private packages.
const qd = module + "/queryd/internal/"

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
				hit := under(d, f)
				for _, a := range r.allow {
					hit = hit && !under(d, a)
				}
				if hit {
					out = append(out, pkg+" depends on "+d+": "+r.why)
				}
			}
		}
	}
	return out
}

// under says whether the import path d is the package p or below it; a p
// ending in "/" matches by prefix.
func under(d, p string) bool {
	return d == p || strings.HasPrefix(d, p+"/") || (strings.HasSuffix(p, "/") && strings.HasPrefix(d, p))
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
		{module + "/queryd/internal/retrieve", []string{qd + "server"}, true},
		{module + "/queryd/internal/search", []string{qd + "app"}, true},
		{module + "/queryd/internal/route", []string{qd + "store", qd + "qerr"}, false},
		{module + "/queryd/internal/store", []string{qd + "search"}, true},
		{module + "/queryd/internal/store", []string{qd + "qerr", module + "/schema"}, false},
		{module + "/queryd/internal/rewrite", []string{qd + "store"}, true},
		{module + "/queryd/internal/rerank", []string{qd + "server"}, true},
		{module + "/queryd/internal/rerank", []string{module + "/internal/provider"}, false},
		{module + "/internal/provider", []string{module + "/schema"}, true},
		{module + "/internal/provider", []string{"net/http", "log/slog"}, false},
	}
	for _, c := range cases {
		if got := len(violations(c.pkg, c.deps)) > 0; got != c.bad {
			t.Errorf("violations(%s, %v) flagged=%v, want %v", c.pkg, c.deps, got, c.bad)
		}
	}
}
