package ortenv

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
)

func initLibrary(t *testing.T) string {
	t.Helper()
	lib := filepath.Join(testenv.VarDir(t), "lib", "libonnxruntime.so.1")
	testenv.Require(t, lib, "the ONNX Runtime library (make setup)")
	if err := Init(lib); err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestInit checks that Init is idempotent and refuses to switch libraries.
func TestInit(t *testing.T) {
	lib := initLibrary(t)
	if err := Init(lib); err != nil {
		t.Errorf("second Init with the same library: %v", err)
	}
	other := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if err := Init(other); err == nil || !strings.Contains(err.Error(), "cannot switch") {
		t.Errorf("Init with another library: %v, want an error", err)
	}
}

// TestSessionOptionsSpinning: ONNX Runtime's threads must not busy-wait
// between calls unless asked to.
func TestSessionOptionsSpinning(t *testing.T) {
	initLibrary(t)
	for _, spin := range []bool{false, true} {
		opts, err := SessionOptions(1, spin)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "0", true: "1"}[spin]
		for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
			if got, err := opts.GetSessionConfigEntry(key); err != nil || got != want {
				t.Errorf("spin=%t: %s = %q (%v), want %q", spin, key, got, err, want)
			}
		}
		_ = opts.Destroy()
	}
}

func TestDefaultThreads(t *testing.T) {
	for cpus, want := range map[int]int{0: 1, 1: 1, 2: 2, 8: 8, 64: 8} {
		if got := DefaultThreads(cpus); got != want {
			t.Errorf("DefaultThreads(%d) = %d, want %d", cpus, got, want)
		}
	}
}
