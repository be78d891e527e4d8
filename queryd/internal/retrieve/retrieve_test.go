package retrieve

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// bow is the shared bag-of-words test embedder.
type bow = testenv.Bow

var handbook = map[string]string{
	"leave.md":  "# Leave\n\n## 2 Annual leave\n\n### 2.2 Carry-over\n\nEmployees may carry over up to five unused leave days into the next year. Holiday requests go to your manager.\n",
	"travel.md": "# Travel\n\nTravel expenses are reimbursed within thirty days. Book trains before flights.\n",
	"pay.md":    "# Payroll\n\nSalaries are paid on the last working day of the month. Unpaid leave lowers the month's salary.\n",
	"rota.md":   "# Rota\n\nThe holiday rota lists who is away on which days of the year.\n",
}

// open ingests the handbook through the real jobs and returns a store and
// its layers.
func open(t *testing.T) (*store.Corpus, *pgxpool.Pool, []store.Layer) {
	t.Helper()
	pool, url := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	root := filepath.Join(t.TempDir(), "handbook")
	for name, text := range handbook {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "handbook", Root: root}, ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	layers, err := st.Layers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st, pool, layers
}

// TestMergeQueryVariants is what strata_ask does: one hybrid search per
// query variant, the typed candidates merged by reciprocal rank fusion.
func TestMergeQueryVariants(t *testing.T) {
	t.Parallel()
	st, _, layers := open(t)
	ctx := context.Background()
	eng := New(st, Options{Embedder: bow{}, KeywordSlots: 1})
	snap, err := eng.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]Candidate
	for _, v := range []string{"carry over unused leave days", "holiday days in the year"} {
		out, err := snap.Query(Query{Text: v, TopK: 3}).Search(ctx, layers)
		if err != nil {
			t.Fatal(err)
		}
		if !out.LexicalRan || !out.VectorRan || len(out.Candidates) == 0 {
			t.Fatalf("%q: both channels should run and find passages, got %+v", v, out)
		}
		for _, c := range out.Candidates {
			if c.Layer != "handbook" || c.File == "" || c.LineStart < 1 || c.LineEnd < c.LineStart || c.Text == "" ||
				c.End <= c.Start || c.Fused <= 0 || (c.Lexical == nil && c.Vector == nil) || c.Similarity <= 0 {
				t.Errorf("%q: candidate missing its fields or attribution: %+v", v, c)
			}
			if c.Lexical != nil && c.Lexical.Score <= 0 {
				t.Errorf("%q: a lexical hit carries its raw BM25 score, got %+v", v, c.Lexical)
			}
		}
		lists = append(lists, out.Candidates)
	}
	merged := Merge(60, lists...)
	want := map[int64]float64{}
	for _, l := range lists {
		for i, c := range l {
			want[c.ChunkID] += 1 / float64(60+i+1)
		}
	}
	if len(merged) != len(want) {
		t.Fatalf("merged %d candidates, the lists hold %d distinct chunks", len(merged), len(want))
	}
	for i, c := range merged {
		if math.Abs(c.Fused-want[c.ChunkID]) > 1e-12 || c.FusedRank != i+1 {
			t.Errorf("place %d: chunk %d fused %g rank %d, want %g rank %d", i+1, c.ChunkID, c.Fused, c.FusedRank, want[c.ChunkID], i+1)
		}
		if i > 0 && merged[i-1].Fused < c.Fused {
			t.Errorf("merged list not best first at place %d", i+1)
		}
	}
	// leave.md answers both variants: found by both, it comes first.
	if merged[0].File != "leave.md" {
		t.Errorf("the passage both variants find should lead, got %s first", merged[0].File)
	}
}

