package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/schema"
)

// WindowMargin is how many bytes a text window reads on each side of its
// ref before it is trimmed to whole paragraphs.
const WindowMargin = 8192

// PageOrigin is one page of a document overlapping a window: its byte span
// in the document and where its text came from (schema.OriginText or
// schema.OriginOCR).
type PageOrigin struct {
	Number     int
	Start, End int
	TextOrigin string
}

// Window is the stored text around one ref: whole paragraphs from the
// first paragraph start in the leading margin (or the document's start) to
// the last paragraph end in the trailing margin (or the document's end), so
// sentences can be split in it the way they are in the whole document.
// SectionSpan is one section of the structure map as a window reads it:
// its span in the document and its clause path.
type SectionSpan struct {
	Start, End int
	Path       string
}

type Window struct {
	Ref schema.Ref
	// Found is false when no stored document has the ref's id; TextKept is
	// false for a document stored before its text was kept.
	Found, TextKept bool
	// Start is Text's byte offset in the document.
	Start int
	Text  string
	Pages []PageOrigin
	// Sections are the sections of the structure map that overlap the
	// window, in document order (ancestors before the sections they hold).
	Sections []SectionSpan
}

// Windows reads a text window around each ref, in order. A window starts
// and ends on line breaks (so on character boundaries) and, when the margin
// holds one, on a blank line; a paragraph longer than the margin is read
// from inside, which changes nothing for sentences more than a margin from
// its start except that an unmarked block is still over any quotable
// length.
func (c *Corpus) Windows(ctx context.Context, refs []schema.Ref) ([]Window, error) {
	out := make([]Window, len(refs))
	b := &pgx.Batch{}
	for _, r := range refs {
		lo := max(r.Start-WindowMargin, 0)
		hi := r.End + WindowMargin
		b.Queue(`
			SELECT d.body IS NOT NULL, COALESCE(octet_length(convert_to(d.body, 'UTF8')), 0),
				COALESCE(substring(convert_to(d.body, 'UTF8') FROM $2::int + 1 FOR $3::int - $2::int), ''::bytea),
				COALESCE((SELECT array_agg(ARRAY[p.number, p.start_off, p.end_off, (p.text_origin = 'ocr')::int] ORDER BY p.number)
					FROM strata.pages p WHERE p.document_id = d.id AND p.end_off > $2 AND p.start_off < $3), '{}'),
				COALESCE(sec.starts, '{}'), COALESCE(sec.ends, '{}'), COALESCE(sec.paths, '{}')
			FROM strata.documents d
			LEFT JOIN LATERAL (SELECT array_agg(s.start_off ORDER BY s.ord) AS starts,
					array_agg(s.end_off ORDER BY s.ord) AS ends, array_agg(s.clause_path ORDER BY s.ord) AS paths
				FROM strata.sections s
				WHERE s.document_id = d.id AND s.end_off > $2 AND s.start_off < $3) sec ON true
			WHERE d.id = $1 AND d.status = 'ok'`, r.DocumentID, lo, hi)
	}
	br := c.db.SendBatch(ctx, b)
	defer br.Close()
	for i, r := range refs {
		w := Window{Ref: r}
		var total int
		var raw []byte
		var pages [][]int
		var secStart, secEnd []int
		var secPath []string
		err := br.QueryRow().Scan(&w.TextKept, &total, &raw, &pages, &secStart, &secEnd, &secPath)
		switch {
		case err == pgx.ErrNoRows:
			out[i] = w
			continue
		case err != nil:
			return nil, fmt.Errorf("read the text around %s: %w", r, err)
		}
		w.Found = true
		lo := max(r.Start-WindowMargin, 0)
		w.Start, w.Text = trimWindow(string(raw), lo, total, r)
		for _, p := range pages {
			if len(p) != 4 {
				continue
			}
			origin := schema.OriginText
			if p[3] == 1 {
				origin = schema.OriginOCR
			}
			w.Pages = append(w.Pages, PageOrigin{Number: p[0], Start: p[1], End: p[2], TextOrigin: origin})
		}
		for k := range secStart {
			if k < len(secEnd) && k < len(secPath) {
				w.Sections = append(w.Sections, SectionSpan{Start: secStart[k], End: secEnd[k], Path: secPath[k]})
			}
		}
		out[i] = w
	}
	return out, br.Close()
}

// trimWindow cuts text, read from byte lo of a document of total bytes, to
// whole lines and, where the margins hold one, whole paragraphs, never
// inside the ref. It returns the start offset and the text.
func trimWindow(text string, lo, total int, r schema.Ref) (int, string) {
	refStart := min(max(r.Start-lo, 0), len(text))
	refEnd := min(max(r.End-lo, refStart), len(text))
	start, end := 0, len(text)
	if lo > 0 {
		head := text[:refStart]
		switch {
		case strings.Contains(head, "\n\n"):
			start = strings.Index(head, "\n\n") + 2
		case strings.Contains(head, "\n"):
			start = strings.IndexByte(head, '\n') + 1
		default:
			start = refStart
		}
	}
	if lo+len(text) < total {
		tail := text[refEnd:]
		switch {
		case strings.Contains(tail, "\n\n"):
			end = refEnd + strings.LastIndex(tail, "\n\n") + 1
		case strings.Contains(tail, "\n"):
			end = refEnd + strings.LastIndexByte(tail, '\n') + 1
		default:
			end = refEnd
		}
	}
	return lo + start, text[start:end]
}
