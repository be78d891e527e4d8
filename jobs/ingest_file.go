package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// IngestFileArgs asks for one file of a layer to be parsed and stored.
type IngestFileArgs struct {
	LayerID int64  `json:"layer_id"`
	RunID   int64  `json:"run_id"`
	Path    string `json:"path"` // relative to the layer root, slash-separated
}

// Kind is the River job kind.
func (IngestFileArgs) Kind() string { return "ingest_file" }

// InsertOpts bounds the retries of a transient failure. The walk sets each
// file's priority (filePriority).
func (IngestFileArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, Queue: QueueIngest, Priority: priorityBacklog}
}

// IngestFileWorker runs IngestFileArgs jobs.
type IngestFileWorker struct {
	river.WorkerDefaults[IngestFileArgs]
	pool     *pgxpool.Pool
	pipeline Pipeline
	logger   *slog.Logger
	model    string // embedding model to enqueue new chunks for; "" when none
}

// Timeout bounds the work on one file: a pathological PDF cannot stall a layer.
func (w *IngestFileWorker) Timeout(*river.Job[IngestFileArgs]) time.Duration { return 15 * time.Minute }

// permanentError marks a failure that will recur on the same bytes: the file
// is recorded as failed and the job is not retried.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(format string, a ...any) error {
	return &permanentError{fmt.Errorf(format, a...)}
}

// fileFacts is what was read of the file before parsing.
type fileFacts struct {
	size  int64
	mtime time.Time
	sha   []byte
	data  []byte
}

// Work parses one file and replaces its document, sections and chunks.
func (w *IngestFileWorker) Work(ctx context.Context, job *river.Job[IngestFileArgs]) error {
	a := job.Args
	layer, err := getLayerByID(ctx, w.pool, a.LayerID)
	if errors.Is(err, ErrLayerNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	full := filepath.Join(layer.Root, filepath.FromSlash(a.Path))
	facts, err := readFile(full, w.pipeline.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		// Deleted between the walk and now: nothing to store, and whatever
		// was stored for it is gone too.
		if err := w.forget(ctx, layer.ID, a); err != nil {
			return err
		}
		return river.JobCancel(fmt.Errorf("file %s disappeared before it was read", a.Path))
	}
	if err != nil {
		return w.fail(ctx, job, layer.ID, facts, err)
	}

	doc, secs, chunks, err := w.process(ctx, full, facts, layer.ChunkSize)
	if err != nil {
		return w.fail(ctx, job, layer.ID, facts, err)
	}
	n, err := storeDocument(ctx, w.pool, layer.ID, a.Path, facts, doc, secs, chunks, w.pipeline,
		func(tx pgx.Tx, docID int64, inserted int) error {
			model := layer.LayerModel(w.model)
			if inserted == 0 || model == "" {
				return nil
			}
			client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
			if err != nil {
				return err
			}
			_, err = client.InsertTx(ctx, tx, EmbedArgs{LayerID: layer.ID, DocumentID: docID, Model: model}, nil)
			return err
		})
	if err != nil {
		return fmt.Errorf("store %s: %w", a.Path, err)
	}
	return w.finish(ctx, a, schema.FileOK, "", doc.Warnings, n)
}

// process runs the pipeline on the file's bytes. A panic in any stage fails
// this file only.
func (w *IngestFileWorker) process(ctx context.Context, full string, facts fileFacts, chunkSize int) (doc *schema.ParsedDoc, secs []schema.Section, chunks []schema.Chunk, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = permanent("the parser crashed on this file: %v", r)
		}
	}()
	doc, err = w.pipeline.Parse(ctx, full, facts.data, facts.mtime)
	if err != nil {
		if w.pipeline.IsPermanent != nil && w.pipeline.IsPermanent(err) {
			return nil, nil, nil, &permanentError{err}
		}
		return nil, nil, nil, err
	}
	if w.pipeline.Structure != nil {
		secs = w.pipeline.Structure(doc)
	}
	chunks = w.pipeline.Chunk(doc, secs, chunkSize)
	return doc, secs, chunks, nil
}