// TestParamsPerCall: the tuning is a value of each call, so searches with
// different parameters run side by side; the model's measured values come
// from model_search_params, and a Query's own Params are used as given.
func TestParamsPerCall(t *testing.T) {
	t.Parallel()
	st, pool, layers := open(t)
	ctx := context.Background()
	ids := []int64{layers[0].ID}
	eng := New(st, Options{Embedder: bow{}, KeywordSlots: 2})

	p := eng.Query(Query{Text: "leave"}).Params(ctx)
	if want := DefaultParams(); p.RRFK != want.RRFK || p.K1 != want.K1 || p.KeywordSlots != 2 {
		t.Fatalf("without measured values: defaults and the engine's slots, got %+v", p)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO strata.model_search_params (model, rrf_k, vector_weight) VALUES ($1, 7, 0.25)`,
		bow{}.Model().Name); err != nil {
		t.Fatal(err)
	}
	p = eng.Query(Query{Text: "leave"}).Params(ctx)
	if p.RRFK != 7 || p.VectorWeight != 0.25 || p.K1 != DefaultParams().K1 {
		t.Fatalf("model_search_params should set rrf_k 7 and vector weight 0.25 over the defaults, got %+v", p)
	}
	tuned := New(st, Options{Embedder: bow{}, Tune: func(p *Params) { p.RRFK = 9 }})
	if got := tuned.Query(Query{Text: "leave"}).Params(ctx); got.RRFK != 9 || got.VectorWeight != 0.25 {
		t.Fatalf("Tune overrides after the model's values, got %+v", got)
	}

	// BM25's k1 changes the lexical scores of the same query, in calls
	// running at the same time.
	scores := make([]float64, 2)
	errs := make(chan error, 2)
	for i, k1 := range []float64{0.3, 3} {
		go func() {
			q := DefaultParams()
			q.K1 = k1
			lex, err := eng.Query(Query{Text: "leave days", Params: &q}).Lexical(ctx, ids, 10, false)
			if err == nil && len(lex.Hits) == 0 {
				err = fmt.Errorf("k1 %g: no hits", k1)
			}
			if err == nil {
				scores[i] = lex.Hits[0].Score
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if scores[0] == scores[1] {
		t.Errorf("k1 0.3 and 3 gave the same best BM25 score %g: the parameter did not reach the channel", scores[0])
	}

	// A Query's own Params are used as given: the vector channel off.
	off := DefaultParams()
	off.NoVector = true
	out, err := eng.Query(Query{Text: "leave days", TopK: 3, Params: &off}).Search(ctx, layers)
	if err != nil {
		t.Fatal(err)
	}
	if out.VectorRan || out.Params.RRFK != 60 {
		t.Errorf("Params given: no vector channel and the default rrf_k, got vector %v rrf_k %d", out.VectorRan, out.Params.RRFK)
	}
	for _, c := range out.Candidates {
		if c.Placement != PlacedLexicalOnly || c.Vector != nil {
			t.Errorf("without the vector channel every candidate is lexical only, got %+v", c)
		}
	}
}

// TestExactSections: a named clause comes back as a typed section with its
// reference, and the chunk inside it is not a candidate too.
func TestExactSections(t *testing.T) {
	t.Parallel()
	st, _, layers := open(t)
	ctx := context.Background()
	out, err := New(st, Options{}).Query(Query{Text: "what does clause 2.2 say", TopK: 5}).Search(ctx, layers)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Sections) != 1 || out.Sections[0].File != "leave.md" || out.Sections[0].Reference == "" ||
		!strings.Contains(out.Sections[0].Text, "five unused leave days") {
		t.Fatalf("want leave.md's 2.2 as the one exact section, got %+v", out.Sections)
	}
	if out.EmbedError == nil || out.EmbedError.Kind != NoModel || out.SimilarityAvailable {
		t.Errorf("no embedder: the outcome says so, got %+v", out.EmbedError)
	}
	s := out.Sections[0]
	for _, c := range out.Candidates {
		if c.DocumentID == s.DocumentID && c.Start >= s.SectionStart && c.End <= s.SectionEnd {
			t.Errorf("a chunk inside the exact section came back as a candidate: %+v", c)
		}
	}
}
