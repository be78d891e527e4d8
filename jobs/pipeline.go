package jobs

import (
	"context"
	"time"

	"github.com/stratakb/stratakb/schema"
)

// Pipeline is what turns one file into a document: parse, structure, chunk.
// ingestd builds it from the parsers, structure and chunker packages; tests
// may swap a stage.
type Pipeline struct {
	// Supported says whether a path is a document type the pipeline reads.
	Supported func(path string) bool
	// Parse turns a file's bytes into the stored text and its metadata.
	Parse func(ctx context.Context, path string, data []byte, modTime time.Time) (*schema.ParsedDoc, error)
	// IsPermanent says whether a Parse error will recur on the same bytes
	// (corrupt, encrypted, unsupported): such a file is recorded as failed and
	// not retried.
	IsPermanent func(error) bool
	// Structure builds the section tree of a parsed document.
	Structure func(doc *schema.ParsedDoc) []schema.Section
	// SectionKey is the exact-lookup key of a section ("" for none).
	SectionKey func(schema.Section) string
	// Chunk splits a parsed document into chunks of about size characters.
	Chunk func(doc *schema.ParsedDoc, sections []schema.Section, size int) []schema.Chunk
	// Version is stored with each document (column chunker_version); a
	// document stored by another version is parsed again on the next run,
	// even when its file is unchanged.
	Version int
	// MaxFileSize bounds the bytes read from one file.
	MaxFileSize int64
}
