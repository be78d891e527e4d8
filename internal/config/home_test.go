package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHome: STRATA_HOME wins; else an executable inside a StrataKB
// checkout (bin/queryd, through a symbolic link too) finds the checkout;
// one outside any finds nothing and the working directory stays the home.
func TestHome(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/stratakb/stratakb\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(root, "bin", "queryd")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "queryd")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	for _, p := range []string{exe, link} {
		if got := CheckoutOf(p); got != realRoot {
			t.Errorf("CheckoutOf(%s) = %q, want %q", p, got, realRoot)
		}
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := CheckoutOf(filepath.Join(other, "queryd")); got != "" {
		t.Errorf("CheckoutOf outside a StrataKB checkout = %q, want \"\"", got)
	}
	if got := Home(func(k string) string { return map[string]string{HomeVar: "/srv/strata"}[k] }); got != "/srv/strata" {
		t.Errorf("Home with STRATA_HOME = %q", got)
	}
	getenv := WithHome(func(string) string { return "" })
	if h := getenv(HomeVar); h != Home(func(string) string { return "" }) {
		t.Errorf("WithHome's STRATA_HOME %q is not Home's", h)
	}
	if got := UnderHome("/srv/strata", "var/lib/x.so"); got != "/srv/strata/var/lib/x.so" {
		t.Errorf("UnderHome = %q", got)
	}
	if got := UnderHome("/srv/strata", "/abs/x.so"); got != "/abs/x.so" {
		t.Errorf("UnderHome of an absolute path = %q", got)
	}
}
