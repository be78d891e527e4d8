package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Text origins of a page or a chunk.
const (
	OriginText = "text" // the file's own text layer
	OriginOCR  = "ocr"  // text recognised from a rendered image
)

// Date sources of a document's date.
const (
	DateSourceFrontMatter = "front_matter"
	DateSourceFile        = "file"
)

// Document formats the parsers produce.
const (
	FormatMarkdown = "markdown"
	FormatText     = "text"
	FormatPDF      = "pdf"
	FormatImage    = "image"
	// FormatTable is a CSV, TSV or XLSX file: one line of text per row,
	// written as "header: value" pairs; its sections (one per sheet of a
	// workbook) come from the parser, not from the text.
	FormatTable = "table"
)

// Page is one page of a paged document (a PDF or a multi-page image).
type Page struct {
	Number        int     // 1-based page number
	Start, End    int     // byte span of the page in ParsedDoc.Text
	TextOrigin    string  // OriginText or OriginOCR
	OCRConfidence float64 // mean word confidence 0–100 for OCR pages, 0 otherwise
}

// ParsedDoc is what a parser makes of one file: the text that is stored and
// cited, its pages, and what the front matter or the file says about it.
type ParsedDoc struct {
	// Text is the stored text. For Markdown and plain text it is the whole
	// file, front matter included, so cited line numbers are the file's own.
	Text string
	// BodyStart is the byte offset where the document's body begins (after
	// any front matter); structure detection and chunking start there.
	BodyStart int
	Format    string // one of the Format constants
	Title     string
	// Date is YYYY-MM-DD, or empty when unknown; DateSource says where it came from.
	Date       string
	DateSource string
	// Supersedes lists paths, relative to the layer root, of documents this
	// one replaces.
	Supersedes []string
	// Meta holds the front matter's scalar keys as strings, for metadata
	// filters.
	Meta map[string]string
	// Pages is empty for documents without pages.
	Pages []Page
	// Warnings are problems that did not stop the file from being ingested
	// (malformed front matter, a blank page, a page that needed a fallback).
	Warnings []string
	// Sections, for FormatTable only, is the structure the parser knows
	// itself: one section per sheet of a workbook, none for a CSV or TSV
	// file. The structure map of other formats is computed from the text.
	Sections []Section `json:",omitempty"`
}

// PageAt returns the 1-based number of the page holding byte offset off, or 0
// when the document has no pages.
func (d *ParsedDoc) PageAt(off int) int {
	for _, p := range d.Pages {
		if off >= p.Start && off < p.End {
			return p.Number
		}
	}
	if n := len(d.Pages); n > 0 && off >= d.Pages[n-1].End {
		return d.Pages[n-1].Number
	}
	return 0
}

// Section kinds.
const (
	KindHeading  = "heading"   // Markdown or underlined heading without a number
	KindClause   = "clause"    // numbered clause: 7, 7.2, 7.2.1, 7(2)(b), 14.9 Cache-Control
	KindArticle  = "article"   // Article 12, Art. 12
	KindSection  = "section"   // Section 4
	KindPara     = "paragraph" // § 4
	KindAnnex    = "annex"     // Annex II
	KindAppendix = "appendix"  // Appendix A
	KindSchedule = "schedule"  // Schedule 1
	KindSheet    = "sheet"     // a sheet of a workbook (FormatTable)
)

// Section is one node of a document's structure map.
type Section struct {
	Number string // "7.2", "12", "II", "A"; empty for an unnumbered heading
	Title  string // heading text after the number
	Kind   string // one of the Kind constants
	Level  int    // 1 for top-level sections
	// Start is where the heading begins and End where the section ends (the
	// start of the next section at the same or a higher level, or the end of
	// the text).
	Start, End int
	// HeadingEnd is the offset just past the heading line.
	HeadingEnd int
	// Path is the clause path, e.g. "7 Termination > 7.2 Notice".
	Path string
	// Parent is the index of the parent section in the same slice, or -1.
	Parent int
}

