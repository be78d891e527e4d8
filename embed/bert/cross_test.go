package bert

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratakb/stratakb/embed/ortenv"
)

const tinyCross = "testdata/tiny-cross-encoder"

// crossReference is tiny-cross-encoder/reference.json, written by
// make_tiny_crossencoder.py with tokenizers' BertWordPieceTokenizer and ONNX
// Runtime.
type crossReference struct {
	MaxTokens int `json:"max_tokens"`
	Cases     []struct {
		Query          string  `json:"query"`
		Passage        string  `json:"passage"`
		IDs            []int   `json:"ids"`
		TypeIDs        []int   `json:"type_ids"`
		Logit          float64 `json:"logit"`
		LogitTypesZero float64 `json:"logit_types_zero"`
	} `json:"cases"`
}

func readCrossReference(t *testing.T) crossReference {
	var ref crossReference
	readJSON(t, filepath.Join(tinyCross, "reference.json"), &ref)
	return ref
}

// TestPairEncodingParity checks vocab.txt loading and pair encoding with
// longest-first truncation against tokenizers, id for id.
func TestPairEncodingParity(t *testing.T) {
	ref := readCrossReference(t)
	tok, err := loadTokenizer(tinyCross)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Cases {
		ids, types := tok.encodePair(c.Query, c.Passage, ref.MaxTokens)
		if !slices.Equal(ids, c.IDs) || !slices.Equal(types, c.TypeIDs) {
			t.Errorf("encodePair(%q, %q)\n got %v %v\nwant %v %v", c.Query, c.Passage, ids, types, c.IDs, c.TypeIDs)
		}
	}
}

// TestCrossEncoderScore checks that Score returns sigmoid of the reference
// logits, in order, batched or not, and that token type ids reach the graph.
func TestCrossEncoderScore(t *testing.T) {
	ref := readCrossReference(t)
	lib := libraryPath(t)
	byQuery := map[string][]int{} // query → indices of its cases, in order
	var queries []string
	typesMatter := false
	for i, c := range ref.Cases {
		if byQuery[c.Query] == nil {
			queries = append(queries, c.Query)
		}
		byQuery[c.Query] = append(byQuery[c.Query], i)
		typesMatter = typesMatter || math.Abs(sigmoid(c.Logit)-sigmoid(c.LogitTypesZero)) > 0.01
	}
	if !typesMatter {
		t.Fatal("the reference's logits do not depend on token_type_ids: the test could not tell whether they reach the graph")
	}
	for _, batch := range []int{1, 3, 16} {
		c, err := LoadCrossEncoder(CrossConfig{ModelDir: tinyCross, LibraryPath: lib, MaxTokens: ref.MaxTokens, BatchSize: batch})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			var passages []string
			for _, i := range byQuery[q] {
				passages = append(passages, ref.Cases[i].Passage)
			}
			scores, err := c.Score(context.Background(), q, passages)
			if err != nil {
				t.Fatal(err)
			}
			for k, i := range byQuery[q] {
				if want := sigmoid(ref.Cases[i].Logit); math.Abs(scores[k]-want) > 1e-5 {
					t.Errorf("batch %d: Score(%q, %q) = %.7f, want %.7f (token types zero would give %.7f)",
						batch, q, passages[k], scores[k], want, sigmoid(ref.Cases[i].LogitTypesZero))
				}
			}
		}
		closeTwice(t, c.Close)
		if _, err := c.Score(context.Background(), "q", []string{"p"}); !errors.Is(err, ortenv.ErrClosed) {
			t.Errorf("Score after Close: %v, want ortenv.ErrClosed", err)
		}
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func closeTwice(t *testing.T, close func() error) {
	t.Helper()
	for range 2 {
		if err := close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// TestLoadMissingFiles checks that every missing file is named in one
// *MissingFilesError that matches fs.ErrNotExist.
func TestLoadMissingFiles(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libonnxruntime.so.1")
	_, err := Load(Config{ModelDir: dir, LibraryPath: lib, Spec: Known["bge-small-en-v1.5"]})
	var missing *MissingFilesError
	if !errors.As(err, &missing) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load with no files: %v, want a *MissingFilesError", err)
	}
	want := []string{filepath.Join(dir, "model.onnx"), filepath.Join(dir, "tokenizer.json"), lib}
	if !slices.Equal(missing.Paths, want) {
		t.Errorf("missing %v, want %v", missing.Paths, want)
	}
}

// TestLoadRejectsBadConfig checks that a bad configuration is refused before
// any file is read, naming the field.
func TestLoadRejectsBadConfig(t *testing.T) {
	spec := Known["bge-small-en-v1.5"]
	for name, cfg := range map[string]Config{
		"ModelDir":       {LibraryPath: "lib", Spec: spec},
		"LibraryPath":    {ModelDir: "dir", Spec: spec},
		"IntraOpThreads": {ModelDir: "dir", LibraryPath: "lib", IntraOpThreads: -1, Spec: spec},
		"BatchSize":      {ModelDir: "dir", LibraryPath: "lib", BatchSize: -1, Spec: spec},
		"MaxTokens":      {ModelDir: "dir", LibraryPath: "lib", Spec: Spec{Name: "x@1", Dims: 384, MaxTokens: 2}},
		"Spec":           {ModelDir: "dir", LibraryPath: "lib", Spec: Spec{Dims: 384, MaxTokens: 512}},
	} {
		if _, err := Load(cfg); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: Load returned %v, want a configuration error", name, err)
		}
	}
}
