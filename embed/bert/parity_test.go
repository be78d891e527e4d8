package bert

import (
	"context"
	"slices"
	"sort"
	"testing"
)

// reference is testdata/reference.json, written by make_reference.py with
// Hugging Face tokenizers and ONNX Runtime.
type reference struct {
	Versions  map[string]string `json:"versions"`
	Sentences []string          `json:"sentences"`
	Models    map[string]struct {
		IDs        [][]int     `json:"ids"`
		QueryIDs   [][]int     `json:"query_ids"`
		PassageIDs [][]int     `json:"passage_ids"`
		Query      [][]float32 `json:"query"`
		Passage    [][]float32 `json:"passage"`
	} `json:"models"`
}

// TestParity compares each model with the reference: token ids exactly
// (with and without the prefixes), vectors to cosine ≥ 0.9999, embedded one
// at a time and all in one call, in padded batches where the model allows
// them (padding must not change a vector).
func TestParity(t *testing.T) {
	var ref reference
	readJSON(t, "testdata/reference.json", &ref)
	t.Logf("reference made with %v", ref.Versions)
	names := make([]string, 0, len(Known))
	for name := range Known {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			r, ok := ref.Models[name]
			if !ok {
				t.Fatalf("reference.json has no %s: rerun make_reference.py", name)
			}
			m := loadKnown(t, name, 16) // batches of up to 16 texts, so padding is exercised
			spec := Known[name]
			for i, s := range ref.Sentences {
				checkIDs(t, m, s, r.IDs[i])
				checkIDs(t, m, spec.QueryPrefix+s, r.QueryIDs[i])
				checkIDs(t, m, spec.PassagePrefix+s, r.PassageIDs[i])
			}
			worst := min(
				checkVectors(t, "query", m.Embed, ref.Sentences, r.Query),
				checkVectors(t, "passage", m.EmbedPassages, ref.Sentences, r.Passage))
			t.Logf("%s: min cosine %.9f (1 − cos = %.1e)", name, worst, 1-worst)
			// Opened for a few calls (the command line's session: no
			// pre-packed weights), the queries embed the same.
			few := loadKnownWith(t, name, Config{FewCalls: true})
			worst = checkVectors(t, "query, few calls", few.Embed, ref.Sentences, r.Query)
			t.Logf("%s, few calls: min cosine %.9f", name, worst)
		})
	}
}

func checkIDs(t *testing.T, m *Model, text string, want []int) {
	t.Helper()
	if got := m.Tokenize(text); !slices.Equal(got, want) {
		t.Errorf("Tokenize(%.60q)\n got %v\nwant %v", text, got, want)
	}
}

// checkVectors embeds texts in one batch and one by one with embed, compares
// each vector with want and returns the lowest cosine.
func checkVectors(t *testing.T, kind string, embed func(context.Context, []string) ([][]float32, error), texts []string, want [][]float32) float64 {
	t.Helper()
	batched, err := embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, s := range texts {
		single, err := embed(context.Background(), []string{s})
		if err != nil {
			t.Fatal(err)
		}
		for how, v := range map[string][]float32{"batched": batched[i], "alone": single[0]} {
			c := cosine(v, want[i])
			worst = min(worst, c)
			if c < 0.9999 {
				t.Errorf("%s vector of %.60q embedded %s: cosine %.6f with the reference, want ≥ 0.9999", kind, s, how, c)
			}
		}
	}
	return worst
}
