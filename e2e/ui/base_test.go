package uie2e

import (
	"slices"
	"strings"
	"testing"
)

// TestExplorerOpens: / redirects to the Layers page, which asks for a token
// (the server has tokens), asks again after a wrong one, keeps the right
// one in this tab's sessionStorage only, and loads, under the strict CSP,
// with nothing reported by the browser.
func TestExplorerOpens(t *testing.T) {
	e := setup(t)
	var got struct {
		seen
		Status     int
		URL        string
		Asked      bool
		AskedAgain string
		Nav        []string
		Stored     bool
		Local      int
		H1         string
	}
	e.browse(t, "base", "/", &got)
	got.check(t)
	if got.Status != 200 || !strings.HasSuffix(got.URL, "/ui/") {
		t.Errorf("/ ended at %s with %d, want the Layers page /ui/", got.URL, got.Status)
	}
	if !got.Asked {
		t.Errorf("the page did not ask for a token")
	}
	if !strings.Contains(got.AskedAgain, "refused") {
		t.Errorf("after a wrong token the prompt says %q", got.AskedAgain)
	}
	if !got.Stored || got.Local != 0 {
		t.Errorf("token in sessionStorage: %v; localStorage entries: %d (want the token in this tab only)", got.Stored, got.Local)
	}
	if !slices.Equal(got.Nav, []string{"Layers", "Ask", "Learning"}) {
		t.Errorf("nav links %q", got.Nav)
	}
	if got.H1 != "Layers" {
		t.Errorf("heading %q", got.H1)
	}
}
