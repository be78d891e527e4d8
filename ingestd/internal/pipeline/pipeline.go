// Package pipeline assembles the ingest pipeline of ingestd from the pure
// packages: parsers, structure and chunker.
package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/schema"
)

// permanentError marks input that will fail the same way every time.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func permanentf(format string, a ...any) error { return &permanentError{fmt.Sprintf(format, a...)} }

// New returns the pipeline ingestd runs.
func New(maxFileSize int64) jobs.Pipeline {
	return jobs.Pipeline{
		Supported:      supported,
		Parse:          parseText,
		IsPermanent:    func(err error) bool { var pe *permanentError; return errors.As(err, &pe) },
		Chunk:          chunkParagraphs,
		ChunkerVersion: 1,
		MaxFileSize:    maxFileSize,
	}
}

func supported(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".md", ".markdown", ".txt", ".rst":
		return true
	}
	return false
}

// parseText reads Markdown and plain text as they are.
func parseText(_ context.Context, path string, data []byte, mod time.Time) (*schema.ParsedDoc, error) {
	if len(data) == 0 {
		return nil, permanentf("the file is empty")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, permanentf("the file holds binary data (a NUL byte), not text")
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, permanentf("the file is not valid UTF-8 (first bad byte at offset %d, line %d)",
			off, bytes.Count(data[:off], []byte("\n"))+1)
	}
	format := schema.FormatText
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".md" || ext == ".markdown" {
		format = schema.FormatMarkdown
	}
	return &schema.ParsedDoc{
		Text:       string(data),
		Format:     format,
		Date:       mod.UTC().Format("2006-01-02"),
		DateSource: schema.DateSourceFile,
	}, nil
}

// chunkParagraphs groups blank-line separated paragraphs up to size bytes.
func chunkParagraphs(doc *schema.ParsedDoc, _ []schema.Section, size int) []schema.Chunk {
	text := doc.Text
	var chunks []schema.Chunk
	emit := func(start, end int) {
		if start >= end {
			return
		}
		t := text[start:end]
		chunks = append(chunks, schema.Chunk{
			Ordinal:   len(chunks),
			Start:     start,
			End:       end,
			LineStart: schema.LineOf(text, start),
			LineEnd:   schema.LineOf(text, end-1),
			Text:      t,
			Hash:      schema.ContentHash(t),
		})
	}
	start, end := -1, -1
	for _, p := range paragraphs(text, doc.BodyStart) {
		if start >= 0 && p[1]-start > size {
			emit(start, end)
			start = -1
		}
		if start < 0 {
			start = p[0]
		}
		end = p[1]
	}
	if start >= 0 {
		emit(start, end)
	}
	return chunks
}

// paragraphs returns the [start, end) spans of non-blank paragraphs from
// offset from on; end is just past the paragraph's last non-space byte.
func paragraphs(text string, from int) [][2]int {
	var out [][2]int
	start, last := -1, -1
	for lineStart := from; lineStart < len(text); {
		lineEnd := len(text)
		if nl := strings.IndexByte(text[lineStart:], '\n'); nl >= 0 {
			lineEnd = lineStart + nl
		}
		line := text[lineStart:lineEnd]
		if strings.TrimSpace(line) == "" {
			if start >= 0 {
				out = append(out, [2]int{start, last})
				start = -1
			}
		} else {
			if start < 0 {
				start = lineStart
			}
			last = lineStart + len(strings.TrimRight(line, " \t\r"))
		}
		lineStart = lineEnd + 1
	}
	if start >= 0 {
		out = append(out, [2]int{start, last})
	}
	return out
}
