package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

// The explorer's reads (GET /v1/layers, /v1/layers/{name}/files,
// /v1/layers/{name}/documents, /v1/documents/{id}): what ingestd keeps,
// as `ingestd status` reports it, read under queryd's read-only role.

// LayerSummary is one layer as the Layers page shows it.
type LayerSummary struct {
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	Routes         []string `json:"routes"`
	AnswerMode     string   `json:"answer_mode"`
	EmbeddingModel string   `json:"embedding_model"`
	Preset         string   `json:"preset"`
	ChunkSize      int      `json:"chunk_size"`
	ArchivedGlobs  []string `json:"archived_globs"`
	Documents      int      `json:"documents"`
	FailedFiles    int      `json:"failed_files"`
	Chunks         int      `json:"chunks"`
	// PendingVectors are the chunks without a vector of the layer's
	// embedding model (all of them when no model has run).
	PendingVectors int      `json:"pending_vectors"`
	LastRun        *RunInfo `json:"last_run"`
}

// RunInfo is a layer's last ingest run. Status is as stored: a run whose
// process was killed stays "running" here; `ingestd status` judges it by
// its jobs, which queryd cannot see.
type RunInfo struct {
	ID         int64      `json:"id"`
	Trigger    string     `json:"trigger"`
	Status     string     `json:"status"`
	Error      string     `json:"error,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Files      int        `json:"files"`
	Failed     int        `json:"failed"`
	Skipped    int        `json:"skipped"`
}

// Page bounds a list: at most Limit rows from Offset.
type Page struct{ Limit, Offset int }

// ExploreLayers returns a page of the layers, by name, with their counts
// and last runs, and how many layers there are.
func (c *Corpus) ExploreLayers(ctx context.Context, p Page) ([]LayerSummary, int, error) {
	rows, err := c.db.Query(ctx, `
		SELECT l.name, l.description, l.routing_patterns, l.answer_mode, coalesce(l.embedding_model, ''), l.preset,
			l.chunk_size, l.archived_globs,
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'ok'),
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'failed'),
			(SELECT count(*) FROM strata.chunks c WHERE c.layer_id = l.id),
			(SELECT count(*) FROM strata.chunks c WHERE c.layer_id = l.id AND (l.embedding_model IS NULL OR NOT EXISTS (
				SELECT 1 FROM strata.embeddings e WHERE e.model = l.embedding_model AND e.content_hash = c.content_hash))),
			r.id, r.trigger, r.status, coalesce(r.error, ''), r.started_at, r.finished_at,
			(SELECT count(*) FROM strata.ingest_files f WHERE f.run_id = r.id),
			(SELECT count(*) FROM strata.ingest_files f WHERE f.run_id = r.id AND f.status = 'failed'),
			(SELECT count(*) FROM strata.ingest_files f WHERE f.run_id = r.id AND f.status = 'skipped'),
			count(*) OVER ()
		FROM strata.layers l
		LEFT JOIN LATERAL (SELECT * FROM strata.ingest_runs r WHERE r.layer_id = l.id ORDER BY r.id DESC LIMIT 1) r ON true
		ORDER BY l.name LIMIT $1 OFFSET $2`, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read layers: %w", err)
	}
	total := 0
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LayerSummary, error) {
		var l LayerSummary
		var runID *int64
		var r RunInfo
		var trigger, status *string
		var started *time.Time
		err := row.Scan(&l.Name, &l.Description, &l.Routes, &l.AnswerMode, &l.EmbeddingModel, &l.Preset, &l.ChunkSize,
			&l.ArchivedGlobs, &l.Documents, &l.FailedFiles, &l.Chunks, &l.PendingVectors,
			&runID, &trigger, &status, &r.Error, &started, &r.FinishedAt, &r.Files, &r.Failed, &r.Skipped, &total)
		if runID != nil {
			r.ID, r.Trigger, r.Status, r.StartedAt = *runID, *trigger, *status, *started
			l.LastRun = &r
		}
		return l, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read layers: %w", err)
	}
	if total == 0 && p.Offset > 0 {
		total, err = c.count(ctx, `SELECT count(*) FROM strata.layers`)
	}
	return out, total, err
}

func (c *Corpus) count(ctx context.Context, sql string, args ...any) (int, error) {
	var n int
	if err := c.db.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}

// layerID returns the id of the layer name, a not-found error when there is
// none.
func (c *Corpus) layerID(ctx context.Context, name string) (int64, []string, error) {
	var id int64
	var archived []string
	err := c.db.QueryRow(ctx, `SELECT id, archived_globs FROM strata.layers WHERE name = $1`, name).Scan(&id, &archived)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, qerr.NotFoundf("no layer named %q", name)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read layer %s: %w", name, err)
	}
	return id, archived, nil
}

// FileState is one stored file of a layer: ok or failed, with its
// warnings and its error (what `ingestd status --layer L` lists).
type FileState struct {
	DocumentID int64     `json:"document_id"`
	File       string    `json:"file"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	Warnings   []string  `json:"warnings"`
	Chunks     int       `json:"chunks"`
	ParsedAt   time.Time `json:"parsed_at"`
}

