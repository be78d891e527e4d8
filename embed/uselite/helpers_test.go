package uselite

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stratakb/stratakb/embed/internal/embedtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

var (
	sharedOnce  sync.Once
	sharedModel *Model
	sharedErr   error
)

// testModel loads the model once per test binary (one session per process,
// as in production). It skips locally, and fails under CI=true, when the
// files from `make setup` are missing.
func testModel(t testing.TB) *Model {
	t.Helper()
	cfg := DefaultConfig(varDir(t))
	testenv.Require(t, filepath.Join(cfg.ModelDir, "model.json"), "the USE-lite model (make setup)")
	testenv.Require(t, filepath.Join(cfg.ModelDir, "vocab.json"), "the USE-lite vocabulary (make setup)")
	testenv.Require(t, cfg.LibraryPath, "the ONNX Runtime library (make setup)")
	sharedOnce.Do(func() { sharedModel, sharedErr = Load(cfg) })
	if sharedErr != nil {
		t.Fatalf("load model: %v", sharedErr)
	}
	return sharedModel
}

var cosine = embedtest.Cosine

func varDir(t testing.TB) string { return testenv.VarDir(t) }
