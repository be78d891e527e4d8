package bert

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratakb/stratakb/embed/internal/embedtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// requiredModel is the model whose absence fails the parity test under
// CI=true (the default under consideration); the other models skip when
// their folder is absent.
var requiredModel = "bge-small-en-v1.5"

// libraryPath returns the ONNX Runtime library from `make setup`, skipping
// the test (failing it under CI=true) when it is absent.
func libraryPath(t testing.TB) string {
	t.Helper()
	path := filepath.Join(testenv.VarDir(t), "lib", "libonnxruntime.so.1")
	testenv.Require(t, path, "the ONNX Runtime library (make setup)")
	return path
}

// loadKnown loads the model of folder name under var/models with its Known
// spec. An absent folder skips the test, or fails it under CI=true when name
// is requiredModel.
func loadKnown(t testing.TB, name string, batch int) *Model {
	t.Helper()
	return loadKnownWith(t, name, Config{BatchSize: batch})
}

// loadKnownWith loads the installed model name with cfg's settings.
func loadKnownWith(t testing.TB, name string, cfg Config) *Model {
	t.Helper()
	lib := libraryPath(t)
	dir := filepath.Join(testenv.VarDir(t), "models", name)
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		if name == requiredModel {
			testenv.Missing(t, "the default model "+name+" (make setup): "+err.Error())
		}
		t.Skipf("skipped: model %s is absent: %v", name, err)
	}
	cfg.ModelDir, cfg.LibraryPath, cfg.Spec = dir, lib, Known[name]
	m, err := Load(cfg)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

var (
	cosine   = embedtest.Cosine
	readJSON = embedtest.ReadJSON
)
