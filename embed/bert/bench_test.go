package bert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/embed/internal/embedtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// benchPassages returns n passages of about 800 bytes cut at spaces from
// the CUAD contracts in the shared corpora, or from a fixed paragraph when
// the corpora are absent.
func benchPassages(t testing.TB, n int) []string {
	t.Helper()
	text := strings.Repeat(fallbackParagraph, n)
	dir := os.Getenv("STRATA_SHARED_DIR")
	if dir == "" {
		dir = filepath.Join(testenv.RepoRoot(t), "..", "shared")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "corpora", "contracts-cuad", "*.txt"))
	sort.Strings(files)
	if len(files) > 0 {
		var b strings.Builder
		for _, f := range files[:min(len(files), 3)] {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
			b.WriteByte(' ')
		}
		text = b.String()
	}
	words := strings.Fields(text)
	out := make([]string, 0, n)
	for len(out) < n && len(words) > 0 {
		var b strings.Builder
		for len(words) > 0 && b.Len()+len(words[0]) < 800 {
			b.WriteString(words[0])
			b.WriteByte(' ')
			words = words[1:]
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	if len(out) < n {
		t.Fatalf("bench text gives %d passages, want %d", len(out), n)
	}
	return out
}

const fallbackParagraph = `The Supplier shall deliver the Products to the Buyer's warehouse in accordance with the delivery schedule set out in Schedule 2, and shall notify the Buyer in writing no later than five (5) Business Days before any anticipated delay. Title to and risk in the Products shall pass to the Buyer upon delivery. The Buyer may inspect the Products within thirty (30) days of delivery and may reject any Products that do not conform to the Specifications, in which case the Supplier shall, at its own cost, repair or replace the rejected Products within fifteen (15) days. Nothing in this clause limits the Buyer's other rights or remedies under this Agreement or at law, including the right to terminate for material breach. `

// presentModels returns the Known models whose folders exist, sorted.
func presentModels(b *testing.B) []string {
	var names []string
	for name := range Known {
		if _, err := os.Stat(filepath.Join(testenv.VarDir(b), "models", name, "model.onnx")); err == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		testenv.Missing(b, "no model under var/models (make setup)")
	}
	return names
}

// BenchmarkEmbedPassages reports 800-byte passages (chunks) per second and
// per CPU-second through EmbedPassages at the default batching, per model.
func BenchmarkEmbedPassages(b *testing.B) {
	for _, name := range presentModels(b) {
		b.Run(name, func(b *testing.B) { benchPassageBatch(b, name, 0) })
	}
}

// BenchmarkBatchSize is BenchmarkEmbedPassages for several batch sizes on
// the default model, the measurement behind DefaultBatchSize. (A quantized
// model runs one text per call whatever the batch size.)
func BenchmarkBatchSize(b *testing.B) {
	for _, size := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("%s/batch=%d", requiredModel, size), func(b *testing.B) { benchPassageBatch(b, requiredModel, size) })
	}
}

func benchPassageBatch(b *testing.B, name string, batch int) {
	m := loadKnown(b, name, batch)
	texts := benchPassages(b, 32)
	tokens := 0
	for _, t := range texts {
		tokens += len(m.Tokenize(m.spec.PassagePrefix + t))
	}
	embedtest.Throughput(b, "chunks", len(texts), func() error {
		_, err := m.EmbedPassages(context.Background(), texts)
		return err
	})
	b.ReportMetric(float64(tokens)/float64(len(texts)), "tokens/chunk")
}

// BenchmarkEmbedQuery reports the time to embed one 10-word query, per
// model.
func BenchmarkEmbedQuery(b *testing.B) {
	for _, name := range presentModels(b) {
		b.Run(name, func(b *testing.B) {
			m := loadKnown(b, name, 0)
			query := []string{"how many unused leave days can be carried over?"}
			embedtest.Throughput(b, "queries", 1, func() error {
				_, err := m.Embed(context.Background(), query)
				return err
			})
		})
	}
}

// BenchmarkQueryBatch reports the time per query when n claim-length
// queries (12 to 30 words) are embedded in one call, on one thread (as
// queryd runs them): what coalescing concurrent queries would save.
func BenchmarkQueryBatch(b *testing.B) {
	queries := []string{
		"0-dimensional biomaterials show inductive properties.",
		"ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
		"Low saturated fat diets lead to weight loss in obese patients who follow them for at least a year.",
		"A deficiency of vitamin B12 increases blood levels of homocysteine.",
		"Antibiotic induced alterations in the gut microbiome reduce resistance against Clostridium difficile.",
		"Bariatric surgery has a positive impact on mental health and reduces the risk of depression in adults.",
		"The PRR MDA5 has a C-terminal domain that senses double stranded RNA in the cytoplasm of infected cells.",
		"Transcription rates in S. cerevisiae range between 0.7 and 2 kb/min.",
	}
	for _, name := range presentModels(b) {
		m := loadKnownWith(b, name, Config{IntraOpThreads: 1})
		for _, n := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("%s/batch=%d", name, n), func(b *testing.B) {
				at := 0
				for range b.N {
					batch := make([]string, n)
					for i := range batch {
						batch[i] = queries[(at+i)%len(queries)]
					}
					at += n
					if _, err := m.Embed(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*n), "ms/query")
			})
		}
	}
}
