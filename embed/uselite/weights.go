package uselite

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// tfjsModel is the part of a TF.js graph model's model.json this package reads:
// the weights manifest. The graph itself is rebuilt in ONNX by hand (graph.go).
type tfjsModel struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// tensor is a named float32 weight from the TF.js shards.
type tensor struct {
	shape []int
	data  []float32
}

// readManifest parses model.json and returns it with the shard paths it names,
// resolved against dir.
func readManifest(dir string) (*tfjsModel, []string, error) {
	path := filepath.Join(dir, "model.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read model manifest: %w", err)
	}
	var m tfjsModel
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, nil, fmt.Errorf("decode model manifest %s: %w", path, err)
	}
	var shards []string
	for _, g := range m.WeightsManifest {
		for _, p := range g.Paths {
			shards = append(shards, filepath.Join(dir, p))
		}
	}
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("model manifest %s names no weight shards", path)
	}
	return &m, shards, nil
}

// readWeights loads every float32 weight of the manifest. Small int32
// constants (shapes, axes) are skipped: the ONNX graph does not need them.
func readWeights(dir string, m *tfjsModel) (map[string]tensor, error) {
	out := map[string]tensor{}
	for _, g := range m.WeightsManifest {
		var buf []byte
		for _, p := range g.Paths {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				return nil, fmt.Errorf("read weight shard: %w", err)
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			size := 4 * n
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("weight %s: unsupported dtype %q", w.Name, w.Dtype)
			}
			if off+size > len(buf) {
				return nil, fmt.Errorf("weight %s: shards hold %d bytes, need %d", w.Name, len(buf), off+size)
			}
			if w.Dtype == "float32" {
				data := make([]float32, n)
				for i := range data {
					data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
				out[w.Name] = tensor{shape: append([]int(nil), w.Shape...), data: data}
			}
			off += size
		}
		if off != len(buf) {
			return nil, fmt.Errorf("weight shards hold %d bytes, manifest describes %d", len(buf), off)
		}
	}
	return out, nil
}
