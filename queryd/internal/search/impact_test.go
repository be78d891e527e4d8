package search

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// allPostings is the postings' rows and the posting lists' entries
// (migration 0028) as one relation, for the checks below.
const allPostings = `(SELECT chunk_id, lexeme, layer_id FROM strata.postings
	UNION ALL
	SELECT u.chunk_id, pl.lexeme, pl.layer_id FROM strata.posting_lists pl, unnest(pl.chunk_ids) u(chunk_id))`

// postingsDrift counts the (chunk, lexeme) pairs on which strata.postings and
// the chunks' own tsvectors disagree, in either direction.
func postingsDrift(t *testing.T, f *fixture) int {
	t.Helper()
	var n int
	err := f.pool.QueryRow(context.Background(), `
		WITH want AS (SELECT c.id AS chunk_id, u.lexeme, c.layer_id FROM strata.chunks c, unnest(c.tsv) u),
		have AS (SELECT chunk_id, lexeme, layer_id FROM strata.postings
			UNION ALL
			SELECT u.chunk_id, pl.lexeme, pl.layer_id FROM strata.posting_lists pl, unnest(pl.chunk_ids) u(chunk_id))
		SELECT (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM have) a)
		     + (SELECT count(*) FROM (SELECT * FROM have EXCEPT ALL SELECT * FROM want) b)`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostingsFollowChunks: the triggers keep one posting per chunk and
// lexeme through ingest, edit, delete and layer removal, and the SQL impact
// is queryd's BM25 term weight.
func TestPostingsFollowChunks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.ingest(t, jobs.Layer{Name: "handbook"}, handbook)
	f.ingest(t, jobs.Layer{Name: "zoo"}, zoo)
	var rows int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM `+allPostings+` p`).Scan(&rows); err != nil || rows == 0 {
		t.Fatalf("postings after ingest: %d, %v", rows, err)
	}
	if d := postingsDrift(t, f); d != 0 {
		t.Fatalf("after ingest, %d postings differ from the chunks", d)
	}

	// Edit one file and delete another: re-ingest replaces chunks.
	edited := map[string]string{}
	for p, c := range handbook {
		edited[p] = c
	}
	var first string
	for p := range edited {
		if first == "" || p < first {
			first = p
		}
	}
	edited[first] += "\n\nA new closing paragraph about quarterly zebra audits.\n"
	f.ingest(t, jobs.Layer{Name: "handbook"}, edited)
	if d := postingsDrift(t, f); d != 0 {
		t.Fatalf("after an edit, %d postings differ from the chunks", d)
	}
	var zebra int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM `+allPostings+` p WHERE lexeme = 'zebra'`).Scan(&zebra); err != nil || zebra == 0 {
		t.Fatalf("the edit's new word has no posting: %d, %v", zebra, err)
	}

	// The stored impact is BM25's term weight with the Go constants.
	for _, c := range []struct {
		tf, len int
		avg     float64
	}{{1, 10, 40}, {3, 50, 40}, {7, 200, 35.5}, {2, 0, 0}} {
		var got float64
		if err := f.pool.QueryRow(ctx, `SELECT strata.postings_impact($1, $2, $3)`, c.tf, c.len, c.avg).Scan(&got); err != nil {
			t.Fatal(err)
		}
		tf := float64(c.tf)
		d := retrieve.DefaultParams()
		want := tf * (d.K1 + 1) / (tf + d.K1*(1-d.B+d.B*float64(c.len)/math.Max(c.avg, 1)))
		if math.Abs(got-want) > 1e-5*want {
			t.Errorf("postings_impact(%d, %d, %g) = %g, queryd computes %g: k1/b in migration 0006 and retrieve.DefaultParams differ",
				c.tf, c.len, c.avg, got, want)
		}
	}

	// refresh_lexical_stats rebuilds a layer's postings to the same rows.
	if _, err := f.pool.Exec(ctx, `SELECT strata.refresh_lexical_stats(id) FROM strata.layers`); err != nil {
		t.Fatal(err)
	}
	if d := postingsDrift(t, f); d != 0 {
		t.Fatalf("after refresh, %d postings differ from the chunks", d)
	}

	// Removing a layer removes its postings.
	if _, err := f.pool.Exec(ctx, `DELETE FROM strata.layers WHERE name = 'zoo'`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM `+allPostings+` p
		WHERE NOT EXISTS (SELECT 1 FROM strata.layers l WHERE l.id = p.layer_id)`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("postings of the removed layer left: %d, %v", left, err)
	}
}

// TestImpactPathMatchesExact: when every posting list fits in the lists
// read, the impact-ordered path returns the exact path's ranking and
// scores; with short lists, an exact term made of common words is still
// found through the GIN index.
func TestImpactPathMatchesExact(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	docs := map[string]string{}
	topics := []string{"leave", "payroll", "travel", "security", "backup", "invoice", "contract", "notice"}
	for i := 0; i < 40; i++ {
		a, b := topics[i%len(topics)], topics[(i*3+1)%len(topics)]
		docs[fmt.Sprintf("doc%02d.md", i)] = fmt.Sprintf("# Note %d on %s\n\nThis note covers %s and %s. "+
			"The %s rule applies to staff in region %d, and the %s review happens every %d weeks. "+
			"See PEP %d for the style of the scripts.\n", i, a, a, b, a, i%5, b, i%7+1, i%9+10)
	}
	// One document says "PEP 8" as written; many others mention pep and 8
	// apart, more often.
	docs["style.md"] = "# Script style\n\nScripts follow PEP 8 for layout.\n"
	for i := 0; i < 12; i++ {
		docs[fmt.Sprintf("pep%02d.md", i)] = "# PEP index\n\nThe pep list, pep owners and pep history: 8 items, 8 owners, 8 reviews.\n"
	}
	f.ingest(t, jobs.Layer{Name: "notes"}, docs)
	// A second layer sharing some words: a search of both layers reads
	// each layer's posting lists.
	f.ingest(t, jobs.Layer{Name: "memos"}, map[string]string{
		"m1.md": "# Memo\n\nThe leave rule changed for staff in region 3.\n",
		"m2.md": "# Memo\n\nBackup of payroll data runs every two weeks.\n",
	})
	st := f.open(t)
	layers, err := st.Layers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids, both []int64
	for _, l := range layers {
		if l.Name == "notes" {
			ids = append(ids, l.ID)
		}
		both = append(both, l.ID)
	}
	eng := retrieve.New(st, retrieve.Options{})
	p := retrieve.DefaultParams()
	run := func(q string, ids []int64) []store.LexHit {
		t.Helper()
		params := p
		lex, err := eng.Query(retrieve.Query{Text: q, Params: &params}).Lexical(ctx, ids, 10, false)
		if err != nil {
			t.Fatalf("lexical %q: %v", q, err)
		}
		return lex.Hits
	}
	// sameAsExact runs q on the GIN path and on the postings path with lists
	// of 1,000, fails unless both rank the same chunks with the same scores,
	// and returns the postings path's hits.
	sameAsExact := func(q, label string, ids []int64) []store.LexHit {
		t.Helper()
		p.ImpactPerTerm = 0
		exact := run(q, ids)
		p.ImpactPerTerm = 1000
		impact := run(q, ids)
		if len(exact) == 0 || len(impact) != len(exact) {
			t.Fatalf("%q%s: exact path %d hits, impact path %d", q, label, len(exact), len(impact))
		}
		for i := range exact {
			if exact[i].ChunkID != impact[i].ChunkID || math.Abs(exact[i].Score-impact[i].Score) > 1e-9 {
				t.Fatalf("%q%s: rank %d differs: exact %+v, impact %+v", q, label, i+1, exact[i], impact[i])
			}
		}
		return impact
	}
	for _, q := range []string{"leave rule for staff", "payroll review every weeks", "backup and security notes in region 3",
		"which contract notice", "PEP 8 style"} {
		sameAsExact(q, "", ids)
	}

	// Both layers: the same ranking too, with hits from each layer.
	for _, q := range []string{"leave rule for staff in region 3", "payroll backup every weeks"} {
		impact := sameAsExact(q, " over two layers", both)
		var memo bool
		for _, h := range impact {
			var layer string
			if err := f.pool.QueryRow(ctx, `SELECT l.name FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id
				WHERE c.id = $1`, h.ChunkID).Scan(&layer); err != nil {
				t.Fatal(err)
			}
			memo = memo || layer == "memos"
		}
		if !memo {
			t.Errorf("%q over two layers found nothing in memos", q)
		}
	}

	// Lists of two postings: neither 'pep' nor '8' reaches style.md by
	// impact (the pep pages hold both words three times), so only the
	// phrase lookup can bring it in.
	p.ImpactPerTerm = 2
	savedLimit := p.ImpactPhraseLimit
	var styleChunk int64
	if err := f.pool.QueryRow(ctx, `SELECT c.id FROM strata.chunks c JOIN strata.documents d ON d.id = c.document_id
		WHERE d.path = 'style.md' AND c.text LIKE '%PEP 8%'`).Scan(&styleChunk); err != nil {
		t.Fatal(err)
	}
	found := func() (bool, bool) {
		for _, h := range run("PEP 8", ids) {
			if h.ChunkID == styleChunk {
				return true, len(h.Exact) == 1
			}
		}
		return false, false
	}
	p.ImpactPhraseLimit = 0
	if ok, _ := found(); ok {
		t.Fatalf("with no phrase lookup style.md should be out of reach of two-posting lists; the test proves nothing")
	}
	p.ImpactPhraseLimit = savedLimit
	if ok, exact := found(); !ok || !exact {
		t.Fatalf("PEP 8 as written not found through the phrase lookup (found %v, exact %v)", ok, exact)
	}
	if !strings.Contains(docs["style.md"], "PEP 8") {
		t.Fatal("fixture changed")
	}
}

// TestImpactPathWithFilter: a metadata_filter that most candidates pass
// stays on the postings path; one that leaves fewer than the depth sends
// the search to the GIN path. Either way the ranking is the exact one.
func TestImpactPathWithFilter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	docs := map[string]string{}
	for i := 0; i < 40; i++ {
		team := "ops"
		if i%10 == 0 {
			team = "hr"
		}
		docs[fmt.Sprintf("n%02d.md", i)] = fmt.Sprintf("---\nteam: %s\n---\n# Rota %d\n\nThe backup rota for week %d names "+
			"who restores the payroll backup and who checks the backup logs.\n", team, i, i)
	}
	f.ingest(t, jobs.Layer{Name: "rota"}, docs)
	st := f.open(t)
	layers, err := st.Layers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int64{layers[0].ID}
	eng := retrieve.New(st, retrieve.Options{})
	saved := retrieve.DefaultParams().ImpactPerTerm
	for _, c := range []struct {
		team, path string
	}{{"ops", "postings:"}, {"hr", "gin:"}} {
		run := func(m int) ([]store.LexHit, string) {
			p := retrieve.DefaultParams()
			p.ImpactPerTerm = m
			lex, err := eng.Query(retrieve.Query{Text: "payroll backup logs", Filter: map[string]string{"team": c.team},
				Params: &p}).Lexical(ctx, ids, 10, false)
			if err != nil {
				t.Fatal(err)
			}
			return lex.Hits, describePath(lex.Path)
		}
		exact, _ := run(0)
		got, path := run(saved)
		if !strings.HasPrefix(path, c.path) {
			t.Errorf("team %s: want the %s path, explain says %q", c.team, c.path, path)
		}
		if len(got) == 0 || len(got) != len(exact) {
			t.Fatalf("team %s: %d hits, exact path %d", c.team, len(got), len(exact))
		}
		for i := range exact {
			if got[i].ChunkID != exact[i].ChunkID {
				t.Fatalf("team %s: rank %d differs from the exact path", c.team, i+1)
			}
		}
		for _, h := range got {
			var team string
			if err := f.pool.QueryRow(ctx, `SELECT metadata->>'team' FROM strata.chunks WHERE id = $1`, h.ChunkID).Scan(&team); err != nil {
				t.Fatal(err)
			}
			if team != c.team {
				t.Fatalf("team %s: a hit of team %q passed the filter", c.team, team)
			}
		}
	}
}

// TestPostingListsPack: a closed run leaves no postings unpacked and every
// list in impact order; chunks deleted before the next pack are not
// returned meanwhile, and the pack then drops them from the lists.
func TestPostingListsPack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.ingest(t, jobs.Layer{Name: "zoo"}, zoo)
	var delta, unordered, lists int
	if err := f.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM strata.postings),
		(SELECT count(*) FROM strata.posting_lists WHERE impacts <> (SELECT array_agg(x ORDER BY x DESC) FROM unnest(impacts) x)),
		(SELECT count(*) FROM strata.posting_lists)`).Scan(&delta, &unordered, &lists); err != nil {
		t.Fatal(err)
	}
	if delta != 0 || unordered != 0 || lists == 0 {
		t.Fatalf("after a run: %d postings unpacked, %d lists out of impact order, %d lists; want 0, 0, some", delta, unordered, lists)
	}
	s := f.searcher(t)
	if r := mustSearch(t, s, Request{Query: "treasurer", Layers: []string{"zoo"}}); len(r.Results) == 0 || r.Results[0].File != "a.md" {
		t.Fatalf("before the delete: %v", files(r))
	}
	// Delete a.md's chunks outside a run: its ids stay in the lists until
	// the next pack, and are not returned.
	if _, err := f.pool.Exec(ctx, `DELETE FROM strata.documents WHERE path = 'a.md'`); err != nil {
		t.Fatal(err)
	}
	if r := mustSearch(t, f.searcher(t), Request{Query: "treasurer", Layers: []string{"zoo"}}); len(r.Results) != 0 {
		t.Errorf("a deleted chunk came back before the pack: %v", files(r))
	}
	var dirty int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM strata.posting_lists_dirty`).Scan(&dirty); err != nil || dirty == 0 {
		t.Fatalf("the deleted chunks' lexemes were not marked: %d, %v", dirty, err)
	}
	if _, err := f.pool.Exec(ctx, `SELECT strata.pack_postings(id) FROM strata.layers`); err != nil {
		t.Fatal(err)
	}
	if d := postingsDrift(t, f); d != 0 {
		t.Fatalf("after the pack, %d postings differ from the chunks", d)
	}
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM strata.posting_lists_dirty`).Scan(&dirty); err != nil || dirty != 0 {
		t.Fatalf("dirty lists left after the pack: %d, %v", dirty, err)
	}
	var treasurer int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM strata.posting_lists WHERE lexeme = 'treasur'`).Scan(&treasurer); err != nil || treasurer != 0 {
		t.Errorf("the list of a lexeme no chunk holds any more is left: %d, %v", treasurer, err)
	}
}
