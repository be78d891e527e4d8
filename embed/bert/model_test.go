package bert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stratakb/stratakb/embed/ortenv"
)

// TestModelConcurrentAndClose embeds from several goroutines at once (run
// with -race), then checks that Close is idempotent and that Embed after
// Close fails.
func TestModelConcurrentAndClose(t *testing.T) {
	m := loadKnown(t, requiredModel, 4)
	texts := []string{"first text", "a second, longer text to embed", "", "third"}
	want, err := m.EmbedPassages(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := m.EmbedPassages(context.Background(), texts)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range got {
				if c := cosine(got[i], want[i]); c < 0.99999 {
					t.Errorf("concurrent vector %d: cosine %.6f with the first", i, c)
				}
			}
		})
	}
	wg.Wait()
	if m.Name() != Known[requiredModel].Name || m.Dims() != 384 || len(want[0]) != 384 {
		t.Errorf("Name %q Dims %d vector %d, want %q 384 384", m.Name(), m.Dims(), len(want[0]), Known[requiredModel].Name)
	}
	closeTwice(t, m.Close)
	if _, err := m.Embed(context.Background(), texts); !errors.Is(err, ortenv.ErrClosed) {
		t.Errorf("Embed after Close: %v, want ortenv.ErrClosed", err)
	}
}

// TestEmbedCancelled checks that a cancelled context stops Embed.
func TestEmbedCancelled(t *testing.T) {
	m := loadKnown(t, requiredModel, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"a", "b"}); err == nil {
		t.Error("Embed with a cancelled context: no error")
	}
}

// TestDynamicQuantized checks the look-up of DynamicQuantizeLinear, also
// across the reader's 1 MiB blocks, and on the model files when present.
func TestDynamicQuantized(t *testing.T) {
	dir := t.TempDir()
	op := "DynamicQuantizeLinear"
	for name, c := range map[string]struct {
		content string
		want    bool
	}{
		"none":         {strings.Repeat("x", 3<<20), false},
		"small":        {"ab" + op + "cd", true},
		"across":       {strings.Repeat("x", 1<<20-5) + op + "y", true},
		"at the end":   {strings.Repeat("x", 2<<20) + op, true},
		"cut, not one": {strings.Repeat("x", 1<<20-5) + op[:10] + "y" + op[10:], false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := dynamicQuantized(path); err != nil || got != c.want {
			t.Errorf("%s: dynamicQuantized = %v, %v, want %v", name, got, err, c.want)
		}
	}
	for name := range Known {
		path := filepath.Join("..", "..", "var", "models", name, "model.onnx")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		got, err := dynamicQuantized(path)
		if want := strings.HasSuffix(name, "-q"); err != nil || got != want {
			t.Errorf("%s: dynamicQuantized = %v, %v, want %v", name, got, err, want)
		}
	}
}
