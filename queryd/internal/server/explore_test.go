package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/queryd/internal/ui"
	"github.com/stratakb/stratakb/schema/migrate"
)

// policyBody is the stored text of policy.md: front matter, then two
// numbered sections, the second with a subsection.
const policyBody = "---\nupdated: 2026-01-05\n---\n# Policy\n\n1 Scope\nAll staff.\n\n2 Leave\n2.1 Carry-over\nUp to 5 days.\n"

// exploreFixture is a migrated database holding one layer "ops" as ingestd
// would leave it, and a test server whose Explorer reads it as the
// read-only queryd role.
type exploreFixture struct {
	*testServer
	policy, scan, failed int64
}

func newExploreFixture(t *testing.T) exploreFixture {
	t.Helper()
	ctx := context.Background()
	owner, ownerURL := dbtest.NewPool(t)
	if _, err := migrate.Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	f := exploreFixture{}
	f.fill(t, owner)
	corpus, err := store.OpenCorpus(ctx, dbtest.QuerydURL(t, ownerURL))
	if err != nil {
		t.Fatalf("the corpus as the queryd role: %v", err)
	}
	t.Cleanup(corpus.Close)
	f.testServer = newTestServer(t, func(_ *Config, d *Deps) { d.Explorer = corpus })
	return f
}

func (f *exploreFixture) fill(t *testing.T, owner *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var layer int64
	if err := owner.QueryRow(ctx, `INSERT INTO strata.layers (name, root, description, routing_patterns, answer_mode, archived_globs)
		VALUES ('ops', '/srv/ops', 'Operations handbook', '{leave,holiday}', 'extractive', '{old/**}') RETURNING id`).Scan(&layer); err != nil {
		t.Fatal(err)
	}
	// doc stores a document; extra names more columns, args their values.
	doc := func(path, status, body string, extra string, args ...any) int64 {
		t.Helper()
		var id int64
		sql := `INSERT INTO strata.documents (layer_id, path, status, body, format, title` + extra + `) VALUES ($1, $2, $3, $4, 'markdown', $2`
		for i := range args {
			sql += fmt.Sprintf(", $%d", i+5)
		}
		if err := owner.QueryRow(ctx, sql+`) RETURNING id`, append([]any{layer, path, status, body}, args...)...).Scan(&id); err != nil {
			t.Fatalf("insert %s: %v", path, err)
		}
		return id
	}
	f.policy = doc("policy.md", "ok", policyBody, ", doc_date, date_source", "2026-01-05", "front_matter")
	doc("policy-2027.md", "ok", "# Policy 2027\n", ", supersedes", []string{"policy.md"})
	doc("old/2019.md", "ok", "# Old\n", "")
	doc("notes.md", "ok", "# Notes\n", ", warnings", []string{"a table had no header row"})
	f.failed = doc("broken.pdf", "failed", "", ", error", "not a PDF: no %PDF header")
	f.scan = doc("scan.pdf", "ok", "Page one text\nPage two text\n", ", total_pages", 2)
	sections := []struct {
		ord    int
		parent any
		number string
		title  string
		level  int
		start  int
		end    int
		path   string
	}{
		{0, nil, "1", "Scope", 1, strings.Index(policyBody, "1 Scope"), strings.Index(policyBody, "2 Leave"), "1 Scope"},
		{1, nil, "2", "Leave", 1, strings.Index(policyBody, "2 Leave"), len(policyBody), "2 Leave"},
		{2, 1, "2.1", "Carry-over", 2, strings.Index(policyBody, "2.1"), len(policyBody), "2 Leave > 2.1 Carry-over"},
	}
	for _, s := range sections {
		if _, err := owner.Exec(ctx, `INSERT INTO strata.sections (document_id, layer_id, ord, parent_ord, number, title, kind, level,
			start_off, heading_end, end_off, clause_path) VALUES ($1, $2, $3, $4, $5, $6, 'clause', $7, $8, $8, $9, $10)`,
			f.policy, layer, s.ord, s.parent, s.number, s.title, s.level, s.start, s.end, s.path); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := owner.Exec(ctx, `INSERT INTO strata.pages (document_id, number, start_off, end_off, text_origin, ocr_confidence)
		VALUES ($1, 1, 0, 14, 'text', NULL), ($1, 2, 14, 28, 'ocr', 0.91)`, f.scan); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec(ctx, `INSERT INTO strata.chunks (document_id, layer_id, ord, start_off, end_off, line_start, line_end, text, content_hash)
		VALUES ($1, $2, 0, 0, 10, 1, 1, 'Up to 5 days.', '\x01'), ($1, $2, 1, 10, 20, 2, 2, 'All staff.', '\x02')`, f.policy, layer); err != nil {
		t.Fatal(err)
	}
	var run int64
	if err := owner.QueryRow(ctx, `INSERT INTO strata.ingest_runs (layer_id, status, finished_at) VALUES ($1, 'done', now()) RETURNING id`, layer).Scan(&run); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec(ctx, `INSERT INTO strata.ingest_files (run_id, path, action, status, error) VALUES
		($1, 'policy.md', 'new', 'ok', NULL), ($1, 'broken.pdf', 'new', 'failed', 'not a PDF'),
		($1, 'diagram.png', 'skipped', 'skipped', 'unsupported file type .png')`, run); err != nil {
		t.Fatal(err)
	}
}

func (f exploreFixture) get(t *testing.T, path string, out any) response {
	t.Helper()
	r := do(t, http.MethodGet, f.url+path, readerToken, nil, nil)
	if out != nil && r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, r.body)
		}
	}
	return r
}

