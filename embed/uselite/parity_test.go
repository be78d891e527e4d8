package uselite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratakb/stratakb/embed/internal/embedtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// TestParity compares the Go port with what the reference JavaScript package
// produces: token ids exactly, vectors to cosine ≥ 0.9999.
func TestParity(t *testing.T) {
	dir := filepath.Join(testenv.SharedDir(t), "models", "use-lite-parity")
	testenv.Require(t, filepath.Join(dir, "reference.json"), "the parity oracle")
	var sentences []string
	readJSON(t, filepath.Join(dir, "sentences.json"), &sentences)
	var ref struct {
		IDs [][]int     `json:"ids"`
		Emb [][]float32 `json:"emb"`
	}
	readJSON(t, filepath.Join(dir, "reference.json"), &ref)
	if len(ref.IDs) != len(sentences) || len(ref.Emb) != len(sentences) {
		t.Fatalf("oracle has %d ids and %d vectors for %d sentences", len(ref.IDs), len(ref.Emb), len(sentences))
	}
	m := testModel(t)
	for i, s := range sentences {
		if got := m.Tokenize(s); !slices.Equal(got, ref.IDs[i]) {
			t.Errorf("Tokenize(%q)\n got %v\nwant %v", s, got, ref.IDs[i])
		}
	}
	// Batched together, and one by one: padding must not change a vector.
	batched, err := m.Embed(context.Background(), sentences)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sentences {
		single, err := m.Embed(context.Background(), []string{s})
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string][]float32{"batched": batched[i], "single": single[0]} {
			if c := cosine(v, ref.Emb[i]); c < 0.9999 {
				t.Errorf("%s vector of %q: cosine %.6f with the reference, want ≥ 0.9999", name, s, c)
			} else {
				t.Logf("%s %-60.60q cosine %.7f", name, s, c)
			}
		}
	}
}

var readJSON = embedtest.ReadJSON
