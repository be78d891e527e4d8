// Package ortenv holds the process-wide ONNX Runtime environment.
// github.com/yalue/onnxruntime_go keeps one environment per process, bound to
// one shared library, so every package that opens an ONNX Runtime session
// (uselite, bert) initialises it here rather than on its own.
package ortenv

import (
	"fmt"
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
