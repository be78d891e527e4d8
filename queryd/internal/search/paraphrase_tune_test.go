package search

import (
	"context"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/stratakb/stratakb/chunker"
	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/eval/answers"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/internal/wordnet"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Issue 12, class 2: paraphrase questions whose right passage the vector
// channel never brings up. These STRATA_EVAL=1 STRATA_EVAL_PARA=1
// measurements run on the answer-quality evaluation's layers (already
// ingested in STRATA_EVAL_DATABASE_URL, read only), split
// STRATA_EVAL_SPLIT (default train), layer named; docs/retrieval.md has the
// tables.

// paraChunk is one chunk of the evaluation's layers with its stored window
// vectors.
type paraChunk struct {
	id          int64
	layer, file string
	layerID     int64
	text        string
	hash        string
	windows     [][]float32
	sentences   [][]float32 // filled by paraSentences
}

type paraEnv struct {
	qs     []answers.Question
	emb    embed.Embedder
	st     *store.Corpus
	url    string
	chunks []*paraChunk
	byID   map[int64]*paraChunk
}

func setupPara(t *testing.T) *paraEnv {
	t.Helper()
	if os.Getenv("STRATA_EVAL") != "1" || os.Getenv("STRATA_EVAL_PARA") != "1" {
		t.Skip("set STRATA_EVAL=1 STRATA_EVAL_PARA=1 to measure the vector channel on the answer-quality evaluation")
	}
	split := os.Getenv("STRATA_EVAL_SPLIT")
	if split == "" {
		split = "train"
	}
	all, err := answers.LoadQuestions(filepath.Join(testenv.RepoRoot(t), "eval", "answers", "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	e := &paraEnv{emb: loadEvalModel(t), byID: map[int64]*paraChunk{}}
	for _, q := range all {
		if q.Split == split {
			e.qs = append(e.qs, q)
		}
	}
	pool, url := poolFromEnv(t, "STRATA_EVAL_DATABASE_URL")
	e.url = url
	e.st, err = store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.st.Close)
	model := e.emb.Model().Name
	rows, err := pool.Query(context.Background(), `
		SELECT c.id, l.name, l.id, d.path, c.text, c.content_hash, e.embedding
		FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id
		JOIN strata.documents d ON d.id = c.document_id
		JOIN strata.embeddings e ON e.content_hash = c.content_hash AND e.model = $1
		ORDER BY c.id, e.window_no`, model)
	if err != nil {
		t.Fatal(err)
	}
	var id, lid int64
	var layer, file, text string
	var hash []byte
	var vec pgvector.Vector
	_, err = pgx.ForEachRow(rows, []any{&id, &layer, &lid, &file, &text, &hash, &vec}, func() error {
		c := e.byID[id]
		if c == nil {
			c = &paraChunk{id: id, layer: layer, layerID: lid, file: file, text: text, hash: hex.EncodeToString(hash)}
			e.byID[id] = c
			e.chunks = append(e.chunks, c)
		}
		c.windows = append(c.windows, normalised(vec.Slice()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s split: %d questions; %d chunks with vectors", split, len(e.qs), len(e.chunks))
	return e
}

func normalised(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	n := float32(1 / math.Sqrt(s))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

func maxCos(q []float32, vs [][]float32) float64 {
	best := -2.0
	for _, v := range vs {
		best = max(best, dot(q, v))
	}
	return best
}

// paraRepr is how a chunk is scored against the query vector: by its stored
// window vectors (today), by its sentences' vectors, or both.
type paraRepr string

const (
	reprWindows   paraRepr = "windows"
	reprSentences paraRepr = "sentences"
	reprBoth      paraRepr = "max(windows,sentences)"
)

func (c *paraChunk) score(q []float32, r paraRepr) float64 {
	switch r {
	case reprSentences:
		if len(c.sentences) == 0 {
			return maxCos(q, c.windows)
		}
		return maxCos(q, c.sentences)
	case reprBoth:
		return max(maxCos(q, c.windows), maxCos(q, c.sentences))
	}
	return maxCos(q, c.windows)
}

// rankLayer ranks the chunks of the given layers by r, best first.
func (e *paraEnv) rankLayer(q []float32, layerIDs map[int64]bool, r paraRepr) []store.VecHit {
	var out []store.VecHit
	for _, c := range e.chunks {
		if layerIDs[c.layerID] {
			out = append(out, store.VecHit{ChunkID: c.id, Similarity: c.score(q, r)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Similarity != out[j].Similarity {
			return out[i].Similarity > out[j].Similarity
		}
		return out[i].ChunkID < out[j].ChunkID
	})
	return out
}

func (e *paraEnv) layerIDs(name string) map[int64]bool {
	out := map[int64]bool{}
	for _, c := range e.chunks {
		if c.layer == name {
			out[c.layerID] = true
		}
	}
	return out
}

// goldRank is the 1-based rank of the first gold chunk in hits, 0 when none.
func (e *paraEnv) goldRank(q answers.Question, hits []store.VecHit) (int, float64) {
	for i, h := range hits {
		c := e.byID[h.ChunkID]
		if answers.Hit(q, c.layer, c.file, c.text) {
			return i + 1, h.Similarity
		}
	}
	return 0, 0
}

func (e *paraEnv) embedQuery(t *testing.T, text string) []float32 {
	t.Helper()
	v, err := e.emb.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return normalised(v[0])
}

// vecSource serves the vector channel from the brute-force ranking of a
// representation instead of the HNSW index (a measurement of what a
// sentence-level index would do); everything else is the store's.
type vecSource struct {
	*store.Corpus
	e    *paraEnv
	repr paraRepr
}

func (v vecSource) SearchVectors(_ context.Context, q store.VectorQuery) ([]store.VecHit, error) {
	if len(q.Filter) > 0 {
		return nil, errors.New("vecSource: filters are not measured")
	}
	ids := map[int64]bool{}
	for _, id := range q.LayerIDs {
		ids[id] = true
	}
	hits := v.e.rankLayer(normalised(q.Vector), ids, v.repr)
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
}

// paraRanks lists the paraphrase questions' ranks in the top 10 (0: not
// there).
func paraRanks(runs []answersRun) string {
	var parts []string
	for _, r := range runs {
		if r.q.Kind == answers.KindParaphrase {
			parts = append(parts, fmt.Sprintf("%s:%d", strings.TrimPrefix(r.q.ID, "paraphrase-"), r.rank))
		}
	}
	return strings.Join(parts, " ")
}

// byKindLine prints hit@1 hit@5 MRR per kind.
func byKindLine(runs []answersRun) string {
	by := summarise(runs)
	var parts []string
	for _, k := range answers.Kinds {
		if sc, ok := by[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f %.2f %.2f", k, sc.hit1, sc.hit5, sc.mrr))
		}
	}
	sep := separation(runs)
	parts = append(parts, fmt.Sprintf("low: unanswerable %.2f right-first %.2f", sep.unansLow, sep.rightLow))
	return strings.Join(parts, " | ")
}

// TestParaVectorFloorWeight grids the vector channel's similarity floor and
// fusion weight (STRATA_EVAL_PARA_GRID: "floor,weight[,rrfk] ..."; the
// model's values from model_search_params by default) and prints, for each
// paraphrase question, the gold passage's cosine and rank in the vector
// channel alone over its layer.
func TestParaVectorFloorWeight(t *testing.T) {
	e := setupPara(t)
	ctx := context.Background()
	mp, ok, err := e.st.ModelParams(ctx, e.emb.Model().Name)
	if err != nil || !ok {
		t.Fatalf("model params of %s: %v %v", e.emb.Model().Name, ok, err)
	}
	t.Logf("in effect for %s (model_search_params): rrf_k %d lexical %.2f vector %.2f min_similarity %.2f ef_search %d",
		e.emb.Model().Name, mp.RRFK, mp.LexicalWeight, mp.VectorWeight, mp.MinSimilarity, mp.EFSearch)
	// The gold passage in the vector channel alone.
	for _, q := range e.qs {
		if q.Kind != answers.KindParaphrase {
			continue
		}
		qv := e.embedQuery(t, q.Question)
		hits := e.rankLayer(qv, e.layerIDs(q.Layer), reprWindows)
		rank, sim := e.goldRank(q, hits)
		t.Logf("%s gold vector rank %d of %d, cosine %.3f (top %.3f): %s", q.ID, rank, len(hits), sim, hits[0].Similarity, q.Question)
	}
	grid := [][3]float64{{mp.MinSimilarity, mp.VectorWeight, float64(mp.RRFK)}}
	if g := os.Getenv("STRATA_EVAL_PARA_GRID"); g != "" {
		grid = nil
		for _, cell := range strings.Fields(g) {
			v := [3]float64{0, 0, float64(mp.RRFK)}
			parts := strings.Split(cell, ",")
			if len(parts) < 2 || len(parts) > 3 {
				t.Fatalf("grid cell %q: want floor,weight[,rrfk]", cell)
			}
			for i, x := range parts {
				if v[i], err = strconv.ParseFloat(x, 64); err != nil {
					t.Fatalf("grid cell %q: %v", cell, err)
				}
			}
			grid = append(grid, v)
		}
	}
	t.Logf("layer named: per kind hit@1 hit@5 MRR")
	for _, cell := range grid {
		s := NewWithOptions(e.st, Options{Embedder: e.emb, KeywordSlots: DefaultKeywordSlots,
			Tune: func(p *retrieve.Params) {
				p.MinSimilarity, p.VectorWeight, p.RRFK = cell[0], cell[1], int(cell[2])
			}})
		var runs []answersRun
		for _, q := range e.qs {
			runs = append(runs, runAnswer(ctx, t, s, q, []string{q.Layer}))
		}
		t.Logf("floor %.2f weight %.2f rrf_k %.0f | %s", cell[0], cell[1], cell[2], byKindLine(runs))
		t.Logf("\tparaphrase ranks: %s", paraRanks(runs))
	}
}

// paraSentences embeds every sentence of every chunk (chunker.Sentences),
// normalised, caching the vectors in $STRATA_PARA_CACHE (default
// var-para/sentences.gob at the repository root) keyed by content hash.
func (e *paraEnv) paraSentences(t *testing.T) {
	t.Helper()
	path := os.Getenv("STRATA_PARA_CACHE")
	if path == "" {
		path = filepath.Join(testenv.RepoRoot(t), "var-para", "sentences-"+strings.ReplaceAll(e.emb.Model().Name, "@", "_")+".gob")
	}
	cache := map[string][][]float32{}
	if f, err := os.Open(path); err == nil {
		if err := gob.NewDecoder(f).Decode(&cache); err != nil {
			t.Fatalf("sentence cache %s: %v", path, err)
		}
		f.Close()
	}
	var todo []*paraChunk
	for _, c := range e.chunks {
		if _, ok := cache[c.hash]; !ok {
			todo = append(todo, c)
		}
	}
	t.Logf("sentence vectors: %d chunks cached, %d to embed", len(e.chunks)-len(todo), len(todo))
	save := func() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path + ".tmp")
		if err != nil {
			t.Fatal(err)
		}
		if err := gob.NewEncoder(f).Encode(cache); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range todo {
		var texts []string
		for _, sp := range chunker.Sentences(c.text, 0, len(c.text)) {
			if s := strings.TrimSpace(c.text[sp.Start:sp.End]); s != "" {
				texts = append(texts, s)
			}
		}
		var vecs [][]float32
		if len(texts) > 0 {
			vs, err := e.emb.Embed(context.Background(), texts)
			if err != nil {
				t.Fatalf("chunk %d: %v", c.id, err)
			}
			for _, v := range vs {
				vecs = append(vecs, normalised(v))
			}
		}
		cache[c.hash] = vecs
		if (i+1)%500 == 0 {
			save()
			t.Logf("embedded %d of %d chunks", i+1, len(todo))
		}
	}
	if len(todo) > 0 {
		save()
	}
	n := 0
	for _, c := range e.chunks {
		c.sentences = cache[c.hash]
		n += len(c.sentences)
	}
	t.Logf("%d sentence vectors over %d chunks", n, len(e.chunks))
}

// TestParaSentenceVectors compares ranking a layer's chunks by the best of
// their sentences' vectors with today's stored window vectors: the gold's
// hit@1/@5/@50 in the vector channel alone per kind, then the fused results
// with each representation serving the vector channel
// (STRATA_EVAL_PARA_GRID cells floor,weight[,rrfk] as above; the model's
// by default).
func TestParaSentenceVectors(t *testing.T) {
	e := setupPara(t)
	e.paraSentences(t)
	ctx := context.Background()
	reprs := []paraRepr{reprWindows, reprSentences, reprBoth}
	type acc struct{ n, h1, h5, h50 int }
	res := map[paraRepr]map[string]*acc{}
	for _, r := range reprs {
		res[r] = map[string]*acc{}
	}
	for _, q := range e.qs {
		if q.Kind == answers.KindUnanswerable {
			continue
		}
		qv := e.embedQuery(t, q.Question)
		ids := e.layerIDs(q.Layer)
		var line []string
		for _, r := range reprs {
			rank, sim := e.goldRank(q, e.rankLayer(qv, ids, r))
			a := res[r][q.Kind]
			if a == nil {
				a = &acc{}
				res[r][q.Kind] = a
			}
			a.n++
			if rank == 1 {
				a.h1++
			}
			if rank >= 1 && rank <= 5 {
				a.h5++
			}
			if rank >= 1 && rank <= 50 {
				a.h50++
			}
			line = append(line, fmt.Sprintf("%s %d (%.3f)", r, rank, sim))
		}
		if q.Kind == answers.KindParaphrase {
			t.Logf("%s gold rank: %s", q.ID, strings.Join(line, ", "))
		}
	}
	t.Logf("vector channel alone, layer named: hit@1 hit@5 hit@50")
	for _, r := range reprs {
		var parts []string
		for _, k := range answers.Kinds {
			if a, ok := res[r][k]; ok {
				parts = append(parts, fmt.Sprintf("%s %.2f %.2f %.2f", k, float64(a.h1)/float64(a.n), float64(a.h5)/float64(a.n), float64(a.h50)/float64(a.n)))
			}
		}
		t.Logf("%-22s | %s", r, strings.Join(parts, " | "))
	}
	mp, _, err := e.st.ModelParams(ctx, e.emb.Model().Name)
	if err != nil {
		t.Fatal(err)
	}
	grid := [][3]float64{{mp.MinSimilarity, mp.VectorWeight, float64(mp.RRFK)}}
	if g := os.Getenv("STRATA_EVAL_PARA_GRID"); g != "" {
		grid = nil
		for _, cell := range strings.Fields(g) {
			v := [3]float64{0, 0, float64(mp.RRFK)}
			for i, x := range strings.Split(cell, ",") {
				if i > 2 {
					t.Fatalf("grid cell %q: want floor,weight[,rrfk]", cell)
				}
				if v[i], err = strconv.ParseFloat(x, 64); err != nil {
					t.Fatalf("grid cell %q: %v", cell, err)
				}
			}
			grid = append(grid, v)
		}
	}
	t.Logf("fused, layer named (brute-force vector channel): per kind hit@1 hit@5 MRR")
	for _, r := range reprs {
		for _, cell := range grid {
			s := NewWithOptions(vecSource{e.st, e, r}, Options{Embedder: e.emb, KeywordSlots: DefaultKeywordSlots,
				Tune: func(p *retrieve.Params) {
					p.MinSimilarity, p.VectorWeight, p.RRFK = cell[0], cell[1], int(cell[2])
				}})
			var runs []answersRun
			for _, q := range e.qs {
				runs = append(runs, runAnswer(ctx, t, s, q, []string{q.Layer}))
			}
			t.Logf("%-22s floor %.2f weight %.2f rrf_k %.0f | %s", r, cell[0], cell[1], cell[2], byKindLine(runs))
		}
	}
}

// TestParaSynonyms grids the WordNet expansion's weight
// (STRATA_EVAL_PARA_SYN, default "0 0.1 0.2 0.3"), first sense and all
// senses, per kind, layer named; the vector channel as the model's
// parameters have it. WordNet is read from STRATA_WORDNET_DIR (default
// /usr/share/wordnet, Debian's wordnet-base).
func TestParaSynonyms(t *testing.T) {
	e := setupPara(t)
	dir := os.Getenv("STRATA_WORDNET_DIR")
	if dir == "" {
		dir = wordnet.DefaultDir
	}
	wn, err := wordnet.Load(dir)
	if err != nil {
		testenv.Missing(t, fmt.Sprintf("WordNet (apt-get install wordnet-base): %v", err))
	}
	weights := []float64{0, 0.1, 0.2, 0.3}
	if g := os.Getenv("STRATA_EVAL_PARA_SYN"); g != "" {
		weights = nil
		for _, x := range strings.Fields(g) {
			f, err := strconv.ParseFloat(x, 64)
			if err != nil {
				t.Fatal(err)
			}
			weights = append(weights, f)
		}
	}
	ctx := context.Background()
	for _, q := range e.qs {
		if q.Kind == answers.KindParaphrase && testing.Verbose() {
			t.Logf("%s first-sense synonyms: %s", q.ID, retrieve.SynonymWords(q.Question, wn, false))
		}
	}
	t.Logf("layer named: per kind hit@1 hit@5 MRR")
	for _, all := range []bool{false, true} {
		for _, w := range weights {
			if w == 0 && all {
				continue
			}
			s := NewWithOptions(e.st, Options{Embedder: e.emb, KeywordSlots: DefaultKeywordSlots, Thesaurus: wn,
				Tune: func(p *retrieve.Params) { p.Synonyms, p.SynonymsAllSenses = w, all }})
			var runs []answersRun
			for _, q := range e.qs {
				runs = append(runs, runAnswer(ctx, t, s, q, []string{q.Layer}))
			}
			t.Logf("synonyms %.2f all senses %-5v | %s", w, all, byKindLine(runs))
			t.Logf("\tparaphrase ranks: %s", paraRanks(runs))
		}
	}
}
