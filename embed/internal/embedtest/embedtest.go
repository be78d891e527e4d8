// Package embedtest holds what the local models' tests and benchmarks share:
// the cosine of two vectors, reading a JSON oracle, and a throughput
// benchmark loop.
package embedtest

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
)

// Cosine returns the cosine similarity of a and b.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// ReadJSON decodes the JSON file at path into v, failing t on error.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// Throughput runs op in b's loop and reports items per second and per
// CPU-second of the process (steadier on a shared machine), where each call
// of op handles perOp items named unit ("chunks").
func Throughput(b *testing.B, unit string, perOp int, op func() error) {
	b.Helper()
	n := 0
	cpu := testenv.ProcessCPU().Seconds()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
		n += perOp
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), unit+"/s")
	b.ReportMetric(float64(n)/(testenv.ProcessCPU().Seconds()-cpu), unit+"/cpu-s")
}
