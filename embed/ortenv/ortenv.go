// Package ortenv holds what the packages that run ONNX Runtime (uselite,
// bert) share: the process-wide environment and the session options.
// github.com/yalue/onnxruntime_go keeps one environment per process, bound to
// one shared library, so every such package initialises it here rather than
// on its own.
package ortenv

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

var (
	mu   sync.Mutex
	path string // the library the environment was initialised from
)

// Init initialises ONNX Runtime from the shared library at libraryPath, once
// per process. A later call with the same path does nothing; a call with
// another path is an error, since the library cannot be switched while the
// process runs.
func Init(libraryPath string) error {
	mu.Lock()
	defer mu.Unlock()
	if ort.IsInitialized() {
		if path != "" && path != libraryPath {
			return fmt.Errorf("ONNX Runtime already initialised from %s, cannot switch to %s", path, libraryPath)
		}
		return nil
	}
	ort.SetSharedLibraryPath(libraryPath)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("initialise ONNX Runtime from %s: %w", libraryPath, err)
	}
	path = libraryPath
	return nil
}

// DefaultThreads is ONNX Runtime's thread count per call for a machine with
// cpus CPUs when a configuration leaves it at 0: one per CPU, at most 8.
func DefaultThreads(cpus int) int { return min(max(1, cpus), 8) }

// SessionOptions returns session options with threads intra-op threads
// (DefaultThreads when 0), one inter-op thread, and ONNX Runtime's spinning
// off unless spin: a spinning worker thread busy-waits for work between
// calls, which on a small machine took most of the CPU of a query
// (docs/embeddings.md) and starved the other requests. The caller destroys
// the options.
func SessionOptions(threads int, spin bool) (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	if threads == 0 {
		threads = DefaultThreads(runtime.NumCPU())
	}
	flag := "0"
	if spin {
		flag = "1"
	}
	err = opts.SetIntraOpNumThreads(threads)
	if err != nil {
		err = fmt.Errorf("set intra-op threads: %w", err)
	} else if err = opts.SetInterOpNumThreads(1); err != nil {
		err = fmt.Errorf("set inter-op threads: %w", err)
	}
	for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
		if err == nil {
			if err = opts.AddSessionConfigEntry(key, flag); err != nil {
				err = fmt.Errorf("set %s: %w", key, err)
			}
		}
	}
	if err != nil {
		_ = opts.Destroy()
		return nil, err
	}
	return opts, nil
}

// MissingFilesError reports model or library files that do not exist. It
// matches fs.ErrNotExist with errors.Is.
type MissingFilesError struct {
	Paths []string
}

func (e *MissingFilesError) Error() string {
	return fmt.Sprintf("missing %s (run `make setup` to fetch the model and ONNX Runtime)", strings.Join(e.Paths, ", "))
}

// Unwrap lets errors.Is(err, fs.ErrNotExist) hold.
func (e *MissingFilesError) Unwrap() error { return fs.ErrNotExist }

// RequireFiles returns one *MissingFilesError naming each of paths that does
// not exist, or nil when all do.
func RequireFiles(paths ...string) error {
	var missing []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return &MissingFilesError{Paths: missing}
	}
	return nil
}