// SkippedFile is a file the layer's last run skipped, with the reason: it
// never became a document.
type SkippedFile struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// MaxSkipped bounds the skipped files LayerFiles lists; SkippedTotal
// counts them all.
const MaxSkipped = 200

// LayerFiles is a page of a layer's files, and the files its last run
// skipped.
type LayerFiles struct {
	Files        []FileState   `json:"files"`
	Total        int           `json:"total"`
	Skipped      []SkippedFile `json:"skipped"`
	SkippedTotal int           `json:"skipped_total"`
}

// LayerFiles reads a page of the layer's files by path; with problemsOnly,
// only failed files and files with warnings (`ingestd status --failed`).
func (c *Corpus) LayerFiles(ctx context.Context, layer string, problemsOnly bool, p Page) (LayerFiles, error) {
	id, _, err := c.layerID(ctx, layer)
	if err != nil {
		return LayerFiles{}, err
	}
	out := LayerFiles{Files: []FileState{}, Skipped: []SkippedFile{}}
	rows, err := c.db.Query(ctx, `
		SELECT d.id, d.path, d.status, coalesce(d.error, ''), d.warnings,
			(SELECT count(*) FROM strata.chunks c WHERE c.document_id = d.id), d.parsed_at, count(*) OVER ()
		FROM strata.documents d
		WHERE d.layer_id = $1 AND (NOT $2 OR d.status = 'failed' OR cardinality(d.warnings) > 0)
		ORDER BY d.path LIMIT $3 OFFSET $4`, id, problemsOnly, p.Limit, p.Offset)
	if err != nil {
		return out, fmt.Errorf("read the files of layer %s: %w", layer, err)
	}
	var f FileState
	if _, err := pgx.ForEachRow(rows, []any{&f.DocumentID, &f.File, &f.Status, &f.Error, &f.Warnings, &f.Chunks, &f.ParsedAt, &out.Total}, func() error {
		out.Files = append(out.Files, f)
		return nil
	}); err != nil {
		return out, fmt.Errorf("read the files of layer %s: %w", layer, err)
	}
	if out.Total == 0 && p.Offset > 0 {
		if out.Total, err = c.count(ctx, `SELECT count(*) FROM strata.documents d
			WHERE d.layer_id = $1 AND (NOT $2 OR d.status = 'failed' OR cardinality(d.warnings) > 0)`, id, problemsOnly); err != nil {
			return out, err
		}
	}
	rows, err = c.db.Query(ctx, `
		SELECT f.path, coalesce(f.error, ''), count(*) OVER ()
		FROM (SELECT id FROM strata.ingest_runs r WHERE r.layer_id = $1 ORDER BY id DESC LIMIT 1) r
		JOIN strata.ingest_files f ON f.run_id = r.id AND f.status = 'skipped'
		ORDER BY f.path LIMIT $2`, id, MaxSkipped)
	if err != nil {
		return out, fmt.Errorf("read the skipped files of layer %s: %w", layer, err)
	}
	var s SkippedFile
	if _, err := pgx.ForEachRow(rows, []any{&s.File, &s.Reason, &out.SkippedTotal}, func() error {
		out.Skipped = append(out.Skipped, s)
		return nil
	}); err != nil {
		return out, fmt.Errorf("read the skipped files of layer %s: %w", layer, err)
	}
	return out, nil
}

// DocumentSummary is one document of a layer as its list shows it.
type DocumentSummary struct {
	ID     int64  `json:"id"`
	File   string `json:"file"`
	Title  string `json:"title"`
	Format string `json:"format"`
	// Date is YYYY-MM-DD; both it and DateSource are null when unknown.
	Date       *string `json:"date"`
	DateSource *string `json:"date_source"`
	ReplacedBy string  `json:"replaced_by"`
	Archived   bool    `json:"archived"`
	Pages      *int    `json:"pages"`
	Chunks     int     `json:"chunks"`
}

// docColumns are what a DocumentSummary is read from (with l the layer and
// d the document).
const docColumns = `d.id, d.path, d.title, coalesce(d.format, ''), to_char(d.doc_date, 'YYYY-MM-DD'), d.date_source,
	COALESCE((SELECT o.path FROM strata.documents o
		WHERE o.layer_id = d.layer_id AND o.status = 'ok' AND o.supersedes @> ARRAY[d.path]
		ORDER BY o.doc_date DESC NULLS LAST, o.path LIMIT 1), ''),
	d.total_pages, (SELECT count(*) FROM strata.chunks c WHERE c.document_id = d.id)`

func scanDoc(row pgx.Row, d *DocumentSummary) error {
	return row.Scan(&d.ID, &d.File, &d.Title, &d.Format, &d.Date, &d.DateSource, &d.ReplacedBy, &d.Pages, &d.Chunks)
}