// fail records a failed file. A permanent failure, or a transient one on its
// last attempt, is stored on the document and ends the job; otherwise the
// error goes back to River for a retry.
func (w *IngestFileWorker) fail(ctx context.Context, job *river.Job[IngestFileArgs], layerID int64, facts fileFacts, cause error) error {
	var pe *permanentError
	if !errors.As(cause, &pe) && job.Attempt < job.MaxAttempts {
		return cause
	}
	msg := cause.Error()
	if err := recordFailure(ctx, w.pool, layerID, job.Args.Path, facts, msg); err != nil {
		return fmt.Errorf("record failure of %s: %w", job.Args.Path, err)
	}
	if err := w.finish(ctx, job.Args, schema.FileFailed, msg, nil, 0); err != nil {
		return err
	}
	if w.logger != nil {
		w.logger.Info("file failed", "path", job.Args.Path, "error", msg)
	}
	return river.JobCancel(cause)
}

// forget removes a vanished file's document and marks it in the run.
func (w *IngestFileWorker) forget(ctx context.Context, layerID int64, a IngestFileArgs) error {
	if _, err := w.pool.Exec(ctx, `DELETE FROM strata.documents WHERE layer_id = $1 AND path = $2`, layerID, a.Path); err != nil {
		return fmt.Errorf("forget %s: %w", a.Path, err)
	}
	return w.finish(ctx, a, schema.FileSkipped, "file disappeared before it was read", nil, 0)
}

// finish records the file's outcome in the run and closes the run when no
// file is left queued. The check runs after the file's own commit, so the
// last file to finish always sees every other one finished.
func (w *IngestFileWorker) finish(ctx context.Context, a IngestFileArgs, status schema.FileStatus, errText string, warnings []string, chunks int) error {
	var e *string
	if errText != "" {
		e = &errText
	}
	if _, err := w.pool.Exec(ctx, `UPDATE strata.ingest_files SET status = $3, error = $4, warnings = $5,
		chunks = $6, updated_at = now() WHERE run_id = $1 AND path = $2`,
		a.RunID, a.Path, status, e, nonNil(warnings), chunks); err != nil {
		return fmt.Errorf("record outcome of %s: %w", a.Path, err)
	}
	return closeRunIfDone(ctx, w.pool, a.RunID)
}

// closeRunIfDone closes the run when no file of it is left queued, and
// then packs its layer's postings (PackPostings).
func closeRunIfDone(ctx context.Context, pool *pgxpool.Pool, runID int64) error {
	var layerID int64
	err := pool.QueryRow(ctx, `UPDATE strata.ingest_runs SET status = $2, finished_at = now()
		WHERE id = $1 AND status = $3
		AND NOT EXISTS (SELECT 1 FROM strata.ingest_files WHERE run_id = $1 AND status = 'queued')
		RETURNING layer_id`,
		runID, schema.RunDone, schema.RunRunning).Scan(&layerID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("close run %d: %w", runID, err)
	}
	return PackPostings(ctx, pool, layerID)
}

// PackPostings merges the layer's new postings into its posting lists
// (migration 0028), one statement, so that a crash leaves either.
func PackPostings(ctx context.Context, pool *pgxpool.Pool, layerID int64) error {
	if _, err := pool.Exec(ctx, `SELECT strata.pack_postings($1)`, layerID); err != nil {
		return fmt.Errorf("pack the postings of layer %d: %w", layerID, err)
	}
	return nil
}

func readFile(full string, limit int64) (fileFacts, error) {
	var facts fileFacts
	f, err := os.Open(full)
	if errors.Is(err, fs.ErrNotExist) {
		return facts, err
	}
	if err != nil {
		return facts, permanent("cannot open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return facts, permanent("cannot stat: %w", err)
	}
	facts.size, facts.mtime = fi.Size(), fi.ModTime()
	if limit > 0 && fi.Size() > limit {
		return facts, permanent("file is %d bytes, over the limit of %d bytes", fi.Size(), limit)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return facts, permanent("cannot read: %w", err)
	}
	sum := sha256.Sum256(data)
	facts.data, facts.sha, facts.size = data, sum[:], int64(len(data))
	return facts, nil
}

// recordFailure stores the file as failed. A document that was readable
// before and fails now keeps nothing of its last good version: its chunks
// (and, through the triggers on chunks, their postings and lexical
// statistics), sections and pages are deleted in the same transaction that
// records the failure, so nothing stale stays searchable and no ref points
// into text that is no longer stored. The failure stays visible in
// 'ingestd status'.
func recordFailure(ctx context.Context, pool *pgxpool.Pool, layerID int64, rel string, facts fileFacts, msg string) error {
	var mtime *time.Time
	var size *int64
	if !facts.mtime.IsZero() {
		t := truncMicro(facts.mtime)
		mtime, size = &t, &facts.size
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var docID int64
		if err := tx.QueryRow(ctx, `
			INSERT INTO strata.documents (layer_id, path, size, mtime, sha256, status, error, body)
			VALUES ($1, $2, $3, $4, $5, $7, $6, NULL)
			ON CONFLICT (layer_id, path) DO UPDATE SET size = EXCLUDED.size, mtime = EXCLUDED.mtime,
				sha256 = EXCLUDED.sha256, status = EXCLUDED.status, error = EXCLUDED.error, body = NULL,
				body_start = 0, total_pages = NULL, warnings = '{}', parsed_at = now()
			RETURNING id`,
			layerID, rel, size, mtime, facts.sha, msg, schema.DocFailed).Scan(&docID); err != nil {
			return fmt.Errorf("save failed document: %w", err)
		}
		for _, table := range []string{"chunks", "sections", "pages"} {
			if _, err := tx.Exec(ctx, `DELETE FROM strata.`+table+` WHERE document_id = $1`, docID); err != nil {
				return fmt.Errorf("clear %s of the failed document: %w", table, err)
			}
		}
		return nil
	})
}

