// Package testenv finds what tests need outside the package under test: the
// repository root, the shared benchmark and corpus folder, and the files that
// `make setup` fetched. When something is missing a test is skipped, except
// under CI=true, where it fails: CI must never pass by skipping.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod, walking up from the working
// directory of the test.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("testenv: getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("testenv: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// SharedDir returns the shared folder (STRATA_SHARED_DIR, else ../shared next
// to the repository root).
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("STRATA_SHARED_DIR")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared")
	}
	Require(t, dir, "the shared folder (set STRATA_SHARED_DIR)")
	return dir
}

// VarDir returns the repository's var/ folder, where `make setup` puts the
// ONNX Runtime library and the model files.
func VarDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "var")
}

// Require skips the test (fails it under CI=true) when path does not exist.
func Require(t testing.TB, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, what+": "+err.Error())
	}
}

// Missing skips the test, or fails it when CI=true.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("required for this test under CI: %s", why)
	}
	t.Skipf("skipped: %s", why)
}

// WriteFiles writes files (a path relative to dir → its content) under dir,
// making the folders they need.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
