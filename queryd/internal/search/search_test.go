package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

var contracts = map[string]string{
	"acme-msa.md": `# Acme Master Services Agreement

## 7 Termination

### 7.1 Term

This agreement runs for two years from the effective date.

### 7.2 Notice

Either party may end this agreement with ninety days' written notice.

## 8 Liability

Liability is capped at the fees paid in the last twelve months.
`,
	"beta-nda.md": `# Beta Non-Disclosure Agreement

## 7 Disclosure

### 7.2 Notice

Notice of any disclosure must be given within ten days.

## 9 Definitions

### 9.1 Confidential information

` + strings.Repeat("Confidential information means every document, drawing and note that one party shows the other. ", 80) + `
`,
}

var payments = map[string]string{
	"codes.md":    "---\nteam: payments\n---\n# Reason codes\n\nThe reason code AC04 means the account is closed. A pacs.008 message carries a credit transfer between banks.\n",
	"headers.md":  "---\nteam: web\n---\n# HTTP caching\n\nThe Cache-Control header tells caches how long to keep a response.\n",
	"scatter.md":  "---\nteam: web\n---\n# Notes on caches\n\nWe control the cache. Cache and control, control and cache: the cache, its control, cache control and control of the cache.\n",
	"pep.md":      "---\nteam: python\n---\n# Style\n\nPEP 8 is the style guide for Python code.\n",
	"pepnoise.md": "---\nteam: python\n---\n# Proposals\n\nPEP means Python Enhancement Proposal. A pep has 8 sections, and 8 reviewers read each pep before the pep is accepted.\n",
}

var handbook = map[string]string{
	"leave.md":  "# Leave\n\nEmployees may carry over up to five unused leave days into the next year. Holiday requests go to your manager.\n",
	"travel.md": "# Travel\n\nTravel expenses are reimbursed within thirty days. Book trains before flights.\n",
	"pay.md":    "# Payroll\n\nSalaries are paid on the last working day of the month.\n",
}

var zoo = map[string]string{
	"a.md": "# Filing\n\nForm XQ9 is filed by the treasurer once a year together with the annual accounts and the auditor's report.\n",
	"b.md": "# Questions\n\nWhat is the form of the thing? What is it, and what is the form for?\n",
}

