package embedding

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/bert"
	"github.com/stratakb/stratakb/embed/uselite"
)

// localModel is a resolved local model: USE-lite, or a BERT-family export
// with its spec.
type localModel struct {
	dir     string
	useLite bool
	spec    bert.Spec
}

func (m localModel) vectorName() string {
	if m.useLite {
		return uselite.ModelName
	}
	return m.spec.Name
}

func (m localModel) dims() int {
	if m.useLite {
		return uselite.Dims
	}
	return m.spec.Dims
}

// resolveLocal tells which local model the configuration names and where
// its files are. A known name (embed/models.tsv, or use-lite) has its spec
// built in. A folder of the user's own (STRATA_MODEL_DIR) is USE-lite when
// it holds TF.js's model.json, a known model when the folder is named after
// one, and otherwise a sentence-transformers export described by its own
// files (see customSpec).
func resolveLocal(c embed.Config) (localModel, error) {
	name, dir := c.LocalModel()
	if name == "" {
		switch base := filepath.Base(dir); {
		case fileExists(filepath.Join(dir, "model.json")):
			name = embed.USELiteModel
		case embed.KnownLocalModel(base):
			name = base
		case !fileExists(filepath.Join(dir, "model.onnx")):
			// Nothing there (yet): the default model, whose load will
			// name the missing files.
			name = embed.DefaultLocalModel
		}
	}
	if name == embed.USELiteModel {
		return localModel{dir: dir, useLite: true}, nil
	}
	if spec, ok := bert.Known[name]; ok {
		return localModel{dir: dir, spec: spec}, nil
	}
	spec, err := customSpec(name, dir)
	if err != nil {
		return localModel{}, err
	}
	return localModel{dir: dir, spec: spec}, nil
}

// strataModelFile, in a user's model folder, says what the exporter's own
// files do not: {"name": …, "dims": 384, "max_tokens": 512, "pooling":
// "mean"|"cls", "query_prefix": …, "passage_prefix": …}. Every field is
// optional.
const strataModelFile = "strata-model.json"

type customFile struct {
	Name          string `json:"name"`
	Dims          int    `json:"dims"`
	MaxTokens     int    `json:"max_tokens"`
	Pooling       string `json:"pooling"`
	QueryPrefix   string `json:"query_prefix"`
	PassagePrefix string `json:"passage_prefix"`
}

// customSpec describes a user's sentence-transformers export: the width
// from config.json (hidden_size), the truncation from
// sentence_bert_config.json (max_seq_length, else 512), the pooling from
// 1_Pooling/config.json (mean unless it says CLS), each overridden by
// strata-model.json. The vectors are named name, or "onnx:" and the
// folder's name.
func customSpec(name, dir string) (bert.Spec, error) {
	spec := bert.Spec{Name: name, MaxTokens: 512, Pooling: bert.Mean}
	if spec.Name == "" {
		spec.Name = "onnx:" + filepath.Base(dir)
	}
	var hf struct {
		HiddenSize int `json:"hidden_size"`
	}
	var sb struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	var pool struct {
		CLS bool `json:"pooling_mode_cls_token"`
	}
	var own customFile
	for _, f := range []struct {
		path string
		into any
	}{{"config.json", &hf}, {"sentence_bert_config.json", &sb}, {"1_Pooling/config.json", &pool}, {strataModelFile, &own}} {
		if err := readJSON(filepath.Join(dir, f.path), f.into); err != nil {
			return bert.Spec{}, err
		}
	}
	spec.Dims = hf.HiddenSize
	if sb.MaxSeqLength > 0 {
		spec.MaxTokens = sb.MaxSeqLength
	}
	if pool.CLS {
		spec.Pooling = bert.CLS
	}
	return own.apply(spec, dir)
}

func (own customFile) apply(spec bert.Spec, dir string) (bert.Spec, error) {
	if own.Name != "" {
		spec.Name = own.Name
	}
	if own.Dims > 0 {
		spec.Dims = own.Dims
	}
	if own.MaxTokens > 0 {
		spec.MaxTokens = own.MaxTokens
	}
	switch own.Pooling {
	case "":
	case "mean":
		spec.Pooling = bert.Mean
	case "cls":
		spec.Pooling = bert.CLS
	default:
		return spec, fmt.Errorf("%s: pooling %q: want mean or cls", filepath.Join(dir, strataModelFile), own.Pooling)
	}
	spec.QueryPrefix, spec.PassagePrefix = own.QueryPrefix, own.PassagePrefix
	if spec.Dims <= 0 {
		return spec, fmt.Errorf("model folder %s: the vector width is unknown: give config.json's hidden_size or \"dims\" in %s", dir, strataModelFile)
	}
	return spec, nil
}

// readJSON decodes path into v; a file that does not exist is no error.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
