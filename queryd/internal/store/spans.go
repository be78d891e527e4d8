package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/schema"
)

// Span is what the store holds for one ref: the document's text between
// the ref's byte offsets, and what the checks on a ref need.
type Span struct {
	Ref schema.Ref
	// Found is false when no document has the ref's id; TextKept false
	// for a document stored before its text was kept.
	Found, TextKept bool
	// Bytes is the span's text as stored (it may split a character when
	// the ref does not fall on character boundaries: the caller checks).
	Bytes []byte
	// DocBytes is the document's length in bytes.
	DocBytes int
	Layer    string
	File     string
	// ChunkSize is the layer's chunk size, in characters.
	ChunkSize int
	// SectionEnd is the end of the stored section that starts exactly at
	// the ref's start (-1 when none does): a span that starts there and
	// ends inside it is an exact clause.
	SectionEnd int
}

// Spans reads the refs' spans, in order.
func (c *Corpus) Spans(ctx context.Context, refs []schema.Ref) ([]Span, error) {
	out := make([]Span, len(refs))
	b := &pgx.Batch{}
	for _, r := range refs {
		b.Queue(`
			SELECT d.body IS NOT NULL,
				COALESCE(substring(convert_to(d.body, 'UTF8') FROM $2::int + 1 FOR $3::int - $2::int), ''::bytea),
				COALESCE(octet_length(d.body), 0), l.name, d.path, l.chunk_size,
				COALESCE((SELECT max(end_off) FROM strata.sections sc WHERE sc.document_id = d.id AND sc.start_off = $2), -1)
			FROM strata.documents d JOIN strata.layers l ON l.id = d.layer_id
			WHERE d.id = $1 AND d.status = 'ok'`, r.DocumentID, r.Start, r.End)
	}
	br := c.db.SendBatch(ctx, b)
	defer br.Close()
	for i, r := range refs {
		sp := Span{Ref: r, SectionEnd: -1}
		err := br.QueryRow().Scan(&sp.TextKept, &sp.Bytes, &sp.DocBytes, &sp.Layer, &sp.File, &sp.ChunkSize, &sp.SectionEnd)
		switch {
		case err == pgx.ErrNoRows:
		case err != nil:
			return nil, fmt.Errorf("read span %s: %w", r, err)
		default:
			sp.Found = true
		}
		out[i] = sp
	}
	return out, br.Close()
}