// TestExploreLayers: GET /v1/layers shows the layer's settings, counts,
// pending vectors and last run, to a caller with a token only.
func TestExploreLayers(t *testing.T) {
	f := newExploreFixture(t)
	if r := do(t, http.MethodGet, f.url+"/v1/layers", "", nil, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d %s", r.status, r.body)
	}
	var page LayersPage
	if r := f.get(t, "/v1/layers", &page); r.status != http.StatusOK {
		t.Fatalf("GET /v1/layers: %d %s", r.status, r.body)
	}
	if page.Total != 1 || len(page.Layers) != 1 || page.Limit != defaultPageLimit {
		t.Fatalf("page %+v", page)
	}
	l := page.Layers[0]
	if l.Name != "ops" || l.Description != "Operations handbook" || !slices.Equal(l.Routes, []string{"leave", "holiday"}) || l.AnswerMode != "extractive" {
		t.Errorf("layer %+v", l)
	}
	// Five stored documents, one failed; two chunks, both without a vector
	// since no model has embedded the layer.
	if l.Documents != 5 || l.FailedFiles != 1 || l.Chunks != 2 || l.PendingVectors != 2 {
		t.Errorf("counts: documents %d failed %d chunks %d pending %d", l.Documents, l.FailedFiles, l.Chunks, l.PendingVectors)
	}
	if l.LastRun == nil || l.LastRun.Status != "done" || l.LastRun.Files != 3 || l.LastRun.Failed != 1 || l.LastRun.Skipped != 1 || l.LastRun.FinishedAt == nil {
		t.Errorf("last run %+v", l.LastRun)
	}
	if r := f.get(t, "/v1/layers?offset=1", &page); r.status != http.StatusOK || len(page.Layers) != 0 || page.Total != 1 {
		t.Errorf("offset past the end: %d %+v", r.status, page)
	}
}

// TestExploreLayerFiles: the files with their state, failed ones with the
// error, warnings, and the skipped files with the reasons; failed=true
// keeps only the problems, as `ingestd status --failed` does.
func TestExploreLayerFiles(t *testing.T) {
	f := newExploreFixture(t)
	var all, problems LayerFilesPage
	f.get(t, "/v1/layers/ops/files", &all)
	if all.Total != 6 || len(all.Files) != 6 {
		t.Fatalf("all files: %+v", all)
	}
	f.get(t, "/v1/layers/ops/files?failed=true", &problems)
	var got []string
	for _, x := range problems.Files {
		got = append(got, x.File+" "+x.Status+" "+x.Error+" "+strings.Join(x.Warnings, ";"))
	}
	want := []string{"broken.pdf failed not a PDF: no %PDF header ", "notes.md ok  a table had no header row"}
	if !slices.Equal(got, want) || problems.Total != 2 {
		t.Errorf("failed=true: %q (total %d), want %q", got, problems.Total, want)
	}
	if len(problems.Skipped) != 1 || problems.Skipped[0] != (store.SkippedFile{File: "diagram.png", Reason: "unsupported file type .png"}) || problems.SkippedTotal != 1 {
		t.Errorf("skipped %+v (total %d)", problems.Skipped, problems.SkippedTotal)
	}
	var paged LayerFilesPage
	f.get(t, "/v1/layers/ops/files?limit=2&offset=2", &paged)
	if paged.Total != 6 || len(paged.Files) != 2 || paged.Files[0].File != all.Files[2].File {
		t.Errorf("limit=2&offset=2: %+v", paged)
	}
}

