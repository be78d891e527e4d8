package retrieve

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// sameLexical says how two lexical results differ ("" when they do not):
// the same hits in the same order, scores within 1e-9, the same exact-term
// indexes, terms, boosts, path, words and unseen words.
func sameLexical(a, b Lexical) string {
	var d []string
	if !slices.Equal(a.Terms, b.Terms) {
		d = append(d, fmt.Sprintf("terms %q / %q", a.Terms, b.Terms))
	}
	if !slices.EqualFunc(a.Boosts, b.Boosts, func(x, y float64) bool { return math.Abs(x-y) <= 1e-9 }) {
		d = append(d, fmt.Sprintf("boosts %v / %v", a.Boosts, b.Boosts))
	}
	if a.Path != b.Path {
		d = append(d, fmt.Sprintf("path %+v / %+v", a.Path, b.Path))
	}
	if !slices.Equal(a.Words, b.Words) || !slices.Equal(a.Unseen, b.Unseen) {
		d = append(d, fmt.Sprintf("words %q %q / %q %q", a.Words, a.Unseen, b.Words, b.Unseen))
	}
	if len(a.Hits) != len(b.Hits) {
		d = append(d, fmt.Sprintf("%d hits / %d", len(a.Hits), len(b.Hits)))
	}
	for i := range min(len(a.Hits), len(b.Hits)) {
		x, y := a.Hits[i], b.Hits[i]
		if x.ChunkID != y.ChunkID || math.Abs(x.Score-y.Score) > 1e-9 || !slices.Equal(x.Exact, y.Exact) {
			d = append(d, fmt.Sprintf("hit %d: %d %.12g %v / %d %.12g %v", i, x.ChunkID, x.Score, x.Exact, y.ChunkID, y.Score, y.Exact))
			break
		}
	}
	return strings.Join(d, "; ")
}

// scoreDiff is the largest difference between the scores of the hits a
// and b hold at the same place for the same chunk.
func scoreDiff(a, b Lexical) float64 {
	d := 0.0
	for i := range min(len(a.Hits), len(b.Hits)) {
		if a.Hits[i].ChunkID == b.Hits[i].ChunkID {
			d = max(d, math.Abs(a.Hits[i].Score-b.Hits[i].Score))
		}
	}
	return d
}

// tieRuns puts the hits of each run of equal scores (within 1e-9, the
// same number of exact terms) in chunk order: two chunks whose scores are
// equal but for rounding come in the order the rounding of the sums gives,
// and the one statement adds the same terms in another order than each
// search of its own. A run that reaches depth may hold other chunks in
// each list (the cut falls inside it): it is left out, cut reports it.
func tieRuns(l Lexical, depth int) (out Lexical, cut int) {
	out = l
	out.Hits = slices.Clone(l.Hits)
	h := out.Hits
	for a := 0; a < len(h); {
		b := a + 1
		for b < len(h) && math.Abs(h[b].Score-h[a].Score) <= 1e-9 && len(h[b].Exact) == len(h[a].Exact) {
			b++
		}
		if b == len(h) && len(h) == depth {
			// Keep the run's first hit with its chunk left out: its score
			// and exact count still compare.
			cut = b - a
			out.Hits = append(h[:a:a], store.LexHit{Score: h[a].Score, Exact: h[a].Exact})
			return out, cut
		}
		slices.SortFunc(h[a:b], func(x, y store.LexHit) int { return int(x.ChunkID - y.ChunkID) })
		a = b
	}
	return out, 0
}

