package retrieve

import (
	"math"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

func TestPickModel(t *testing.T) {
	ids := []int64{1, 2, 3}
	for _, tc := range []struct {
		name   string
		models map[int64][]string
		def    string
		want   string
	}{
		{"none complete", map[int64][]string{}, "bge@1", ""},
		{"all on the default", map[int64][]string{1: {"bge@1"}, 2: {"bge@1"}}, "bge@1", "bge@1"},
		{"old layers keep their model", map[int64][]string{1: {"use-lite-512@1"}, 2: {"use-lite-512@1"}, 3: {"bge@1"}}, "bge@1", "use-lite-512@1"},
		{"newest complete model counts", map[int64][]string{1: {"bge@1", "use-lite-512@1"}}, "use-lite-512@1", "bge@1"},
		{"the default wins a tie", map[int64][]string{1: {"e5@1"}, 2: {"bge@1"}}, "bge@1", "bge@1"},
		{"then the first name", map[int64][]string{1: {"e5@1"}, 2: {"bge@1"}}, "x@1", "bge@1"},
	} {
		if got := pickModel(tc.models, ids, tc.def); got != tc.want {
			t.Errorf("%s: pickModel = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFuseContractsVectorWeight: a vector hit in a layer of the contracts
// preset is fused with ContractsVectorWeight, one in any other layer with
// VectorWeight; a negative ContractsVectorWeight keeps VectorWeight for all.
func TestFuseContractsVectorWeight(t *testing.T) {
	vec := []store.VecHit{{ChunkID: 1, LayerID: 10, Similarity: 0.9}, {ChunkID: 2, LayerID: 20, Similarity: 0.8}}
	contracts := map[int64]bool{10: true}
	p := Params{RRFK: 10, LexicalWeight: 1, VectorWeight: 1, ContractsVectorWeight: 0.25}
	fused := map[int64]float64{}
	for _, c := range fuse(nil, vec, nil, p, contracts) {
		fused[c.ChunkID] = c.Fused
	}
	if want := 0.25 / 11; math.Abs(fused[1]-want) > 1e-12 {
		t.Errorf("contracts hit fused %v, want %v", fused[1], want)
	}
	if want := 1.0 / 12; math.Abs(fused[2]-want) > 1e-12 {
		t.Errorf("docs hit fused %v, want %v", fused[2], want)
	}
	p.ContractsVectorWeight = -1
	for _, c := range fuse(nil, vec, nil, p, contracts) {
		if c.ChunkID == 1 && math.Abs(c.Fused-1.0/11) > 1e-12 {
			t.Errorf("without a contracts weight the hit fused %v, want %v", c.Fused, 1.0/11)
		}
	}
}
