package bert

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/stratakb/stratakb/embed/ortenv"
)

// ONNX Runtime optimises a graph each time a session opens it, and for a
// small model that is most of the load: the int8 export of bge-small spent
// about 200 of its 270 ms there, which every command-line search paid
// (issue 31). The first session that opens a model saves the graph as
// optimised (at the extended level, whose fusions are not tied to the CPU
// they were made on) into the model's folder; later sessions open that
// file with optimisation off. The file is named after the ONNX Runtime
// version and the model file's size and time, so a new library or a new
// model makes a new one, and the folder keeps only the newest. A folder
// the process cannot write to just gets no cache.

// optimizedDir is the cache's folder inside a model's folder.
const optimizedDir = ".optimized"

// optimizedPath is where the optimised graph of model is cached.
func optimizedPath(model string) (string, error) {
	st, err := os.Stat(model)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("ort%s-%s-%d-%d.onnx", ort.GetVersion(), runtime.GOARCH, st.Size(), st.ModTime().UnixNano())
	return filepath.Join(filepath.Dir(model), optimizedDir, name), nil
}

// openSession opens model with the cached optimised graph when there is
// one, else optimises it and saves the result for the next session.
func openSession(model string, inputs, outputs []string, set sessionSettings) (*ort.DynamicAdvancedSession, error) {
	cached, err := optimizedPath(model)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(cached); err == nil {
		s, err := newSession(cached, inputs, outputs, set, ort.GraphOptimizationLevelDisableAll, "")
		if err == nil {
			return s, nil
		}
		_ = os.Remove(cached) // unreadable: made again below
	}
	tmp := cacheFile(cached)
	if tmp == "" {
		return newSession(model, inputs, outputs, set, ort.GraphOptimizationLevelEnableAll, "")
	}
	defer os.Remove(tmp)
	s, err := newSession(model, inputs, outputs, set, ort.GraphOptimizationLevelEnableExtended, tmp)
	if err != nil {
		// Saving the graph can fail on its own (a full disk): open the
		// model as before, without a cache.
		return newSession(model, inputs, outputs, set, ort.GraphOptimizationLevelEnableAll, "")
	}
	publishCache(tmp, cached)
	return s, nil
}

// cacheFile is newCacheFile; tests replace it.
var cacheFile = newCacheFile

// newCacheFile returns a fresh path in the cache's folder for a session to
// write the optimised graph to, "" when the folder cannot be written.
func newCacheFile(cached string) string {
	dir := filepath.Dir(cached)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	f, err := os.CreateTemp(dir, ".writing-*.onnx")
	if err != nil {
		return ""
	}
	name := f.Name()
	_ = f.Close()
	return name
}

// publishCache links the written graph into place (a process that linked
// first wins) and removes the folder's older graphs.
func publishCache(tmp, cached string) {
	if st, err := os.Stat(tmp); err != nil || st.Size() == 0 || os.Chmod(tmp, 0o644) != nil {
		return
	}
	if err := os.Link(tmp, cached); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(cached), "ort*.onnx"))
	for _, o := range old {
		if o != cached {
			_ = os.Remove(o)
		}
	}
}

// newSession opens path with the threads, spinning and optimisation level
// given, saving the optimised graph to save when it is not "".
// sessionSettings are how a session runs: its threads, whether they spin,
// and whether it serves only a few calls (no pre-packed weights).
type sessionSettings struct {
	threads  int
	spin     bool
	fewCalls bool
}

func newSession(path string, inputs, outputs []string, set sessionSettings, level ort.GraphOptimizationLevel, save string) (*ort.DynamicAdvancedSession, error) {
	opts, err := ortenv.SessionOptions(set.threads, set.spin)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if set.fewCalls {
		if err := opts.AddSessionConfigEntry("session.disable_prepacking", "1"); err != nil {
			return nil, fmt.Errorf("turn weight pre-packing off: %w", err)
		}
	}
	if err := opts.SetGraphOptimizationLevel(level); err != nil {
		return nil, fmt.Errorf("set the graph optimisation level: %w", err)
	}
	if save != "" {
		if err := opts.SetOptimizedModelFilePath(save); err != nil {
			return nil, fmt.Errorf("set the optimised model's path: %w", err)
		}
	}
	return ort.NewDynamicAdvancedSession(path, inputs, outputs, opts)
}
