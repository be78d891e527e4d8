package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/stratakb/stratakb/chunker"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// standardVersion changes when the parsers or the structure map change what
// they produce for the same bytes: every document is then parsed again.
const standardVersion = 16 // 16: OCR straightens skewed and sideways scans first (issue 32, item 0b); 15: PDF pages the Go reader read as a tenth of pdftotext take pdftotext's text, and page furniture (running heads and footers by place) heads no section (issue 32); 14: RFCs' titles from their front page, and every document's identity keys (migration 0023) are written at ingest; 13: a lone page number with a running header's label far to its right ("1" … "EXHIBIT 10.3") heads nothing; 12: plain-text filings' page footers ("Source: ACME CORP, 8-K, 1/10/2020", recurring alone between blank lines) are boilerplate, so page numbers above them are no sections; 11: a clause title followed at once by its first subclause ("2.2. Early Termination.   2.2.1. Either…"), and inline-titled clauses indented up to 8 columns; 10: a filing's margin is the smallest indentation a third of its paragraphs share; 9: a filing's margin read without page numbers and list items, from a third of its paragraphs; 8: roman and centred Article headings, run-on ARTICLE headings, underlines run onto a title, section keys of roman Articles as numbers; 7: agreements' inline clause titles ("1. Term. This…"); 6: PDF lines and words by glyph position (issue 12); 5: tables of contents, Markdown heading numbers and anchors

// StandardPipeline is the pipeline ingestd runs: the parsers, the structure
// map and the chunker.
func StandardPipeline(opt parsers.Options) Pipeline {
	max := opt.MaxFileSize
	if max <= 0 {
		max = parsers.DefaultMaxFileSize
	}
	return Pipeline{
		Supported: parsers.Supported,
		Parse: func(ctx context.Context, path string, data []byte, mod time.Time) (*schema.ParsedDoc, error) {
			return parsers.Parse(ctx, path, data, mod, opt)
		},
		IsPermanent: func(err error) bool { return errors.Is(err, parsers.ErrPermanent) },
		Structure: func(doc *schema.ParsedDoc) []schema.Section {
			if doc.Format == schema.FormatTable {
				// A table's rows are data, not headings: its sections
				// (the sheets) come from the parser.
				return doc.Sections
			}
			return structure.Parse(doc.Text, doc.BodyStart, doc.Format)
		},
		SectionKey: structure.SectionKey,
		Chunk: func(doc *schema.ParsedDoc, secs []schema.Section, size int) []schema.Chunk {
			return chunker.Chunk(doc, secs, chunker.Options{Size: size})
		},
		Version:     standardVersion*1000 + chunker.Version,
		MaxFileSize: max,
	}
}
