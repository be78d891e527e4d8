package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DocInfo is what a citation says about a passage's document beside the
// passage's own place: its date, the file that declares it replaces this
// one, and the layer's archived globs (matched at ask time, so a change to
// the globs needs no new ingest).
type DocInfo struct {
	ID   int64  `db:"id"`
	File string `db:"path"`
	// Date is YYYY-MM-DD, DateSource front_matter or file; both nil when
	// the document has no date.
	Date       *string `db:"date"`
	DateSource *string `db:"date_source"`
	// ReplacedBy is the file of the same layer whose supersedes front
	// matter names this one ("" when none does; the newest when several).
	ReplacedBy    string   `db:"replaced_by"`
	ArchivedGlobs []string `db:"archived_globs"`
	// TextKept is false for a document stored before document text was
	// kept: its refs cannot be read back.
	TextKept bool `db:"text_kept"`
	// TableHeader is a table's first stored line, its column names joined
	// by " | " (parsers/table.go); "" for other documents.
	TableHeader string `db:"table_header"`
}

// tableHeaderSQL is a table document's header line, read from the first
// 64 KiB of its text (d: strata.documents).
const tableHeaderSQL = `split_part(left(coalesce(d.body, ''), 65536), E'\n', 1)`

// Documents returns what citations need about the documents ids, by id.
func (c *Corpus) Documents(ctx context.Context, ids []int64) (map[int64]DocInfo, error) {
	rows, err := c.db.Query(ctx, `
		SELECT d.id, d.path, to_char(d.doc_date, 'YYYY-MM-DD') AS date, d.date_source,
			COALESCE((SELECT o.path FROM strata.documents o
				WHERE o.layer_id = d.layer_id AND o.status = 'ok' AND o.supersedes @> ARRAY[d.path]
				ORDER BY o.doc_date DESC NULLS LAST, o.path LIMIT 1), '') AS replaced_by,
			l.archived_globs, d.body IS NOT NULL AS text_kept,
			CASE WHEN d.format = 'table' THEN `+tableHeaderSQL+` ELSE '' END AS table_header
		FROM strata.documents d
		JOIN strata.layers l ON l.id = d.layer_id
		WHERE d.id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	docs, err := pgx.CollectRows(rows, pgx.RowToStructByName[DocInfo])
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	out := make(map[int64]DocInfo, len(docs))
	for _, d := range docs {
		out[d.ID] = d
	}
	return out, nil
}

// NamesScanChunks is how many chunks of each document, from its start,
// ChunksMatching reads: a contract names its parties at the start, and the
// bound keeps a question that names something from reading every chunk of
// ten long PDFs.
const NamesScanChunks = 200

// ChunksMatching returns the chunks among the first NamesScanChunks of the
// documents ids whose text matches any of the case-insensitive POSIX
// regular expressions patterns, by document then position, at most limit:
// how strata_ask finds the passage of a returned passage's document that
// holds a name the question gives (a contract's parties, named in its
// preamble).
func (c *Corpus) ChunksMatching(ctx context.Context, ids []int64, patterns []string, limit int) ([]Hit, error) {
	if len(ids) == 0 || len(patterns) == 0 {
		return nil, nil
	}
	rows, err := c.db.Query(ctx, `
		SELECT c.id AS chunk_id, c.document_id, l.name AS layer, d.path AS file, c.start_off AS start,
			c.end_off AS "end", c.line_start, c.line_end, c.page, c.clause_path, c.text
		FROM strata.chunks c
		JOIN strata.documents d ON d.id = c.document_id
		JOIN strata.layers l ON l.id = c.layer_id
		WHERE c.document_id = ANY($1) AND c.ord < $4 AND d.status = 'ok' AND c.text ~* ANY($2::text[])
		ORDER BY c.document_id, c.ord
		LIMIT $3`, ids, patterns, limit, NamesScanChunks)
	if err != nil {
		return nil, fmt.Errorf("find the chunks holding names: %w", err)
	}
	hits, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[Hit])
	if err != nil {
		return nil, fmt.Errorf("find the chunks holding names: %w", err)
	}
	return hits, nil
}

// TableDoc is a table document of a layer: its id, file and header line
// (column names joined by " | ").
type TableDoc struct {
	ID     int64  `db:"id"`
	File   string `db:"path"`
	Header string `db:"header"`
}

// TablesOf returns the table documents of the layers, by path, at most
// limit: the columns a question may ask for that the returned rows' tables
// lack.
func (c *Corpus) TablesOf(ctx context.Context, layerIDs []int64, limit int) ([]TableDoc, error) {
	rows, err := c.db.Query(ctx, `
		SELECT d.id, d.path, `+tableHeaderSQL+` AS header
		FROM strata.documents d
		WHERE d.layer_id = ANY($1) AND d.status = 'ok' AND d.format = 'table'
		ORDER BY d.path LIMIT $2`, layerIDs, limit)
	if err != nil {
		return nil, fmt.Errorf("read the layers' tables: %w", err)
	}
	docs, err := pgx.CollectRows(rows, pgx.RowToStructByName[TableDoc])
	if err != nil {
		return nil, fmt.Errorf("read the layers' tables: %w", err)
	}
	return docs, nil
}

// ChunksHoldingAll returns the chunks of the documents ids whose text
// search vector holds every word (English lexemes, as the chunks were
// indexed), by document then position, at most limit; none when the words
// are all stop words.
func (c *Corpus) ChunksHoldingAll(ctx context.Context, ids []int64, words []string, limit int) ([]Hit, error) {
	if len(ids) == 0 || len(words) == 0 {
		return nil, nil
	}
	rows, err := c.db.Query(ctx, `
		WITH q AS (SELECT plainto_tsquery('english', $2) AS q)
		SELECT c.id AS chunk_id, c.document_id, l.name AS layer, d.path AS file, c.start_off AS start,
			c.end_off AS "end", c.line_start, c.line_end, c.page, c.clause_path, c.text
		FROM q, strata.chunks c
		JOIN strata.documents d ON d.id = c.document_id
		JOIN strata.layers l ON l.id = c.layer_id
		WHERE c.document_id = ANY($1) AND d.status = 'ok' AND numnode(q.q) > 0 AND c.tsv @@ q.q
		ORDER BY c.document_id, c.ord LIMIT $3`, ids, strings.Join(words, " "), limit)
	if err != nil {
		return nil, fmt.Errorf("read the chunks that hold %q: %w", strings.Join(words, " "), err)
	}
	hits, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[Hit])
	if err != nil {
		return nil, fmt.Errorf("read the chunks that hold %q: %w", strings.Join(words, " "), err)
	}
	return hits, nil
}