// compareByLayer runs the lexical channel of one query over the layers
// both ways: each scope of the one statement (lexicalScopes) against
// Lexical over that scope alone, the same up to the order of tied hits
// (tieRuns); and the merged list of the one statement against that of
// 1+N calls of Lexical (lexicalByLayerSeparate): the same places with
// the same scores, and, filled from the scopes with their tied hits in
// chunk order, the same chunks. It returns the differences, the largest
// score difference (scoreDiff), how many hits were tied with another
// at a different place, and the merged result.
func compareByLayer(ctx context.Context, one, sep *Engine, q Query, layers []store.Layer, depth int) ([]string, float64, int, Lexical, error) {
	ids := store.LayerIDs(layers)
	var diffs []string
	worst, moved := 0.0, 0
	outs, _, err := one.Query(q).lexicalScopes(ctx, layers, ids, depth)
	if err != nil {
		return nil, 0, 0, Lexical{}, err
	}
	wants := make([]Lexical, len(outs))
	for i, o := range outs {
		sc, contracts, name := ids, anyContracts(layers), "all layers"
		if i < len(layers) {
			sc, contracts, name = []int64{layers[i].ID}, layers[i].Preset == "contracts", layers[i].Name
		}
		want, err := sep.Query(q).Lexical(ctx, sc, depth, contracts)
		if err != nil {
			return nil, 0, 0, Lexical{}, err
		}
		wants[i] = want
		worst = max(worst, scoreDiff(o, want))
		if sameLexical(o, want) != "" {
			moved++
		}
		a, cutA := tieRuns(o, depth)
		b, cutB := tieRuns(want, depth)
		if d := sameLexical(a, b); d != "" || cutA != cutB {
			diffs = append(diffs, fmt.Sprintf("%q over %s: %s (tied at the cut %d / %d)", q.Text, name, d, cutA, cutB))
		}
	}
	// Search reads the run's parameters before the channels run; the 1+N
	// searches read them concurrently and must find them read.
	runOne, runSep := one.Query(q), sep.Query(q)
	runOne.Params(ctx)
	runSep.Params(ctx)
	got, err := runOne.lexicalByLayer(ctx, layers, ids, depth)
	if err != nil {
		return nil, 0, 0, Lexical{}, err
	}
	want, err := runSep.lexicalByLayer(ctx, layers, ids, depth)
	if err != nil {
		return nil, 0, 0, Lexical{}, err
	}
	worst = max(worst, scoreDiff(got, want))
	if len(got.Hits) != len(want.Hits) {
		diffs = append(diffs, fmt.Sprintf("%q merged: %d hits / %d", q.Text, len(got.Hits), len(want.Hits)))
	}
	for i := range min(len(got.Hits), len(want.Hits)) {
		if math.Abs(got.Hits[i].Score-want.Hits[i].Score) > 1e-9 {
			diffs = append(diffs, fmt.Sprintf("%q merged: place %d scores %.12g / %.12g", q.Text, i, got.Hits[i].Score, want.Hits[i].Score))
			break
		}
	}
	// The merge of each side's scopes, tied hits in chunk order, must
	// give the same list.
	fill := func(outs []Lexical) (Lexical, error) {
		c := make([]Lexical, len(outs))
		for i, o := range outs {
			c[i], _ = tieRuns(o, -1)
		}
		return one.Query(q).mergeByLayer(ctx, layers, c[len(layers)], c[:len(layers)], map[int64]int{})
	}
	fa, err := fill(outs)
	if err != nil {
		return nil, 0, 0, Lexical{}, err
	}
	fb, err := fill(wants)
	if err != nil {
		return nil, 0, 0, Lexical{}, err
	}
	if d := sameLexical(fa, fb); d != "" && !tiedAtCut(outs, wants, depth) {
		diffs = append(diffs, fmt.Sprintf("%q merged, ties in chunk order: %s", q.Text, d))
	}
	return diffs, worst, moved, got, nil
}

// tiedAtCut says whether a scope's last hits tie across its cut, so that
// the lists hold different chunks there and so may their merges.
func tiedAtCut(a, b []Lexical, depth int) bool {
	for i := range a {
		if _, cut := tieRuns(a[i], depth); cut > 0 {
			return true
		}
		if _, cut := tieRuns(b[i], depth); cut > 0 {
			return true
		}
	}
	return false
}

// engines returns an engine running lexicalByLayer as one statement and
// one running it as 1+N searches, over the same store.
func engines(st Corpus, opt Options) (one, sep *Engine) {
	one, sep = New(st, opt), New(st, opt)
	sep.byLayer = byLayerSeparate
	return one, sep
}

// recordingCorpus counts what the one statement was asked to do, so the
// test below can show that its fixture reaches every part of it.
type recordingCorpus struct {
	Corpus
	mu                  sync.Mutex
	many, phraseMatches int
}

func (c *recordingCorpus) SearchBM25Many(ctx context.Context, qs []store.BM25Query) ([][]store.LexHit, map[int64]int64, error) {
	c.mu.Lock()
	c.many++
	for _, q := range qs {
		if q.Impact.PhraseMatch != "" {
			c.phraseMatches++
		}
	}
	c.mu.Unlock()
	return c.Corpus.SearchBM25Many(ctx, qs)
}