// TestExploreLayerDocuments: date, date_source, replaced_by and archived,
// and no failed file.
func TestExploreLayerDocuments(t *testing.T) {
	f := newExploreFixture(t)
	var page LayerDocumentsPage
	f.get(t, "/v1/layers/ops/documents", &page)
	by := map[string]store.DocumentSummary{}
	for _, d := range page.Documents {
		by[d.File] = d
	}
	if page.Total != 5 || len(by) != 5 {
		t.Fatalf("documents %+v", page)
	}
	if _, ok := by["broken.pdf"]; ok {
		t.Errorf("a failed file is listed as a document")
	}
	p := by["policy.md"]
	if p.ID != f.policy || p.Date == nil || *p.Date != "2026-01-05" || p.DateSource == nil || *p.DateSource != "front_matter" ||
		p.ReplacedBy != "policy-2027.md" || p.Archived || p.Chunks != 2 {
		t.Errorf("policy.md: %+v", p)
	}
	if !by["old/2019.md"].Archived || by["notes.md"].Archived || by["notes.md"].Date != nil {
		t.Errorf("archived or date wrong: %+v %+v", by["old/2019.md"], by["notes.md"])
	}
	if by["scan.pdf"].Pages == nil || *by["scan.pdf"].Pages != 2 {
		t.Errorf("scan.pdf pages: %+v", by["scan.pdf"])
	}
}

// TestExploreDocument: the text as numbered lines with their byte offsets,
// the sections as a tree with line spans, and the pages with their origin.
func TestExploreDocument(t *testing.T) {
	f := newExploreFixture(t)
	var d DocumentView
	if r := f.get(t, fmt.Sprintf("/v1/documents/%d", f.policy), &d); r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if d.Layer != "ops" || d.File != "policy.md" || d.ReplacedBy != "policy-2027.md" || d.Truncated || d.TextOrigin != "text" {
		t.Errorf("document %+v", d.DocumentSummary)
	}
	if strings.Join(d.Lines, "\n") != policyBody || d.Bytes != len(policyBody) || len(d.LineOffsets) != len(d.Lines) {
		t.Fatalf("lines %q offsets %v", d.Lines, d.LineOffsets)
	}
	for i, off := range d.LineOffsets {
		if !strings.HasPrefix(policyBody[off:], d.Lines[i]) {
			t.Errorf("line %d does not start at byte %d", i+1, off)
		}
	}
	if len(d.Sections) != 2 || len(d.Sections[1].Children) != 1 {
		t.Fatalf("section tree %+v", d.Sections)
	}
	sub := d.Sections[1].Children[0]
	// "2.1 Carry-over" is line 10 of the file; the section runs to line 11.
	if sub.ClausePath != "2 Leave > 2.1 Carry-over" || sub.LineStart != 10 || sub.LineEnd != 11 || d.Sections[0].LineStart != 6 || d.Sections[0].LineEnd != 8 {
		t.Errorf("sections: 1 at %d-%d, 2.1 %q at %d-%d", d.Sections[0].LineStart, d.Sections[0].LineEnd, sub.ClausePath, sub.LineStart, sub.LineEnd)
	}
	var scan DocumentView
	f.get(t, fmt.Sprintf("/v1/documents/d%d", f.scan), &scan)
	if scan.TextOrigin != "mixed" || len(scan.PageSpans) != 2 || scan.PageSpans[1].TextOrigin != "ocr" || scan.PageSpans[1].LineStart != 2 ||
		scan.PageSpans[1].OCRConfidence == nil {
		t.Errorf("scan.pdf: origin %q pages %+v", scan.TextOrigin, scan.PageSpans)
	}
}