func TestSearch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ingest(t, jobs.Layer{Name: "contracts", RoutingPatterns: []string{"agreement", `/\bnda\b/`}}, contracts)
	f.ingest(t, jobs.Layer{Name: "payments", RoutingPatterns: []string{"pacs", `/\bAC[0-9]{2}\b/`}}, payments)
	f.ingest(t, jobs.Layer{Name: "handbook"}, handbook)
	f.ingest(t, jobs.Layer{Name: "zoo"}, zoo)
	f.open(t)
	ctx := context.Background()

	t.Run("exact sections first, one per file", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "What does clause 7.2 say about notice?", Layers: []string{"contracts"}})
		if len(resp.Results) < 2 {
			t.Fatalf("want the two clauses 7.2 first, got %v", files(resp))
		}
		got := map[string]string{}
		for _, r := range resp.Results[:2] {
			if r.Match != "exact" {
				t.Fatalf("first results must be exact matches, got %+v", r)
			}
			got[r.File] = r.Text
		}
		if !strings.HasPrefix(got["acme-msa.md"], "### 7.2 Notice") || !strings.Contains(got["acme-msa.md"], "ninety days") {
			t.Errorf("acme's clause 7.2 not verbatim: %q", got["acme-msa.md"])
		}
		if !strings.Contains(got["beta-nda.md"], "within ten days") {
			t.Errorf("beta's clause 7.2 missing: %q", got["beta-nda.md"])
		}
		for _, r := range resp.Results[2:] {
			if r.Match == "exact" {
				t.Errorf("only the two 7.2 sections are exact, got another: %+v", r)
			}
			for _, e := range resp.Results[:2] {
				if strings.Contains(e.Text, r.Text) {
					t.Errorf("a chunk inside an exact section came back twice: %q", r.Text)
				}
			}
		}
		if resp.Results[0].Cut || resp.Note != "" {
			t.Errorf("a short clause is not cut and needs no note: cut=%v note=%q", resp.Results[0].Cut, resp.Note)
		}
	})

	t.Run("long exact section is cut and noted", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "clause 9.1", Layers: []string{"contracts"}})
		if len(resp.Results) == 0 || resp.Results[0].Match != "exact" || !resp.Results[0].Cut {
			t.Fatalf("want clause 9.1 first and cut, got %+v", resp.Results)
		}
		r := resp.Results[0]
		if len(r.Text) > retrieve.ExactTextLimit || strings.HasSuffix(r.Text, " ") {
			t.Errorf("cut text is %d bytes (limit %d) or ends in a space", len(r.Text), retrieve.ExactTextLimit)
		}
		if !strings.Contains(resp.Note, "cut") || !strings.Contains(resp.Note, "beta-nda.md") {
			t.Errorf("note must say which clause was cut, got %q", resp.Note)
		}
	})

	t.Run("a weak reference that matches nothing changes nothing", func(t *testing.T) {
		s := f.searcher(t)
		with := mustSearch(t, s, Request{Query: "ninety days notice in version 3.4", Layers: []string{"contracts"}})
		for _, r := range with.Results {
			if r.Match == "exact" {
				t.Errorf("version 3.4 is no section, got exact %+v", r)
			}
		}
		if with.Note != "" {
			t.Errorf("no note expected, got %q", with.Note)
		}
	})

	t.Run("exact terms match as written", func(t *testing.T) {
		s := f.searcher(t)
		for q, want := range map[string]string{
			"Cache-Control": "payments/headers.md",
			"PEP 8":         "payments/pep.md",
			"pacs.008":      "payments/codes.md",
			"AC04":          "payments/codes.md",
		} {
			resp := mustSearch(t, s, Request{Query: q, Layers: []string{"payments"}, Explain: true})
			if len(resp.Results) == 0 || files(resp)[0] != want {
				t.Errorf("%q: want %s first, got %v", q, want, files(resp))
				continue
			}
			if ex := resp.Results[0].Explain; ex == nil || len(ex.ExactTerms) == 0 {
				t.Errorf("%q: explain must name the exact term held, got %+v", q, ex)
			}
		}
	})

	t.Run("named layers are never broadened", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "unused leave days", Layers: []string{"payments"}})
		if resp.RoutingFallback != nil {
			t.Errorf("named layers must not fall back, got %+v", resp.RoutingFallback)
		}
		for _, r := range resp.Results {
			if r.Layer != "payments" {
				t.Errorf("result from %s in a search of payments", r.Layer)
			}
		}
	})

	t.Run("routing fallback: insufficient results", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "pacs.008 and unused leave days"})
		if resp.RoutingFallback == nil || resp.RoutingFallback.Reason != "insufficient_results" || resp.RoutingFallback.SearchedLayers != "all" {
			t.Fatalf("want fallback insufficient_results, got %+v", resp.RoutingFallback)
		}
		var outside, inside int
		for _, r := range resp.Results {
			if r.OutsideRouting != (r.Layer != "payments") {
				t.Errorf("%s/%s: outside_routing=%v", r.Layer, r.File, r.OutsideRouting)
			}
			if r.OutsideRouting {
				outside++
			} else {
				inside++
			}
		}
		if outside == 0 || inside == 0 {
			t.Errorf("want results from payments and from other layers, got %v", files(resp))
		}
	})

	t.Run("routing without fallback", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "pacs.008 AC04 reason code", TopK: 1})
		if resp.RoutingFallback != nil {
			t.Fatalf("enough close results: no fallback expected, got %+v (%v, %s)", resp.RoutingFallback, files(resp), resp.Confidence)
		}
		if strings.Join(resp.SearchedLayers, ",") != "payments" || files(resp)[0] != "payments/codes.md" {
			t.Errorf("routing should search payments only, got %v %v", resp.SearchedLayers, files(resp))
		}
	})

	t.Run("routing fallback: low confidence", func(t *testing.T) {
		f.setParams(t, `INSERT INTO strata.model_search_params (model, confidence_high, confidence_medium)
			VALUES ($1, 0.99, 0.98)`, f.emb.Model().Name)
		defer f.setParams(t, `DELETE FROM strata.model_search_params WHERE model = $1`, f.emb.Model().Name)
		// A question whose first result holds a code it names (AC04) is at
		// least medium whatever the marks (code evidence), so this one
		// names none, and no passage holds three of its words in a row.
		resp := mustSearch(t, f.searcher(t), Request{Query: "pacs closed account", TopK: 1})
		if resp.RoutingFallback == nil || resp.RoutingFallback.Reason != "low_confidence" {
			t.Fatalf("want fallback low_confidence, got %+v", resp.RoutingFallback)
		}
		if resp.Confidence != "low" || resp.Warning == "" {
			t.Errorf("want low confidence with a warning, got %s %q", resp.Confidence, resp.Warning)
		}
	})

	t.Run("keyword slots on and off", func(t *testing.T) {
		f.setParams(t, `INSERT INTO strata.model_search_params (model, lexical_weight, vector_weight)
			VALUES ($1, 0.1, 1)`, f.emb.Model().Name)
		defer f.setParams(t, `DELETE FROM strata.model_search_params WHERE model = $1`, f.emb.Model().Name)
		req := Request{Query: "what is the form of the XQ9", Layers: []string{"zoo"}, TopK: 1, Explain: true}
		off := mustSearch(t, f.searcher(t, func(o *Options) { o.KeywordSlots = 0 }), req)
		on := mustSearch(t, f.searcher(t), req)
		if files(off)[0] != "zoo/b.md" {
			t.Fatalf("without slots fusion should favour the vector match b.md, got %v", files(off))
		}
		if files(on)[0] != "zoo/a.md" {
			t.Fatalf("with one slot the best full-text match a.md keeps its place, got %v", files(on))
		}
		if ex := on.Results[0].Explain; ex.Placement != "keyword_slot" || ex.Lexical == nil || ex.Lexical.Rank != 1 || ex.FusedRank != 2 {
			t.Errorf("explain must show the keyword slot: %+v", ex)
		}
	})

	t.Run("degraded without an embedder", func(t *testing.T) {
		s := NewWithOptions(f.open(t), DefaultOptions())
		resp := mustSearch(t, s, Request{Query: "salaries paid", Layers: []string{"handbook"}})
		if !resp.Degraded || resp.DegradedReason == "" {
			t.Errorf("want degraded with a reason, got %+v", resp)
		}
		if len(resp.Results) == 0 || resp.Results[0].File != "pay.md" {
			t.Errorf("lexical channel must still answer, got %v", files(resp))
		}
		if resp.Confidence != "low" || resp.Warning == "" || resp.Basis != "similarity" {
			t.Errorf("confidence cannot be judged: %s %q %s", resp.Confidence, resp.Warning, resp.Basis)
		}
		failing := f.searcher(t, func(o *Options) { o.Embedder = &bowEmbedder{fail: errors.New("provider down")} })
		resp = mustSearch(t, failing, Request{Query: "salaries paid", Layers: []string{"handbook"}})
		if !resp.Degraded || !strings.Contains(resp.DegradedReason, "provider down") || len(resp.Results) == 0 {
			t.Errorf("a failing embedder degrades, never fails: %+v", resp)
		}
	})

	t.Run("explain", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "clause 7.2 notice agreement", Layers: []string{"contracts"}, Explain: true})
		if resp.Explain == nil || strings.Join(resp.Explain.Channels, ",") != "lexical,vector" || resp.Explain.RRFK == 0 {
			t.Fatalf("top-level explain missing channels or fusion settings: %+v", resp.Explain)
		}
		if !strings.HasPrefix(resp.Explain.LexicalCandidates, "postings:") {
			t.Errorf("an unfiltered search takes the postings path, explain says %q", resp.Explain.LexicalCandidates)
		}
		if resp.Explain.QueryEncoder != "" {
			t.Errorf("the model itself embedded the query, explain names %q", resp.Explain.QueryEncoder)
		}
		// An embedder whose queries another export embeds (EMBEDDING_QUERY_INT8)
		// is named in explain beside the model.
		viaExport := f.searcher(t, func(o *Options) { o.Embedder = exportNamed{o.Embedder, "bow-q"} })
		withExport := mustSearch(t, viaExport, Request{Query: "clause 7.2 notice agreement", Layers: []string{"contracts"}, Explain: true})
		if withExport.Explain == nil || withExport.Explain.QueryEncoder != "bow-q" || withExport.Explain.Model != resp.Explain.Model {
			t.Errorf("explain with a query export: %+v", withExport.Explain)
		}
		filtered := mustSearch(t, f.searcher(t), Request{Query: "notice agreement", Layers: []string{"contracts"},
			MetadataFilter: map[string]string{"page": "1"}, Explain: true})
		if filtered.Explain == nil || !strings.HasPrefix(filtered.Explain.LexicalCandidates, "gin:") {
			t.Errorf("a filtered search takes the GIN path, explain: %+v", filtered.Explain)
		}
		for _, r := range resp.Results {
			ex := r.Explain
			if ex == nil || ex.Reason == "" {
				t.Fatalf("result without explain: %+v", r)
			}
			switch {
			case r.Match == "exact":
				if ex.Placement != "exact_match" || !strings.Contains(ex.Reason, "clause 7.2") {
					t.Errorf("exact result explain: %+v", ex)
				}
			default:
				if ex.Lexical == nil && ex.Vector == nil || ex.Fused <= 0 || ex.FusedRank == 0 {
					t.Errorf("fused result must show its channels: %+v", ex)
				}
				if ex.Vector != nil && ex.Vector.Score != r.Similarity {
					t.Errorf("vector score %v and similarity %v differ", ex.Vector.Score, r.Similarity)
				}
			}
		}
		plain := mustSearch(t, f.searcher(t), Request{Query: "clause 7.2 notice agreement", Layers: []string{"contracts"}})
		if plain.Explain != nil || plain.Results[0].Explain != nil {
			t.Errorf("explain must be off by default")
		}
	})

	t.Run("metadata_filter", func(t *testing.T) {
		s := f.searcher(t)
		resp := mustSearch(t, s, Request{Query: "cache control code", Layers: []string{"payments"},
			MetadataFilter: map[string]string{"team": "web"}})
		if len(resp.Results) == 0 {
			t.Fatal("filter on team=web should match headers.md and scatter.md")
		}
		for _, r := range resp.Results {
			if r.File != "headers.md" && r.File != "scatter.md" {
				t.Errorf("%s does not match team=web", r.File)
			}
		}
		if !strings.Contains(resp.Note, "metadata_filter") {
			t.Errorf("fewer than top_k under a filter needs a note, got %q", resp.Note)
		}
		for _, flt := range []map[string]string{{"team": "nobody"}, {"colour": "red"}} {
			resp = mustSearch(t, s, Request{Query: "cache control code", MetadataFilter: flt})
			if len(resp.Results) != 0 || !strings.Contains(resp.Note, "not relaxed") {
				t.Errorf("filter %v must match nothing and say so, got %v %q", flt, files(resp), resp.Note)
			}
		}
		_, err := s.Search(ctx, Request{Query: "x", MetadataFilter: map[string]string{"page": "three"}})
		var qe *qerr.Error
		if !errors.As(err, &qe) || qe.Kind != qerr.Invalid || qe.Arg != "metadata_filter" {
			t.Errorf("bad page value: want Invalid naming metadata_filter, got %v", err)
		}
	})

	t.Run("unknown layer", func(t *testing.T) {
		_, err := f.searcher(t).Search(ctx, Request{Query: "x", Layers: []string{"nope"}})
		var qe *qerr.Error
		if !errors.As(err, &qe) || qe.Kind != qerr.Invalid || qe.Arg != "layers" || !strings.Contains(qe.Msg, "handbook") {
			t.Errorf("want Invalid naming layers and listing the known ones, got %v", err)
		}
	})

	t.Run("similarity on every result", func(t *testing.T) {
		resp := mustSearch(t, f.searcher(t), Request{Query: "travel expenses reimbursed", Layers: []string{"handbook"}})
		if resp.Results[0].File != "travel.md" || resp.Results[0].Similarity <= 0 || resp.Results[0].Similarity > 1 {
			t.Errorf("want travel.md with a cosine similarity, got %+v", resp.Results[0])
		}
	})

	t.Run("cache is invalidated by an ingest", func(t *testing.T) {
		s := f.searcher(t)
		req := Request{Query: "bicycle allowance", Layers: []string{"handbook"}, Explain: true}
		first := mustSearch(t, s, req)
		second := mustSearch(t, s, req)
		if first.Explain.Cached || !second.Explain.Cached {
			t.Fatalf("second identical search should come from the cache: %v %v", first.Explain.Cached, second.Explain.Cached)
		}
		if len(second.Results) != 0 {
			t.Fatalf("nothing about bicycles yet: %v", files(second))
		}
		f.ingest(t, jobs.Layer{Name: "handbook"}, map[string]string{
			"bike.md": "# Bicycles\n\nThe bicycle allowance is twenty euros a month.\n"})
		third := mustSearch(t, s, req)
		if third.Explain.Cached || len(third.Results) == 0 || third.Results[0].File != "bike.md" {
			t.Errorf("an ingest of the layer must invalidate the cache: cached=%v %v", third.Explain.Cached, files(third))
		}
	})
}

