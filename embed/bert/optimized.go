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
// they were made on) into the model's folder, in ONNX Runtime's own format;
// later sessions open that file with optimisation off. A command-line
// search's session (sessionSettings.fewCalls) maps the file into memory and
// has ONNX Runtime read the graph and its weights where they lie instead of
// parsing and copying them: 25 ms to open bge-small-en-v1.5 against about
// 200 from the optimised ONNX file, and 24 against 75 for its int8 export.
// The file is named after the ONNX Runtime version and the model file's
// size and time, so a new library or a new model makes a new one, and the
// folder keeps only the newest. A folder the process cannot write to just
// gets no cache.

// optimizedDir is the cache's folder inside a model's folder.
const optimizedDir = ".optimized"

// optimizedPath is where the optimised graph of model is cached.
func optimizedPath(model string) (string, error) {
	st, err := os.Stat(model)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("ort%s-%s-%d-%d.ort", ort.GetVersion(), runtime.GOARCH, st.Size(), st.ModTime().UnixNano())
	return filepath.Join(filepath.Dir(model), optimizedDir, name), nil
}

// openSession opens model with the cached optimised graph when there is
// one, else optimises it and saves the result for the next session.
func openSession(model string, inputs, outputs []string, set sessionSettings) (*ortenv.Session, error) {
	cached, err := optimizedPath(model)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(cached); err == nil {
		s, err := openCached(cached, inputs, outputs, set)
		if err == nil {
			return s, nil
		}
		_ = os.Remove(cached) // unreadable: made again below
	}
	tmp := cacheFile(cached)
	if tmp == "" {
		return openPath(model, inputs, outputs, set, ort.GraphOptimizationLevelEnableAll, "")
	}
	defer os.Remove(tmp)
	s, err := openPath(model, inputs, outputs, set, ort.GraphOptimizationLevelEnableExtended, tmp)
	if err != nil {
		// Saving the graph can fail on its own (a full disk): open the
		// model as before, without a cache.
		return openPath(model, inputs, outputs, set, ort.GraphOptimizationLevelEnableAll, "")
	}
	publishCache(tmp, cached)
	return s, nil
}

// openCached opens the cached graph at path. A session for a few calls
// reads it from a mapping of the file, which the session owns. Others, or
// where files cannot be mapped, open it from the path: ONNX Runtime then
// copies the weights, pre-packs them for its kernels and frees the copies,
// where a mapping would stay resident beside the packed weights (about 60
// MiB more for bge-small-en-v1.5, for no faster query).
func openCached(path string, inputs, outputs []string, set sessionSettings) (*ortenv.Session, error) {
	off := ort.GraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll)
	if set.fewCalls {
		if data, unmap, err := mapCache(path); err == nil {
			s, err := newSession(sessionFile{data: data}, inputs, outputs, set, off, "")
			if err != nil {
				_ = unmap()
				return nil, err
			}
			return ortenv.NewSessionOver(s, unmap), nil
		}
	}
	return openPath(path, inputs, outputs, set, off, "")
}

// openPath opens the graph in the file at path (newSession).
func openPath(path string, inputs, outputs []string, set sessionSettings, level ort.GraphOptimizationLevel, save string) (*ortenv.Session, error) {
	s, err := newSession(sessionFile{path: path}, inputs, outputs, set, level, save)
	if err != nil {
		return nil, err
	}
	return ortenv.NewSession(s), nil
}

// mapCache is mapFile; tests replace it.
var mapCache = mapFile

// cacheFile is newCacheFile; tests replace it.
var cacheFile = newCacheFile

// newCacheFile returns a fresh path in the cache's folder for a session to
// write the optimised graph to, "" when the folder cannot be written.
func newCacheFile(cached string) string {
	dir := filepath.Dir(cached)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	f, err := os.CreateTemp(dir, ".writing-*.ort")
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
	// Graphs cached before, in either format (ONNX until 7 December 2026).
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(cached), "ort*"))
	for _, o := range old {
		if o != cached {
			_ = os.Remove(o)
		}
	}
}

// sessionSettings are how a session runs: its threads, whether they spin,
// and whether it serves only a few calls (no pre-packed weights).
type sessionSettings struct {
	threads  int
	spin     bool
	fewCalls bool
}

// sessionFile is the graph a session opens: the file at path, or data, a
// graph in ONNX Runtime's format that the session reads in place (its
// weights included) and that must outlive it.
type sessionFile struct {
	path string
	data []byte
}

// newSession opens file with the threads, spinning and optimisation level
// given, saving the optimised graph, in ONNX Runtime's format, to save
// when it is not "".
func newSession(file sessionFile, inputs, outputs []string, set sessionSettings, level ort.GraphOptimizationLevel, save string) (*ort.DynamicAdvancedSession, error) {
	opts, err := ortenv.SessionOptions(set.threads, set.spin)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	var config [][2]string
	if set.fewCalls {
		config = append(config, [2]string{"session.disable_prepacking", "1"})
	}
	if save != "" {
		config = append(config, [2]string{"session.save_model_format", "ORT"})
	}
	if file.data != nil {
		config = append(config, [2]string{"session.use_ort_model_bytes_directly", "1"},
			[2]string{"session.use_ort_model_bytes_for_initializers", "1"})
	}
	for _, kv := range config {
		if err := opts.AddSessionConfigEntry(kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("set %s: %w", kv[0], err)
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
	if file.data != nil {
		return ort.NewDynamicAdvancedSessionWithONNXData(file.data, inputs, outputs, opts)
	}
	return ort.NewDynamicAdvancedSession(file.path, inputs, outputs, opts)
}
