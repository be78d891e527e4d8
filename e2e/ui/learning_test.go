package uie2e

import (
	"context"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/learn"
)

// seedLearning stores a synonym, a rewrite and an affinity for the fixture
// layer and a synonym for no layer, as the promoter would.
func (e *env) seedLearning(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	u, _ := url.Parse(os.Getenv("TEST_DATABASE_URL"))
	u.Path = "/" + e.dbName
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	syn, rw := learn.SynonymRule, learn.RewriteRule
	for _, st := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM strata.learned_synonyms WHERE term IN ('voyage', 'sojourn')`, nil},
		// A run before this one (go test -count) reset the layer: its
		// rows would stay reset, so they are made afresh.
		{`DELETE FROM strata.learned_rewrites WHERE question_key = 'voyag'`, nil},
		{`DELETE FROM strata.learned_affinities WHERE term = 'voyag' AND layer = 'explorer'`, nil},
		{`INSERT INTO strata.learned_synonyms (term, synonym, layer, rule_version, usage_count, callers) VALUES ('voyage', 'travel', 'explorer', $1, 7, 3)`, []any{syn}},
		{`INSERT INTO strata.learned_synonyms (term, synonym, layer, rule_version, usage_count, callers) VALUES ('sojourn', 'stay', '', $1, 2, 2)`, []any{syn}},
		{`INSERT INTO strata.learned_rewrites (terms, question_key, question, rewrite, layer, rule_version, proofs, callers)
			VALUES ('{voyag}', 'voyag', 'voyage money', 'daily allowance abroad', 'explorer', $1, 4, 2) ON CONFLICT DO NOTHING`, []any{rw}},
		{`INSERT INTO strata.learned_affinities (term, layer, rule_version, evidence, switches) VALUES ('voyag', 'explorer', $1, 5, 1) ON CONFLICT DO NOTHING`, []any{rw}},
	} {
		if _, err := c.Exec(ctx, st.sql, st.args...); err != nil {
			t.Fatalf("%s: %v", st.sql, err)
		}
	}
}

// probeRefusal is the one console line the Learning page causes: its
// question whether the token may reset is a reset that names no scope,
// which the server refuses (400 to an admin, 403 to a reader).
var probeRefusal = regexp.MustCompile(`^console: Failed to load resource: the server responded with a status of 40[03] `)

func withoutProbe(t *testing.T, problems []string) []string {
	t.Helper()
	var out []string
	n := 0
	for _, p := range problems {
		if probeRefusal.MatchString(p) && n == 0 {
			n++
			continue
		}
		out = append(out, p)
	}
	return out
}

type learningSeen struct {
	seen
	Before, After                  map[string][][]string
	ResetShown                     bool
	ConfirmText, Cancelled, Result string
}

// TestLearningPage: a reader sees what was learned as tables and no reset;
// an admin sees the reset, cancels its confirmation (nothing reset), then
// resets the fixture layer, after which that layer's synonym is gone and
// the synonym stored with no layer stays.
func TestLearningPage(t *testing.T) {
	e := setup(t)
	e.seedLearning(t)
	var reader learningSeen
	e.browse(t, "learning", "/ui/learning", &reader)
	reader.Problems = withoutProbe(t, reader.Problems)
	reader.check(t)
	syn := reader.Before["learned-synonyms"]
	if len(syn) != 2 || syn[0][0] != "sojourn" || syn[0][2] != "any" || syn[1][0] != "voyage" || syn[1][3] != "7" {
		t.Errorf("synonyms table: %q", syn)
	}
	if rw := reader.Before["learned-rewrites"]; len(rw) != 1 || rw[0][1] != "daily allowance abroad" {
		t.Errorf("rewrites table: %q", rw)
	}
	if af := reader.Before["learned-affinities"]; len(af) != 1 || af[0][1] != "explorer" || af[0][2] != "5" {
		t.Errorf("affinities table: %q", af)
	}
	if reader.ResetShown {
		t.Errorf("a reader is offered the reset")
	}

	var admin learningSeen
	e.browse(t, "learning", "/ui/learning", &admin, "TOKEN="+adminToken, "RESET_LAYER="+layer,
		"SHOT="+e.shots+"/learning_admin.png")
	admin.Problems = withoutProbe(t, admin.Problems)
	admin.check(t)
	if !admin.ResetShown {
		t.Fatalf("an admin is not offered the reset")
	}
	if !strings.Contains(admin.ConfirmText, `"explorer"`) || admin.Cancelled != "Nothing was reset." {
		t.Errorf("confirmation %q; after cancel %q", admin.ConfirmText, admin.Cancelled)
	}
	if !strings.HasPrefix(admin.Result, "Reset ") || !strings.Contains(admin.Result, "layer explorer") {
		t.Errorf("reset result %q", admin.Result)
	}
	if syn := admin.After["learned-synonyms"]; len(syn) != 1 || syn[0][0] != "sojourn" {
		t.Errorf("synonyms after the reset: %q, want only the one with no layer", syn)
	}
}
