package uselite

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchSentences returns n short sentences (8–12 pieces each), all distinct.
func benchSentences(n int) []string {
	subjects := []string{"The operator", "A contractor", "The auditor", "Our supplier", "The tenant", "Each party"}
	verbs := []string{"must notify", "may terminate", "shall pay", "will review", "cannot assign", "should inspect"}
	objects := []string{"the agreement", "the invoice", "the premises", "the safety report", "the licence", "the backup logs"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %s %s within %d days.", subjects[i%6], verbs[(i/6)%6], objects[(i/36)%6], i%90+1)
	}
	return out
}

// benchPassages returns n passages of at least MaxPieces pieces each.
func benchPassages(m *Model, n int) []string {
	sents := benchSentences(n * 16)
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := 0; len(m.Tokenize(b.String())) < MaxPieces; j++ {
			b.WriteString(sents[(i*16+j)%len(sents)])
			b.WriteByte(' ')
		}
		out[i] = b.String()
	}
	return out
}

// withBatch returns a view of m that batches differently (same session).
func withBatch(m *Model, size int) *Model {
	return &Model{tok: m.tok, batchSize: size, session: m.session}
}

// BenchmarkEmbedSentences reports short sentences per second for several
// batch sizes (the default batch size is chosen from these figures).
func BenchmarkEmbedSentences(b *testing.B) {
	m := testModel(b)
	texts := benchSentences(256)
	for _, bs := range []int{1, 8, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("batch=%d", bs), func(b *testing.B) {
			mb := withBatch(m, bs)
			n := 0
			for b.Loop() {
				if _, err := mb.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
				n += len(texts)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "sentences/s")
		})
	}
}

// BenchmarkEmbedPassages reports 128-piece passages per second.
func BenchmarkEmbedPassages(b *testing.B) {
	m := testModel(b)
	texts := benchPassages(m, 64)
	for _, bs := range []int{1, 8, 16, 32, 64} {
		b.Run(fmt.Sprintf("batch=%d", bs), func(b *testing.B) {
			mb := withBatch(m, bs)
			n := 0
			for b.Loop() {
				if _, err := mb.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
				n += len(texts)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "passages/s")
		})
	}
}