// TestExploreBadRequests: wrong parameters are 400 naming the argument,
// unknown layers and documents 404, a failed document 404.
func TestExploreBadRequests(t *testing.T) {
	f := newExploreFixture(t)
	for path, want := range map[string]struct {
		status int
		arg    string
	}{
		"/v1/documents/abc":                                    {400, "id"},
		"/v1/documents/0":                                      {400, "id"},
		"/v1/documents/-3":                                     {400, "id"},
		"/v1/documents/99999999999999999999":                   {400, "id"},
		"/v1/documents/999999":                                 {404, ""},
		fmt.Sprintf("/v1/documents/%d", f.failed):              {404, ""},
		"/v1/layers/no_such/files":                             {404, ""},
		"/v1/layers/no_such/documents":                         {404, ""},
		"/v1/layers/-bad/files":                                {400, "name"},
		"/v1/layers/" + strings.Repeat("a", 65) + "/documents": {400, "name"},
		"/v1/layers?limit=0":                                   {400, "limit"},
		"/v1/layers?limit=501":                                 {400, "limit"},
		"/v1/layers?limit=ten":                                 {400, "limit"},
		"/v1/layers/ops/documents?offset=-1":                   {400, "offset"},
		"/v1/layers/ops/files?failed=maybe":                    {400, "failed"},
	} {
		r := f.get(t, path, nil)
		if r.status != want.status {
			t.Errorf("GET %s: %d, want %d: %s", path, r.status, want.status, r.body)
			continue
		}
		if e := r.errorBody(t); e.Argument != want.arg {
			t.Errorf("GET %s: argument %q, want %q (%s)", path, e.Argument, want.arg, e.Message)
		}
	}
	if r := do(t, http.MethodPost, f.url+"/v1/layers", readerToken, nil, nil); r.status != http.StatusMethodNotAllowed && r.status != http.StatusNotFound {
		t.Errorf("POST /v1/layers: %d", r.status)
	}
}

// TestExploreSchemasMatchGoTypes: the hand-written response schemas of the
// explorer's routes name exactly the JSON fields of their Go types,
// embedded structs included.
func TestExploreSchemasMatchGoTypes(t *testing.T) {
	b, err := openAPIDocument(toolDefs)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]reflect.Type{
		"LayersPage": reflect.TypeFor[LayersPage](), "LayerSummary": reflect.TypeFor[store.LayerSummary](),
		"RunInfo": reflect.TypeFor[store.RunInfo](), "LayerFilesPage": reflect.TypeFor[LayerFilesPage](),
		"FileState": reflect.TypeFor[store.FileState](), "SkippedFile": reflect.TypeFor[store.SkippedFile](),
		"LayerDocumentsPage": reflect.TypeFor[LayerDocumentsPage](), "DocumentSummary": reflect.TypeFor[store.DocumentSummary](),
		"DocumentView": reflect.TypeFor[DocumentView](), "SectionNode": reflect.TypeFor[SectionNode](), "PageView": reflect.TypeFor[PageView](),
	} {
		schema := lookup(doc, "#/components/schemas/"+name)
		props, _ := schema["properties"].(map[string]any)
		var fields []string
		for _, f := range reflect.VisibleFields(typ) {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && !f.Anonymous && tag != "-" && tag != "" {
				fields = append(fields, tag)
			}
		}
		var documented []string
		for p := range props {
			documented = append(documented, p)
		}
		slices.Sort(fields)
		slices.Sort(documented)
		if !slices.Equal(fields, documented) {
			t.Errorf("%s: documented %v, Go type has %v", name, documented, fields)
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range explorePaths {
		if op, _ := paths[p].(map[string]any); op["get"] == nil {
			t.Errorf("%s is not documented", p)
		}
	}
}

// TestExplorerPagesAreGuarded: / redirects to /ui/; the pages carry the
// CSP; and without tokens a client that is not on loopback gets no page,
// as it gets no API answer (the server's guard, one access path).
func TestExplorerPagesAreGuarded(t *testing.T) {
	ts := newTestServer(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(ts.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	r := do(t, http.MethodGet, ts.url+"/ui/doc/7", "", nil, nil)
	if r.status != http.StatusOK || r.header.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
		t.Errorf("GET /ui/doc/7 with tokens configured and none given: %d, CSP %q (the page itself holds no data)", r.status, r.header.Get("Content-Security-Policy"))
	}
	open := newTestServer(t, func(c *Config, _ *Deps) { c.Tokens = &Tokens{} })
	for _, remote := range []string{"192.0.2.7:40000", "127.0.0.1:40000"} {
		req := httptest.NewRequest(http.MethodGet, "/ui/", nil)
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		open.Handler().ServeHTTP(rec, req)
		want := http.StatusOK
		if !strings.HasPrefix(remote, "127.") {
			want = http.StatusForbidden
		}
		if rec.Code != want {
			t.Errorf("no tokens, GET /ui/ from %s: %d, want %d", remote, rec.Code, want)
		}
	}
}
