package retrieve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/uselite"
	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The answer set's database (the five layers of eval/answers, ingested by
// TestEvalAnswers with STRATA_EVAL_DATABASE_URL) for the checks below;
// they are skipped without it. They only read it.
const layersDBEnv = "STRATA_BENCH_LAYERS_DATABASE_URL"

// answerSet opens the answer set's database and returns its store, every
// layer and the questions of both splits.
func answerSet(tb testing.TB) (*store.Corpus, []store.Layer, []answers.Question) {
	tb.Helper()
	url := os.Getenv(layersDBEnv)
	if url == "" {
		tb.Skipf("set %s to the answer set's database (ans_inline)", layersDBEnv)
	}
	ctx := context.Background()
	st, err := store.OpenCorpus(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(st.Close)
	layers, err := st.Layers(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if len(layers) < 2 {
		tb.Fatalf("%d layers: want the answer set's", len(layers))
	}
	qs, err := answers.LoadQuestions(filepath.Join(testenv.RepoRoot(tb), "eval", "answers", "questions.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return st, layers, qs
}

// TestLexicalLayersAnswerSet: on the answer set, every question searched
// over all the layers gets the same lexical results from the one
// statement as from 1+N searches (each scope and the merged list), and
// the same candidates from the whole search (the lexical channel alone:
// the vector channel does not depend on the path).
func TestLexicalLayersAnswerSet(t *testing.T) {
	st, layers, qs := answerSet(t)
	ctx := context.Background()
	one, sep := engines(st, Options{KeywordSlots: 1})
	n, worst, moved := 0, 0.0, 0
	for _, q := range qs {
		diffs, d, m, _, err := compareByLayer(ctx, one, sep, Query{Text: q.Question, TopK: 10}, layers, DefaultParams().depth(10))
		if err != nil {
			t.Fatal(err)
		}
		worst, moved = max(worst, d), moved+m
		for _, d := range diffs {
			n++
			t.Errorf("%s: %s", q.ID, d)
		}
		p := DefaultParams()
		p.KeywordSlots, p.NoVector = 1, true
		a, err := one.Query(Query{Text: q.Question, TopK: 10, Params: &p}).Search(ctx, layers)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sep.Query(Query{Text: q.Question, TopK: 10, Params: &p}).Search(ctx, layers)
		if err != nil {
			t.Fatal(err)
		}
		if ca, cb := candidateIDs(a), candidateIDs(b); !slices.Equal(ca, cb) {
			t.Errorf("%s: candidates %v / %v", q.ID, ca, cb)
		}
	}
	t.Logf("%d questions over %d layers, %d differences, %d scopes with tied hits in another order, largest score difference %.3g",
		len(qs), len(layers), n, moved, worst)
}

func candidateIDs(o *Outcome) []int64 {
	var ids []int64
	for _, c := range o.Candidates {
		ids = append(ids, c.ChunkID)
	}
	return ids
}

// fixedVectors answers with vectors computed beforehand, so the benchmark
// times the search and not the model.
type fixedVectors struct {
	info embed.ModelInfo
	vecs map[string][]float32
}

func (f *fixedVectors) Model() embed.ModelInfo { return f.info }

func (f *fixedVectors) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vecs[t]
	}
	return out, nil
}

// BenchmarkSearchLayers times a whole search (exact sections, both
// channels, the passages read) of every question of the answer set over
// all its layers, the query vectors computed beforehand, three ways in
// turn, round after round: the layers scored as one collection (joint,
// Params.LexicalByLayer off), each layer also on its own as 1+N searches
// (separate, what lexicalByLayer did before) and as one statement (one).
// It reports each way's p50 and p95 in ms per question.
//
//	STRATA_BENCH_LAYERS_DATABASE_URL=postgres://…/ans_inline?sslmode=disable \
//	  go test -run '^$' -bench BenchmarkSearchLayers -benchtime 3x ./queryd/internal/retrieve/
//
// Each b.N is one round over every question, each way.
func BenchmarkSearchLayers(b *testing.B) {
	st, layers, qs := answerSet(b)
	ctx := context.Background()
	m, err := uselite.Load(uselite.DefaultConfig(testenv.VarDir(b)))
	if err != nil {
		testenv.Missing(b, "USE-lite model: "+err.Error())
	}
	emb := embed.Adapt(m)
	fv := &fixedVectors{info: emb.Model(), vecs: map[string][]float32{}}
	for _, q := range qs {
		v, err := emb.Embed(ctx, []string{q.Question})
		if err != nil {
			b.Fatal(err)
		}
		fv.vecs[q.Question] = v[0]
	}
	one, sep := engines(st, Options{Embedder: fv, KeywordSlots: 1})
	type way struct {
		name    string
		e       *Engine
		byLayer bool
		took    []time.Duration
	}
	ways := []*way{{name: "joint", e: one}, {name: "separate", e: sep, byLayer: true}, {name: "one", e: one, byLayer: true}}
	search := func(w *way, q answers.Question) {
		snap, err := w.e.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		run := snap.Query(Query{Text: q.Question, TopK: 10})
		p := run.Params(ctx)
		p.LexicalByLayer = w.byLayer
		run = snap.Query(Query{Text: q.Question, TopK: 10, Params: &p})
		if _, err := run.QueryVector(ctx); err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		if _, err := run.Search(ctx, layers); err != nil {
			b.Fatal(err)
		}
		w.took = append(w.took, time.Since(began))
	}
	for _, w := range ways { // warm the caches and the memo
		for _, q := range qs[:20] {
			search(w, q)
		}
		w.took = nil
	}
	round := 0
	for b.Loop() {
		// The ways take turns question by question, starting with another
		// way each round, so that load on the machine falls on each alike.
		for i, q := range qs {
			for k := range ways {
				search(ways[(i+k+round)%len(ways)], q)
			}
		}
		round++
	}
	for _, w := range ways {
		b.ReportMetric(percentileMS(w.took, 0.50), w.name+"-p50-ms")
		b.ReportMetric(percentileMS(w.took, 0.95), w.name+"-p95-ms")
	}
	b.ReportMetric(percentileMS(ways[2].took, 0.5)/percentileMS(ways[1].took, 0.5), "one/separate-p50")
}

func percentileMS(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
}
