// Package parsers turns the bytes of one file into the text StrataKB stores
// and cites: Markdown with YAML front matter, plain text and reStructuredText,
// PDF text layers with per-page fallbacks to poppler's pdftotext and to OCR,
// images through OCR, and tables (CSV, TSV, XLSX) one row per line. It is
// pure: no database, no job queue.
//
// Every failure that will recur on the same bytes (a corrupt or encrypted PDF,
// a file too large, binary content, invalid UTF-8, an unsupported type) wraps
// ErrPermanent, so the caller can stop retrying it. Anything else (a cancelled
// context, a missing tool) is transient.
package parsers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/stratakb/stratakb/schema"
)

// ErrPermanent is wrapped by every error that parsing the same bytes again
// would repeat: corrupt or encrypted files, files over the size limit, binary
// content, invalid UTF-8 and unsupported file types.
var ErrPermanent = errors.New("file cannot be parsed")

// permanentError marks err as permanent while keeping its own message.
type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() []error { return []error{ErrPermanent, e.err} }

// permanentf returns a permanent error with a formatted message; %w verbs are
// honoured.
func permanentf(format string, args ...any) error {
	return &permanentError{err: fmt.Errorf(format, args...)}
}

// Default option values.
const (
	DefaultMaxFileSize = 100 << 20
	DefaultOCRLanguage = "eng"
	DefaultDPI         = 300
)

// Options tune parsing. The zero value means every default: OCR on, English,
// 300 dpi, 100 MiB, one OCR worker per CPU. Use NoOCR to turn OCR off.
type Options struct {
	// MaxFileSize is the largest file accepted, in bytes; a larger file is a
	// permanent error. 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// NoOCR turns off OCR of PDF pages without a usable text layer and of
	// image files. (A negated flag, so that the zero Options has OCR on.)
	NoOCR bool
	// OCRLanguage is tesseract's language string, e.g. "eng" or "eng+deu".
	OCRLanguage string
	// DPI is the resolution PDF pages are rendered at for OCR.
	DPI int
	// Concurrency is how many pages are OCR'd at once, each by one
	// single-threaded tesseract. 0 means runtime.NumCPU().
	Concurrency int
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.OCRLanguage == "" {
		o.OCRLanguage = DefaultOCRLanguage
	}
	if o.DPI <= 0 {
		o.DPI = DefaultDPI
	}
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.NumCPU()
	}
	return o
}

// kinds of file, by extension.
const (
	kindNone = iota
	kindMarkdown
	kindText
	kindRST
	kindPDF
	kindImage
	kindCSV
	kindTSV
	kindXLSX
)

func kindOf(path string) int {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return kindMarkdown
	case ".txt":
		return kindText
	case ".rst":
		return kindRST
	case ".pdf":
		return kindPDF
	case ".png", ".jpg", ".jpeg", ".tif", ".tiff":
		return kindImage
	case ".csv":
		return kindCSV
	case ".tsv", ".tab":
		return kindTSV
	case ".xlsx":
		return kindXLSX
	}
	return kindNone
}

// Supported reports whether Parse handles the file, judged by its extension
// (case-insensitive): .md .markdown .txt .rst .pdf .png .jpg .jpeg .tif .tiff
// .csv .tsv .tab .xlsx.
func Supported(path string) bool { return kindOf(path) != kindNone }

// Parse parses one file. path is the file's path on disk (PDF fallbacks and
// page rendering read it); data holds its bytes; modTime is its modification
// time, the document's date when the file states none.
//
// Errors wrapping ErrPermanent will recur on the same bytes; a cancelled ctx
// returns ctx's error.
func Parse(ctx context.Context, path string, data []byte, modTime time.Time, opt Options) (*schema.ParsedDoc, error) {
	opt = opt.withDefaults()
	if int64(len(data)) > opt.MaxFileSize {
		return nil, permanentf("parse %s: file is %d bytes, over the %d-byte limit", filepath.Base(path), len(data), opt.MaxFileSize)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch kindOf(path) {
	case kindMarkdown:
		return parseMarkdown(data, modTime)
	case kindText:
		return parseText(data, modTime, false)
	case kindRST:
		return parseText(data, modTime, true)
	case kindPDF:
		doc, _, err := parsePDF(ctx, path, data, opt)
		if err != nil {
			return nil, err
		}
		doc.Date, doc.DateSource = fileDate(modTime)
		return doc, nil
	case kindImage:
		return parseImage(ctx, path, data, modTime, opt)
	case kindCSV, kindTSV:
		return parseDelimited(ctx, data, kindOf(path) == kindTSV, modTime, opt)
	case kindXLSX:
		return parseXLSX(ctx, data, modTime, opt)
	}
	return nil, permanentf("parse %s: unsupported file type %q", filepath.Base(path), filepath.Ext(path))
}

// fileDate returns modTime as a UTC date, or "" for the zero time.
func fileDate(modTime time.Time) (date, source string) {
	if modTime.IsZero() {
		return "", ""
	}
	return modTime.UTC().Format(time.DateOnly), schema.DateSourceFile
}
