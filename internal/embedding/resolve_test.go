package embedding

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/bert"
	"github.com/stratakb/stratakb/embed/uselite"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResolveLocal: which model a configuration names, and from which
// folder, without loading anything.
func TestResolveLocal(t *testing.T) {
	root := t.TempDir()
	lite := filepath.Join(root, "some-folder")
	writeFiles(t, lite, map[string]string{"model.json": "{}"})
	custom := filepath.Join(root, "mine")
	writeFiles(t, custom, map[string]string{"model.onnx": "x", "config.json": `{"hidden_size": 768}`,
		"sentence_bert_config.json": `{"max_seq_length": 256}`, "1_Pooling/config.json": `{"pooling_mode_cls_token": true}`})
	for _, tc := range []struct {
		cfg        embed.Config
		vectorName string
		dims       int
	}{
		{embed.DefaultConfig(), embed.DefaultLocalModel + "@1", 384},
		{embed.Config{ModelName: "e5-small-v2-q"}, "e5-small-v2-q@1", 384},
		{embed.Config{ModelName: "use-lite"}, uselite.ModelName, uselite.Dims},
		{embed.Config{ModelDir: lite}, uselite.ModelName, uselite.Dims},
		{embed.Config{ModelDir: filepath.Join(root, "all-minilm-l6-v2")}, "all-minilm-l6-v2@1", 384},
		{embed.Config{ModelDir: filepath.Join(root, "missing")}, embed.DefaultLocalModel + "@1", 384},
		{embed.Config{ModelDir: custom}, "onnx:mine", 768},
		{embed.Config{ModelName: "mine@2", ModelDir: custom}, "mine@2", 768},
	} {
		lm, err := resolveLocal(tc.cfg)
		if err != nil || lm.vectorName() != tc.vectorName || lm.dims() != tc.dims {
			t.Errorf("%s: %q %d dims (%v), want %q %d", tc.cfg, lm.vectorName(), lm.dims(), err, tc.vectorName, tc.dims)
		}
	}
	lm, _ := resolveLocal(embed.Config{ModelDir: custom})
	if lm.spec.Pooling != bert.CLS || lm.spec.MaxTokens != 256 {
		t.Errorf("custom spec %+v: want CLS pooling and 256 tokens from the exporter's files", lm.spec)
	}
	writeFiles(t, custom, map[string]string{"strata-model.json": `{"name": "m@1", "pooling": "mean", "query_prefix": "q: "}`})
	if lm, err := resolveLocal(embed.Config{ModelDir: custom}); err != nil || lm.spec.Name != "m@1" || lm.spec.Pooling != bert.Mean || lm.spec.QueryPrefix != "q: " {
		t.Errorf("strata-model.json not applied: %+v, %v", lm.spec, err)
	}
	writeFiles(t, custom, map[string]string{"strata-model.json": `{"pooling": "max"}`})
	if _, err := resolveLocal(embed.Config{ModelDir: custom}); err == nil || !strings.Contains(err.Error(), "pooling") {
		t.Errorf("a bad pooling: %v", err)
	}
	nodims := filepath.Join(root, "nodims")
	writeFiles(t, nodims, map[string]string{"model.onnx": "x"})
	if _, err := resolveLocal(embed.Config{ModelDir: nodims}); err == nil || !strings.Contains(err.Error(), "hidden_size") {
		t.Errorf("an export without its width: %v", err)
	}
}

// TestModelNames: local names and the names stored with vectors map both
// ways, and a name no model has is refused with the list of known ones.
func TestModelNames(t *testing.T) {
	for _, local := range []string{"use-lite", "bge-small-en-v1.5", "all-minilm-l6-v2-q"} {
		v, ok := VectorNameOf(local)
		back, ok2 := LocalNameOf(v)
		if !ok || !ok2 || back != local {
			t.Errorf("%s -> %q -> %q", local, v, back)
		}
	}
	cfg := embed.DefaultConfig()
	if got, err := ResolveName(cfg, "e5-small-v2"); err != nil || got != "e5-small-v2@1" {
		t.Errorf("ResolveName(e5-small-v2) = %q, %v", got, err)
	}
	if got, err := ResolveName(cfg, "use-lite-512@1"); err != nil || got != "use-lite-512@1" {
		t.Errorf("ResolveName(a vector name) = %q, %v", got, err)
	}
	if _, err := ResolveName(cfg, "bge-large"); err == nil || !strings.Contains(err.Error(), embed.DefaultLocalModel) {
		t.Errorf("ResolveName(unknown) = %v, want the known names", err)
	}
	if _, err := NewSet(cfg, nil, nil).ByName("openai_compatible:other"); err == nil {
		t.Error("a remote model other than the configured one cannot run here")
	}
}