// storeDocument replaces a document's text, pages, sections and chunks in one
// transaction. Chunks whose content hash is unchanged keep their row (and so
// their id and vectors); only new text gets new rows. It returns the number
// of chunks.
func storeDocument(ctx context.Context, pool *pgxpool.Pool, layerID int64, rel string, facts fileFacts,
	doc *schema.ParsedDoc, secs []schema.Section, chunks []schema.Chunk, p Pipeline,
	after func(tx pgx.Tx, docID int64, inserted int) error) (int, error) {
	meta := map[string]string{}
	for k, v := range doc.Meta {
		meta[k] = v
	}
	var date *string
	var dateSource *string
	if doc.Date != "" {
		date, dateSource = &doc.Date, &doc.DateSource
	}
	var totalPages *int
	if n := len(doc.Pages); n > 0 {
		totalPages = &n
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var docID int64
		err := tx.QueryRow(ctx, `
			INSERT INTO strata.documents (layer_id, path, size, mtime, sha256, status, error, warnings, format,
				title, body, body_start, doc_date, date_source, supersedes, meta, total_pages, chunker_version, parsed_at, identity)
			VALUES ($1, $2, $3, $4, $5, $17, NULL, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, now(), $18)
			ON CONFLICT (layer_id, path) DO UPDATE SET size = EXCLUDED.size, mtime = EXCLUDED.mtime,
				sha256 = EXCLUDED.sha256, status = EXCLUDED.status, error = NULL, warnings = EXCLUDED.warnings,
				format = EXCLUDED.format, title = EXCLUDED.title, body = EXCLUDED.body,
				body_start = EXCLUDED.body_start, doc_date = EXCLUDED.doc_date,
				date_source = EXCLUDED.date_source, supersedes = EXCLUDED.supersedes, meta = EXCLUDED.meta,
				total_pages = EXCLUDED.total_pages, chunker_version = EXCLUDED.chunker_version, parsed_at = now(),
				identity = EXCLUDED.identity
			RETURNING id`,
			layerID, rel, facts.size, truncMicro(facts.mtime), facts.sha, nonNil(doc.Warnings), doc.Format,
			doc.Title, doc.Text, doc.BodyStart, date, dateSource, nonNil(doc.Supersedes), meta, totalPages,
			p.Version, schema.DocOK, nonNil(structure.DocumentKeys(rel, doc.Title, doc.Meta, doc.Text))).Scan(&docID)
		if err != nil {
			return fmt.Errorf("save document: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM strata.pages WHERE document_id = $1`, docID); err != nil {
			return fmt.Errorf("clear pages: %w", err)
		}
		if len(doc.Pages) > 0 {
			rows := make([][]any, len(doc.Pages))
			for i, pg := range doc.Pages {
				var conf *float64
				if pg.TextOrigin == schema.OriginOCR {
					c := pg.OCRConfidence
					conf = &c
				}
				rows[i] = []any{docID, pg.Number, pg.Start, pg.End, originOr(pg.TextOrigin), conf}
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"strata", "pages"},
				[]string{"document_id", "number", "start_off", "end_off", "text_origin", "ocr_confidence"},
				pgx.CopyFromRows(rows)); err != nil {
				return fmt.Errorf("save pages: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM strata.sections WHERE document_id = $1`, docID); err != nil {
			return fmt.Errorf("clear sections: %w", err)
		}
		if len(secs) > 0 {
			rows := make([][]any, len(secs))
			for i, s := range secs {
				var parent *int
				if s.Parent >= 0 {
					pp := s.Parent
					parent = &pp
				}
				var key *string
				if p.SectionKey != nil {
					if k := p.SectionKey(s); k != "" {
						key = &k
					}
				}
				rows[i] = []any{docID, layerID, i, parent, s.Number, s.Title, s.Kind, s.Level,
					s.Start, s.HeadingEnd, s.End, s.Path, key}
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"strata", "sections"},
				[]string{"document_id", "layer_id", "ord", "parent_ord", "number", "title", "kind", "level",
					"start_off", "heading_end", "end_off", "clause_path", "ref_key"},
				pgx.CopyFromRows(rows)); err != nil {
				return fmt.Errorf("save sections: %w", err)
			}
		}
		inserted, err := replaceChunks(ctx, tx, docID, layerID, doc, chunks, meta)
		if err != nil {
			return err
		}
		if after != nil {
			return after(tx, docID, inserted)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(chunks), nil
}

// replaceChunks matches the new chunks to the stored ones by content hash:
// a match keeps its row and gets its new position; stored chunks without a
// match are deleted; new text is inserted. It returns how many chunks it
// inserted.
func replaceChunks(ctx context.Context, tx pgx.Tx, docID, layerID int64, doc *schema.ParsedDoc, chunks []schema.Chunk, meta map[string]string) (int, error) {
	rows, err := tx.Query(ctx, `SELECT id, content_hash FROM strata.chunks WHERE document_id = $1 ORDER BY ord`, docID)
	if err != nil {
		return 0, fmt.Errorf("read stored chunks: %w", err)
	}
	oldByHash := map[string][]int64{}
	var oldIDs []int64
	var id int64
	var h []byte
	if _, err := pgx.ForEachRow(rows, []any{&id, &h}, func() error {
		oldByHash[string(h)] = append(oldByHash[string(h)], id)
		oldIDs = append(oldIDs, id)
		return nil
	}); err != nil {
		return 0, fmt.Errorf("read stored chunks: %w", err)
	}

	kept := map[int64]bool{}
	var insert [][]any
	for _, c := range chunks {
		hash, err := hex.DecodeString(c.Hash)
		if err != nil || len(hash) == 0 {
			sum := sha256.Sum256([]byte(c.Text))
			hash = sum[:]
		}
		origin := schema.OriginText
		md := map[string]string{}
		for k, v := range meta {
			md[k] = v
		}
		if c.Page > 0 {
			md["page"] = strconv.Itoa(c.Page)
			md["total_pages"] = strconv.Itoa(len(doc.Pages))
			if c.Page <= len(doc.Pages) && doc.Pages[c.Page-1].TextOrigin == schema.OriginOCR {
				origin = schema.OriginOCR
			}
		}
		var page *int
		if c.Page > 0 {
			pg := c.Page
			page = &pg
		}
		if ids := oldByHash[string(hash)]; len(ids) > 0 {
			id := ids[0]
			oldByHash[string(hash)] = ids[1:]
			kept[id] = true
			if _, err := tx.Exec(ctx, `UPDATE strata.chunks SET ord = $2, start_off = $3, end_off = $4,
				line_start = $5, line_end = $6, page = $7, clause_path = $8, text_origin = $9, metadata = $10
				WHERE id = $1`, id, c.Ordinal, c.Start, c.End, c.LineStart, c.LineEnd, page, c.ClausePath, origin, md); err != nil {
				return 0, fmt.Errorf("update chunk %d: %w", id, err)
			}
			continue
		}
		insert = append(insert, []any{docID, layerID, c.Ordinal, c.Start, c.End, c.LineStart, c.LineEnd,
			page, c.ClausePath, origin, c.Text, hash, md})
	}
	var drop []int64
	for _, id := range oldIDs {
		if !kept[id] {
			drop = append(drop, id)
		}
	}
	if len(drop) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM strata.chunks WHERE id = ANY($1)`, drop); err != nil {
			return 0, fmt.Errorf("delete old chunks: %w", err)
		}
	}
	if len(insert) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"strata", "chunks"},
			[]string{"document_id", "layer_id", "ord", "start_off", "end_off", "line_start", "line_end",
				"page", "clause_path", "text_origin", "text", "content_hash", "metadata"},
			pgx.CopyFromRows(insert)); err != nil {
			return 0, fmt.Errorf("insert chunks: %w", err)
		}
	}
	return len(insert), nil
}

func originOr(o string) string {
	if o == "" {
		return schema.OriginText
	}
	return o
}