// archived reports whether file matches one of the layer's archived globs
// (matched now, as strata_ask does, so a change of globs needs no ingest).
func archived(globs []string, file string) bool {
	for _, g := range globs {
		if ok, err := doublestar.Match(g, file); err == nil && ok {
			return true
		}
	}
	return false
}

// LayerDocuments reads a page of the layer's stored documents by path.
func (c *Corpus) LayerDocuments(ctx context.Context, layer string, p Page) ([]DocumentSummary, int, error) {
	id, globs, err := c.layerID(ctx, layer)
	if err != nil {
		return nil, 0, err
	}
	total, err := c.count(ctx, `SELECT count(*) FROM strata.documents d WHERE d.layer_id = $1 AND d.status = 'ok'`, id)
	if err != nil {
		return nil, 0, err
	}
	rows, err := c.db.Query(ctx, `SELECT `+docColumns+` FROM strata.documents d
		WHERE d.layer_id = $1 AND d.status = 'ok' ORDER BY d.path LIMIT $2 OFFSET $3`, id, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read the documents of layer %s: %w", layer, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DocumentSummary, error) {
		var d DocumentSummary
		err := scanDoc(row, &d)
		d.Archived = archived(globs, d.File)
		return d, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read the documents of layer %s: %w", layer, err)
	}
	return out, total, nil
}

// DocumentText is one stored document with its structure and pages.
type DocumentText struct {
	DocumentSummary
	Layer    string       `json:"layer"`
	Body     string       `json:"-"`
	Sections []SectionRow `json:"-"`
	Pages    []PageRow    `json:"-"`
	// Truncated is true when Body holds only the first MaxDocumentChars
	// characters of the stored text.
	Truncated bool `json:"-"`
}

// SectionRow is one stored section: byte offsets into the body.
type SectionRow struct {
	Ord, Level             int
	ParentOrd              *int
	Number, Title, Kind    string
	ClausePath             string
	Start, HeadingEnd, End int
}

// PageRow is one page of a PDF: its byte span and where its text came from.
type PageRow struct {
	Number        int
	Start, End    int
	TextOrigin    string
	OCRConfidence *float32
}

// MaxDocumentChars bounds the text Document returns: a longer document's
// text is cut there (DocumentText.Truncated).
const MaxDocumentChars = 4 << 20

// Document reads a stored document with its sections and pages; a
// document that does not exist, or failed to parse, is not found.
func (c *Corpus) Document(ctx context.Context, id int64) (DocumentText, error) {
	var d DocumentText
	var globs []string
	var body *string
	row := c.db.QueryRow(ctx, `SELECT `+docColumns+`, l.name, l.archived_globs, left(d.body, $2), coalesce(char_length(d.body) > $2, false)
		FROM strata.documents d JOIN strata.layers l ON l.id = d.layer_id
		WHERE d.id = $1 AND d.status = 'ok'`, id, MaxDocumentChars)
	err := row.Scan(&d.ID, &d.File, &d.Title, &d.Format, &d.Date, &d.DateSource, &d.ReplacedBy, &d.DocumentSummary.Pages, &d.Chunks,
		&d.Layer, &globs, &body, &d.Truncated)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, qerr.NotFoundf("no document %d", id)
	}
	if err != nil {
		return d, fmt.Errorf("read document %d: %w", id, err)
	}
	d.Archived = archived(globs, d.File)
	if body != nil {
		d.Body = *body
	}
	if d.Sections, err = c.sections(ctx, id); err != nil {
		return d, err
	}
	if d.Pages, err = c.pages(ctx, id); err != nil {
		return d, err
	}
	return d, nil
}

func (c *Corpus) sections(ctx context.Context, id int64) ([]SectionRow, error) {
	rows, err := c.db.Query(ctx, `
		SELECT ord, level, parent_ord, number, title, kind, clause_path, start_off, heading_end, end_off
		FROM strata.sections WHERE document_id = $1 ORDER BY ord`, id)
	if err != nil {
		return nil, fmt.Errorf("read the sections of document %d: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SectionRow, error) {
		var s SectionRow
		err := row.Scan(&s.Ord, &s.Level, &s.ParentOrd, &s.Number, &s.Title, &s.Kind, &s.ClausePath, &s.Start, &s.HeadingEnd, &s.End)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the sections of document %d: %w", id, err)
	}
	return out, nil
}

func (c *Corpus) pages(ctx context.Context, id int64) ([]PageRow, error) {
	rows, err := c.db.Query(ctx, `
		SELECT number, start_off, end_off, text_origin, ocr_confidence
		FROM strata.pages WHERE document_id = $1 ORDER BY number`, id)
	if err != nil {
		return nil, fmt.Errorf("read the pages of document %d: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PageRow, error) {
		var p PageRow
		err := row.Scan(&p.Number, &p.Start, &p.End, &p.TextOrigin, &p.OCRConfidence)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the pages of document %d: %w", id, err)
	}
	return out, nil
}