// Label is how a section names itself in a clause path: number and title.
func (s Section) Label() string {
	num := s.Number
	switch s.Kind {
	case KindArticle:
		num = "Article " + num
	case KindSection:
		num = "Section " + num
	case KindPara:
		num = "§ " + num
	case KindAnnex:
		num = "Annex " + num
	case KindAppendix:
		num = "Appendix " + num
	case KindSchedule:
		num = "Schedule " + num
	}
	switch {
	case num == "":
		return s.Title
	case s.Title == "":
		return num
	default:
		return num + " " + s.Title
	}
}

// Chunk is one retrievable passage of a document.
type Chunk struct {
	Ordinal    int    // position in the document, from 0
	Start, End int    // byte span in the stored text
	LineStart  int    // first line, 1-based
	LineEnd    int    // last line, inclusive
	Page       int    // 1-based page, 0 when the document has no pages
	ClausePath string // clause path of the section the chunk starts in
	Text       string // exactly text[Start:End]
	Hash       string // ContentHash(Text)
}

// ContentHash is the hex SHA-256 of a chunk's text. Vectors are stored by
// content hash, so an unchanged chunk keeps its vector across re-ingests.
func ContentHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// LineOf returns the 1-based line number of byte offset off in text.
func LineOf(text string, off int) int {
	if off > len(text) {
		off = len(text)
	}
	if off < 0 {
		off = 0
	}
	return strings.Count(text[:off], "\n") + 1
}

// Ref names a span of a stored document: "d42:1830-1905", and, in a ref
// strata_ask or strata_search hands out, the span's text as it was then:
// "d42:1830-1905~9f86d081" (Hash, SpanHash of the text), so that
// strata_verify can tell a span whose text changed since (the document
// re-ingested and edited) from a quote that is not in it. A ref without a
// hash, as refs were before, still names its span.
type Ref struct {
	DocumentID int64
	Start, End int
	Hash       string
}

// String formats the ref as d{document}:{start}-{end}, then ~{hash} when
// it has one.
func (r Ref) String() string {
	s := fmt.Sprintf("d%d:%d-%d", r.DocumentID, r.Start, r.End)
	if r.Hash != "" {
		s += "~" + r.Hash
	}
	return s
}

// SpanHash is the hash a ref carries of its span's text: the first 8 hex
// digits of its SHA-256.
func SpanHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:4])
}

// WithText is r carrying the hash of text, the span's text.
func (r Ref) WithText(text string) Ref {
	r.Hash = SpanHash(text)
	return r
}

// ErrBadRef is returned by ParseRef for text that is not a ref.
var ErrBadRef = errors.New("ref must look like d42:1830-1905 (or d42:1830-1905~9f86d081, as strata_ask returns it)")

// ParseRef parses d{document}:{start}-{end}, with an optional ~{hash} of
// eight lower-case hex digits.
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "d")
	if !ok {
		return Ref{}, fmt.Errorf("parse ref %q: %w", s, ErrBadRef)
	}
	rest, hash, hashed := strings.Cut(rest, "~")
	if hashed && !spanHashRe.MatchString(hash) {
		return Ref{}, fmt.Errorf("parse ref %q: %w", s, ErrBadRef)
	}
	doc, span, ok := strings.Cut(rest, ":")
	if !ok {
		return Ref{}, fmt.Errorf("parse ref %q: %w", s, ErrBadRef)
	}
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return Ref{}, fmt.Errorf("parse ref %q: %w", s, ErrBadRef)
	}
	// Offsets fit in 32 bits, as the database's offsets (int) do: a larger
	// one is no ref, not a query PostgreSQL refuses (issue 32, item 8).
	id, err1 := strconv.ParseInt(doc, 10, 64)
	start, err2 := strconv.ParseInt(a, 10, 32)
	end, err3 := strconv.ParseInt(b, 10, 32)
	if err1 != nil || err2 != nil || err3 != nil || id <= 0 || start < 0 || end < start {
		return Ref{}, fmt.Errorf("parse ref %q: %w", s, ErrBadRef)
	}
	return Ref{DocumentID: id, Start: int(start), End: int(end), Hash: hash}, nil
}

var spanHashRe = regexp.MustCompile(`^[0-9a-f]{8}$`)