// ingestLayers ingests each folder of files as a layer (the contracts
// folder with the contracts preset) and returns the store and the layers.
func ingestLayers(t *testing.T, files map[string]map[string]string, chunkSize int) (*store.Corpus, []store.Layer) {
	t.Helper()
	pool, url := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		root := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, text := range files[name] {
			if err := os.WriteFile(filepath.Join(root, f), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l := jobs.Layer{Name: name, Root: root, ChunkSize: chunkSize}
		if name == "contracts" {
			l.Preset = "contracts"
		}
		ingesttest.Ingest(t, pool, l, ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	}
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	layers, err := st.Layers(context.Background())
	if err != nil || len(layers) != len(files) {
		t.Fatalf("layers: %v %v", layers, err)
	}
	return st, layers
}

// TestLexicalLayersOneStatement: over four layers (one of the contracts
// preset, so clause words; documents of several chunks, so document
// evidence; codes, names and dotted terms, so exact terms and phrase
// boosts; metadata for a filter; two files with the same text, so tied
// scores), lexicalByLayer run as one statement returns what 1+N calls of
// Lexical return: for every scope (each layer alone and all of them) and
// for the merged list, the same chunks in the same order, scores within
// 1e-9, the same exact-term indexes, terms, boosts, paths and words. It
// does so for many queries and for settings that reach every part of the
// statement: the defaults, tight posting lists and candidate counts (the
// GIN index adds an exact term's chunks; the candidate cut falls inside
// the lists), no document evidence, exact terms first, synonyms, a
// metadata filter that sends some scopes to the GIN path, and the GIN
// path alone.
func TestLexicalLayersOneStatement(t *testing.T) {
	t.Parallel()
	contracts := map[string]string{}
	for i, p := range [][2]string{{"Halvorsen", "Lakeside"}, {"Quillon", "Marrowby"}, {"Ostrava", "Pellam"},
		{"Brennic", "Tolvane"}, {"Caskell", "Verrow"}, {"Dunmore", "Sallet"}} {
		contracts[strings.ToLower(p[0]+"-"+p[1])+".txt"] = fixtureContract([]string{"Sponsorship", "Distribution", "Licence"}[i%3],
			p[0], p[1], "Customer", "Provider", []string{"Oregon", "Texas", "Ohio"}[i%3], []string{"Portland", "Austin", "Columbus"}[i%3])
	}
	var hb strings.Builder
	for i := range 12 {
		fmt.Fprintf(&hb, "Section %d. Our travel policy is governed by the laws of each country we visit; give notice of a trip in writing. "+
			"Fees for the portal are invoiced each month and paid within thirty days; a credit transfer under ISO 20022 settles them.\n\n", i+1)
	}
	notes := map[string]string{}
	for i := range 16 {
		team := []string{"ops", "hr", "ops", "legal"}[i%4]
		notes[fmt.Sprintf("n%02d.md", i)] = fmt.Sprintf("---\nteam: %s\n---\n# Note %d\n\nThe payroll backup for week %d follows PEP 8 and "+
			"sends pacs.008 messages; a failed credit transfer gets reason code AC04 or status code 409, and the Cache-Control header "+
			"of the gateway is no-store. Who restores the payroll backup checks the backup logs.\n", team, i, i)
	}
	layerFiles := map[string]map[string]string{
		"contracts": contracts,
		"payments":  payments,
		"handbook":  {"policy.txt": hb.String(), "policy-copy.txt": hb.String()},
		"notes":     notes,
	}
	st, layers := ingestLayers(t, layerFiles, 400)
	ctx := context.Background()

	queries := []string{
		"Which law governs the sponsorship agreement between Halvorsen and Lakeside?",
		"How much notice must Quillon give Marrowby, and what are the fees?",
		"Under the Ostrava and Pellam licence agreement, which state's laws apply?",
		"What does reason code AC04 mean for a credit transfer under ISO 20022?",
		"What does status code 409 mean for a credit transfer request?",
		"reason code NARR free text",
		"ISO 20022 credit transfer returns",
		"governed by the laws of the State of Texas",
		"Which insurance must the Provider keep during the term?",
		"travel policy notice in writing portal fees",
		"Does the payroll backup follow PEP 8?",
		"Cache-Control header of the gateway",
		"pacs.008 messages for a returned credit transfer",
		"confidentiality of business information when the agreement ends",
		"who restores the payroll backup and checks the backup logs",
		"terminate the contract and end the licence",
		"late sums bear interest at two per cent over the base rate",
		"intellectual property marks and designs of the Customer",
		"what is the capital of Atlantis",
		"HTTP 404 unknown payment identifier",
		"RECITALS goods of its own design",
		"Brennic Tolvane Caskell Verrow notices",
		"Section 7 travel policy",
		"ISO 20022",
	}
	// More, drawn from the fixture's words with a fixed seed.
	vocab := strings.Fields("agreement governed laws notice fees invoice credit transfer reason code status request payroll backup " +
		"Halvorsen Quillon Dunmore Sallet Provider Customer insurance term confidentiality AC04 409 PEP 8 ISO 20022 portal writing " +
		"thirty days Portland Austin courts dispute schedule report month gateway token scope")
	rng := rand.New(rand.NewPCG(12, 34))
	for range 30 {
		n := 2 + rng.IntN(5)
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		queries = append(queries, strings.Join(w, " "))
	}

	type variant struct {
		name   string
		depth  int
		filter map[string]string
		set    func(*Params)
	}
	variants := []variant{
		{name: "defaults", depth: 50, set: func(*Params) {}},
		{name: "tight lists", depth: 3, set: func(p *Params) { p.ImpactPerTerm, p.ImpactCandidates, p.ImpactPhraseLimit = 3, 6, 3 }},
		{name: "no document evidence", depth: 20, set: func(p *Params) { p.DocTermDiscount, p.DocContext = 0, 0 }},
		{name: "exact first", depth: 10, set: func(p *Params) { p.ExactFirst, p.CodeBoost = true, 0 }},
		{name: "synonyms", depth: 20, set: func(p *Params) { p.Synonyms, p.SynonymsAllSenses = 0.5, true }},
		{name: "filter", depth: 10, filter: map[string]string{"team": "ops"}, set: func(*Params) {}},
		{name: "gin path", depth: 10, set: func(p *Params) { p.ImpactPerTerm = 0 }},
	}
	rec := &recordingCorpus{Corpus: st}
	th := mapThesaurus{"terminate": {"end", "cancel"}, "contract": {"agreement"}, "fees": {"charges", "payment"}, "backup": {"copy"}}
	one, sep := engines(rec, Options{KeywordSlots: 1, Thesaurus: th})
	mixed, fellBack, moved := 0, 0, 0
	for _, v := range variants {
		hits := 0
		for _, text := range queries {
			p := DefaultParams()
			v.set(&p)
			diffs, _, m, merged, err := compareByLayer(ctx, one, sep, Query{Text: text, TopK: 10, Filter: v.filter, Params: &p}, layers, v.depth)
			if err != nil {
				t.Fatal(err)
			}
			moved += m
			for _, d := range diffs {
				t.Errorf("%s: %s", v.name, d)
			}
			hits += len(merged.Hits)
			if merged.Path.FellBack {
				fellBack++
			}
			if len(merged.Hits) > 1 {
				lm, err := st.ChunkLayers(ctx, []int64{merged.Hits[0].ChunkID, merged.Hits[len(merged.Hits)-1].ChunkID})
				if err != nil {
					t.Fatal(err)
				}
				if lm[merged.Hits[0].ChunkID] != lm[merged.Hits[len(merged.Hits)-1].ChunkID] {
					mixed++
				}
			}
		}
		if hits == 0 {
			t.Errorf("%s: no query found anything", v.name)
		}
	}
	t.Logf("%d queries, %d settings: %d scopes with tied hits in another order", len(queries), len(variants), moved)
	// The fixture must reach what could differ.
	if rec.many == 0 || rec.phraseMatches == 0 {
		t.Errorf("one statement ran %d times, with a phrase match %d times: want both", rec.many, rec.phraseMatches)
	}
	if fellBack == 0 {
		t.Errorf("the filter sent no search to the GIN path")
	}
	if mixed == 0 {
		t.Errorf("no merged list held chunks of two layers")
	}
}