// TestVectorFilterFillsTopK: when a metadata filter or a layer leaves only
// a few chunks far from the query, the HNSW scan keeps going (iterative
// scan) until it has found top_k of them, even at a small ef_search.
func TestVectorFilterFillsTopK(t *testing.T) {
	t.Parallel()
	pool, url := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	ctx := context.Background()
	emb := &bowEmbedder{dims: 256}
	var ids []int64
	for _, name := range []string{"many", "few"} {
		l, err := jobs.UpsertLayer(ctx, pool, jobs.Layer{Name: name, Root: "/nonexistent", AnswerMode: "grounded", ChunkSize: 800})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	// Texts of eight words drawn from a vocabulary; the rare ones from
	// another vocabulary, so they are far from the query.
	rng := rand.New(rand.NewPCG(1, 2))
	words := func(prefix string, n int) string {
		var w []string
		for j := 0; j < n; j++ {
			w = append(w, fmt.Sprintf("%s%d", prefix, rng.IntN(400)))
		}
		return strings.Join(w, " ")
	}
	var paths, texts []string
	for i := 0; i < 1500; i++ {
		paths = append(paths, fmt.Sprintf("near-%d", i))
		texts = append(texts, words("w", 8))
	}
	for i := 0; i < 12; i++ {
		paths = append(paths, fmt.Sprintf("far-%d", i))
		texts = append(texts, words("x", 8))
	}
	loadChunks(t, pool, ids[0], emb, paths, texts, func(i int) map[string]string {
		if i >= 1500 {
			return map[string]string{"team": "rare"}
		}
		return map[string]string{"team": "common"}
	})
	var fewPaths, fewTexts []string
	for i := 0; i < 12; i++ {
		fewPaths = append(fewPaths, fmt.Sprintf("other-%d", i))
		fewTexts = append(fewTexts, words("y", 8))
	}
	loadChunks(t, pool, ids[1], emb, fewPaths, fewTexts, nil)
	// At this size the planner would rather scan everything exactly: make
	// it take the HNSW index, as it does on large layers.
	var db string
	if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"enable_seqscan", "enable_bitmapscan", "enable_sort"} {
		if _, err := pool.Exec(ctx, `ALTER DATABASE "`+db+`" SET `+set+` = off`); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.OpenCorpus(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	qv, _ := emb.Embed(ctx, []string{texts[0]})
	for _, c := range []struct {
		name   string
		layers []int64
		filter map[string]string
	}{
		{"metadata filter", ids[:1], map[string]string{"team": "rare"}},
		{"layer", ids, nil},
		{"layer", ids[1:], nil},
	} {
		hits, err := st.SearchVectors(ctx, store.VectorQuery{Model: emb.Model().Name, Dims: 256, Vector: qv[0],
			LayerIDs: c.layers, Filter: c.filter, Limit: 10, EFSearch: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 10 {
			t.Errorf("%s: want 10 hits, got %d", c.name, len(hits))
		}
	}
}

// exportNamed is an embedder whose queries an export of its model embeds
// (embedding.QueryExport), named name.
type exportNamed struct {
	embed.Embedder
	name string
}

func (e exportNamed) QueryEncoder() string { return e.name }
