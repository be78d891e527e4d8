package parsers

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/stratakb/stratakb/schema"
)

// Tables (CSV, TSV, XLSX) are stored one line of text per row, each row
// written as "header: value" pairs joined by fieldSep, so that a field's
// name travels with its value into every chunk and every search result.
//
// Line numbers. In a CSV or TSV file, line N of the stored text is line N of
// the file: the header row stays where it is (its names joined by fieldSep),
// each record is written on the line it starts on, and blank lines and the
// continuation lines of a quoted value that spans lines stay as empty lines.
// In a workbook, each sheet starts with a line "Sheet: NAME" and every row
// line starts with its row number in the sheet ("row 12 | code: AC04 | …"),
// since one text cannot give every sheet its own line numbers.
const (
	fieldSep = " | "
	// maxCellBytes bounds one value; a longer value is cut, with a warning.
	maxCellBytes = 4 << 10
	// maxRowBytes bounds one row's line; the fields past it are left out,
	// with a warning. A row is never split across chunks, so this also
	// bounds the largest chunk a table can make.
	maxRowBytes = 64 << 10
	// maxHeaderBytes bounds one column name.
	maxHeaderBytes = 200
	// tableTextFactor bounds a table's stored text at this many times the
	// file size limit: repeating the column names on every row makes the
	// text larger than the file, and a compressed workbook larger still.
	tableTextFactor = 2
	// unzipFactor bounds how much a workbook may unzip to, in multiples of
	// the file size limit (a zip bomb stops there).
	unzipFactor = 8
	// maxLazyLines is the most line breaks a quoted value may hold in a
	// file read with tolerant quotes (one with a quote that encloses no
	// value); a quote whose value would run longer is read literally.
	maxLazyLines = 50
	// maxFormulaChecks bounds the empty cells per sheet that are checked
	// for a formula without a stored result.
	maxFormulaChecks = 1000
)

// tableWriter builds a table's stored text and collects what to warn about.
type tableWriter struct {
	b     strings.Builder
	line  int // line number of the position being written, from 1
	limit int // most bytes of text
	err   error

	cutCells int    // values cut at maxCellBytes
	firstCut string // where the first one was
	cutRows  int    // rows cut at maxRowBytes
	firstRow string
	ragged   int   // rows whose field count differs from the header's
	raggedAt []int // the first few of them, by line or row
	rows     int   // data rows written
}

func newTableWriter(limit int) *tableWriter { return &tableWriter{line: 1, limit: limit} }

// toLine moves to line n with empty lines; it never goes back.
func (w *tableWriter) toLine(n int) {
	for w.line < n {
		w.b.WriteByte('\n')
		w.line++
	}
}

// endLine ends the current line.
func (w *tableWriter) endLine() {
	w.b.WriteByte('\n')
	w.line++
}

func (w *tableWriter) write(s string) {
	if w.err != nil {
		return
	}
	w.b.WriteString(s)
	if w.b.Len() > w.limit {
		w.err = permanentf("the table's text would exceed %d bytes (twice the file size limit); split the file", w.limit)
	}
}

// cleanCell makes a value fit on one line: line breaks and other control
// characters become spaces, surrounding space is trimmed, and a value over
// maxCellBytes is cut at a character boundary.
func (w *tableWriter) cleanCell(v, where string) string {
	if strings.IndexFunc(v, isControl) >= 0 {
		v = strings.Map(func(r rune) rune {
			if isControl(r) {
				return ' '
			}
			return r
		}, v)
	}
	v = strings.TrimSpace(v)
	if len(v) > maxCellBytes {
		cut := maxCellBytes
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		if w.cutCells == 0 {
			w.firstCut = fmt.Sprintf("%s, %d bytes", where, len(v))
		}
		w.cutCells++
		v = v[:cut] + "…"
	}
	return v
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

// header turns a header row into column names: empty names become
// "column N", a repeated name gets " (2)", " (3)"….
func (w *tableWriter) header(cells []string) []string {
	names := make([]string, len(cells))
	seen := map[string]int{}
	for i, c := range cells {
		n := w.cleanCell(c, "header")
		if len(n) > maxHeaderBytes {
			cut := maxHeaderBytes
			for cut > 0 && !utf8.RuneStart(n[cut]) {
				cut--
			}
			n = n[:cut] + "…"
		}
		if n == "" {
			n = "column " + strconv.Itoa(i+1)
		}
		seen[n]++
		if k := seen[n]; k > 1 {
			n = fmt.Sprintf("%s (%d)", n, k)
		}
		names[i] = n
	}
	return names
}

// joinNames is a header row as stored: its names joined by fieldSep.
func joinNames(names []string) string { return strings.Join(names, fieldSep) }

// record writes one data row as "name: value" pairs, leaving out empty
// values; fields past the header are named "column N". where names the row
// in warnings; at is its line or row number.
func (w *tableWriter) record(prefix string, names, cells []string, where string, at int) {
	if len(cells) != len(names) && !allEmpty(cells[min(len(names), len(cells)):]) {
		w.ragged++
		if len(w.raggedAt) < 5 {
			w.raggedAt = append(w.raggedAt, at)
		}
	}
	var line strings.Builder
	line.WriteString(prefix)
	n := 0
	for i, c := range cells {
		v := w.cleanCell(c, where)
		if v == "" {
			continue
		}
		name := "column " + strconv.Itoa(i+1)
		if i < len(names) {
			name = names[i]
		}
		pair := name + ": " + v
		if line.Len()+len(fieldSep)+len(pair) > maxRowBytes {
			if w.cutRows == 0 {
				w.firstRow = where
			}
			w.cutRows++
			line.WriteString(fieldSep + "…")
			break
		}
		if n > 0 || prefix != "" {
			line.WriteString(fieldSep)
		}
		line.WriteString(pair)
		n++
	}
	if n == 0 {
		return // an empty row is an empty line
	}
	w.rows++
	w.write(line.String())
}

func allEmpty(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// warnings lists what the writer cut or found odd; unit is "line" or "row".
func (w *tableWriter) warnings(unit string) []string {
	var out []string
	if w.ragged > 0 {
		at := make([]string, len(w.raggedAt))
		for i, n := range w.raggedAt {
			at[i] = strconv.Itoa(n)
		}
		more := ""
		if w.ragged > len(w.raggedAt) {
			more = ", …"
		}
		out = append(out, fmt.Sprintf("%d rows have more fields than their header row (%ss %s%s); the extra fields are named \"column N\"",
			w.ragged, unit, strings.Join(at, ", "), more))
	}
	if w.cutCells > 0 {
		out = append(out, fmt.Sprintf("%d values longer than %d bytes were cut (the first: %s)", w.cutCells, maxCellBytes, w.firstCut))
	}
	if w.cutRows > 0 {
		out = append(out, fmt.Sprintf("%d rows longer than %d bytes lost their last fields (the first: %s)", w.cutRows, maxRowBytes, w.firstRow))
	}
	return out
}

// parseDelimited reads a CSV or TSV file. The delimiter is sniffed among
// comma, semicolon, tab and bar; the first non-empty record is the header.
func parseDelimited(ctx context.Context, data []byte, tsv bool, modTime time.Time, opt Options) (*schema.ParsedDoc, error) {
	if len(data) == 0 {
		return emptyDoc(schema.FormatTable, modTime), nil
	}
	if err := checkText(data); err != nil {
		return nil, err
	}
	body := bytes.TrimPrefix(data, utf8BOM)
	def := ','
	if tsv {
		def = '\t'
	}
	comma := sniffDelimiter(body, def)
	doc, err := readDelimited(ctx, &strictRecords{r: newCSVReader(body, comma)}, opt)
	if errors.Is(err, csv.ErrBareQuote) || errors.Is(err, csv.ErrQuote) {
		// A quote inside an unquoted value (5" pipe) or a value that starts
		// with a quote and is no quoted field ("Nails" 40mm, or a quote never
		// closed) is common in exported files: spreadsheets write such cells
		// as they are. Read them as literal characters, and say where.
		tr := &tolerantRecords{data: body, comma: byte(comma), line: 1}
		doc, err = readDelimited(ctx, tr, opt)
		if err == nil {
			doc.Warnings = append(doc.Warnings, tr.warning())
		}
	}
	if err != nil {
		return nil, err
	}
	if comma != def {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("fields are separated by %s", delimiterName(comma)))
	}
	doc.Date, doc.DateSource = fileDate(modTime)
	return doc, nil
}

// recordSource yields a delimited file's records, each with the line it
// starts on; io.EOF ends them.
type recordSource interface {
	next() (rec []string, line int, err error)
}

var (
	_ recordSource = (*strictRecords)(nil)
	_ recordSource = (*tolerantRecords)(nil)
)

func newCSVReader(body []byte, comma rune) *csv.Reader {
	r := csv.NewReader(bytes.NewReader(body))
	r.Comma = comma
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	return r
}

// strictRecords reads RFC 4180 records with encoding/csv.
type strictRecords struct{ r *csv.Reader }

func (s *strictRecords) next() ([]string, int, error) {
	rec, err := s.r.Read()
	if err != nil {
		return nil, 0, err
	}
	line, _ := s.r.FieldPos(0)
	return rec, line, nil
}

// tolerantRecords reads a delimited file whose quotes are not all RFC 4180
// quoting. A field that starts with a quote is a quoted field when a closing
// quote follows it directly by a delimiter or the line's end, within
// maxLazyLines lines, with every inner quote doubled; any other field,
// including one that starts with a quote that does not close that way, is
// read literally up to the next delimiter or line end. The lines where a
// quote was read literally are kept for the warning.
type tolerantRecords struct {
	data    []byte
	comma   byte
	pos     int
	line    int   // line number at pos, from 1
	literal []int // lines with a quote read literally, ascending
	count   int   // how many such lines
}

// maxLiteralLines is how many lines the warning names.
const maxLiteralLines = 10

func (t *tolerantRecords) noteLiteral(line int) {
	if n := len(t.literal); n > 0 && t.literal[n-1] == line {
		return
	}
	t.count++
	if len(t.literal) < maxLiteralLines {
		t.literal = append(t.literal, line)
	} else {
		t.literal = append(t.literal[:maxLiteralLines], line) // the last one, for "…"
	}
}

// warning names the lines where quotes were read literally.
func (t *tolerantRecords) warning() string {
	shown := t.literal
	more := ""
	if t.count > maxLiteralLines {
		shown = t.literal[:maxLiteralLines]
		more = fmt.Sprintf(", … (%d lines)", t.count)
	}
	at := make([]string, len(shown))
	for i, n := range shown {
		at[i] = strconv.Itoa(n)
	}
	unit := "lines "
	if len(shown) == 1 {
		unit = "line "
	}
	return unit + strings.Join(at, ", ") + more + ": quotes that do not enclose a value were read as literal characters"
}

func (t *tolerantRecords) next() ([]string, int, error) {
	if t.pos >= len(t.data) {
		return nil, 0, io.EOF
	}
	start := t.line
	var rec []string
	for {
		v := t.field()
		rec = append(rec, v)
		if t.pos < len(t.data) && t.data[t.pos] == t.comma {
			t.pos++
			continue
		}
		// A line end or the end of the data ends the record.
		if t.pos < len(t.data) && t.data[t.pos] == '\r' {
			t.pos++
		}
		if t.pos < len(t.data) && t.data[t.pos] == '\n' {
			t.pos++
			t.line++
		}
		return rec, start, nil
	}
}

// field reads one field from pos, leaving pos on the delimiter or line end
// after it.
func (t *tolerantRecords) field() string {
	d := t.data
	if t.pos < len(d) && d[t.pos] == '"' {
		if v, end, lines, ok := t.quoted(t.pos); ok {
			t.pos, t.line = end, t.line+lines
			return v
		}
	}
	end := t.pos
	for end < len(d) && d[end] != t.comma && d[end] != '\n' {
		end++
	}
	v := d[t.pos:end]
	t.pos = end
	if bytes.HasSuffix(v, []byte("\r")) && (end == len(d) || d[end] == '\n') {
		v = v[:len(v)-1]
		t.pos--
	}
	if bytes.IndexByte(v, '"') >= 0 {
		t.noteLiteral(t.line)
	}
	return string(v)
}

// quoted reads an RFC 4180 quoted field opening at d[at]; ok is false when
// the quote does not open one.
func (t *tolerantRecords) quoted(at int) (v string, end, lines int, ok bool) {
	d := t.data
	var b strings.Builder
	i := at + 1
	for {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			return "", 0, 0, false // never closed
		}
		chunk := d[i : i+j]
		lines += bytes.Count(chunk, []byte("\n"))
		if lines > maxLazyLines {
			return "", 0, 0, false
		}
		b.Write(bytes.ReplaceAll(chunk, []byte("\r\n"), []byte("\n")))
		i += j + 1
		switch {
		case i < len(d) && d[i] == '"':
			b.WriteByte('"') // a doubled quote
			i++
		case i == len(d) || d[i] == t.comma || d[i] == '\n' || d[i] == '\r' && (i+1 == len(d) || d[i+1] == '\n'):
			return b.String(), i, lines, true
		default:
			return "", 0, 0, false // text after the closing quote
		}
	}
}

func readDelimited(ctx context.Context, src recordSource, opt Options) (*schema.ParsedDoc, error) {
	w := newTableWriter(int(min(tableTextFactor*opt.MaxFileSize, int64(maxInt))))
	var names []string
	for n := 0; ; n++ {
		rec, line, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, permanentf("read table: %w", err)
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		w.toLine(line)
		switch {
		case allEmpty(rec):
		case names == nil:
			names = w.header(rec)
			w.write(joinNames(names))
		default:
			w.record("", names, rec, "line "+strconv.Itoa(line), line)
		}
		if w.err != nil {
			return nil, w.err
		}
	}
	if w.b.Len() > 0 {
		w.endLine()
	}
	doc := &schema.ParsedDoc{Text: w.b.String(), Format: schema.FormatTable, Meta: map[string]string{}}
	doc.Warnings = w.warnings("line")
	if names == nil {
		doc.Warnings = append(doc.Warnings, "no rows: nothing to index")
	} else if w.rows == 0 {
		doc.Warnings = append(doc.Warnings, "a header row and no data rows")
	}
	return doc, nil
}

const maxInt = int(^uint(0) >> 1)

// sniffDelimiter picks the delimiter among , ; TAB | that splits the first
// lines of the file into the same number of fields, the most fields on a
// tie; quoted text is not counted. Without evidence it returns def.
func sniffDelimiter(data []byte, def rune) rune {
	var lines [][]byte
	inQuote := false
	start := 0
	for i := 0; i < len(data) && len(lines) < 20 && i < 64<<10; i++ {
		switch data[i] {
		case '"':
			inQuote = !inQuote
		case '\n':
			if !inQuote {
				if l := bytes.TrimRight(data[start:i], "\r"); len(bytes.TrimSpace(l)) > 0 {
					lines = append(lines, l)
				}
				start = i + 1
			}
		}
	}
	if len(lines) < 20 && start < len(data) && !inQuote {
		end := min(len(data), start+64<<10)
		if l := bytes.TrimRight(data[start:end], "\r\n"); len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return def
	}
	best, bestScore := def, 0
	for _, c := range []byte{',', ';', '\t', '|'} {
		counts := make([]int, len(lines))
		for i, l := range lines {
			q := false
			for _, b := range l {
				if b == '"' {
					q = !q
				} else if b == c && !q {
					counts[i]++
				}
			}
		}
		// Lines that agree with the header's count, times that count.
		agree := 0
		for _, n := range counts {
			if n == counts[0] {
				agree++
			}
		}
		score := 0
		if counts[0] > 0 {
			score = agree*1000 + counts[0]
		}
		if score > bestScore || score == bestScore && score > 0 && rune(c) == def {
			best, bestScore = rune(c), score
		}
	}
	return best
}

func delimiterName(c rune) string {
	switch c {
	case ',':
		return "commas"
	case ';':
		return "semicolons"
	case '\t':
		return "tabs"
	case '|':
		return "bars (|)"
	}
	return strconv.QuoteRune(c)
}

// parseXLSX reads a workbook with excelize: every sheet is a section whose
// heading line is "Sheet: NAME", its first non-empty row is the header, and
// each later row is a line "row N | header: value | …". Values are read as
// the spreadsheet shows them (number formats applied); a formula gives the
// result stored in the file.
func parseXLSX(ctx context.Context, data []byte, modTime time.Time, opt Options) (doc *schema.ParsedDoc, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, permanentf("read workbook: the reader failed on this file: %v", r)
		}
	}()
	if len(data) == 0 {
		return nil, permanentf("read workbook: empty file, not an XLSX workbook")
	}
	unzip := unzipFactor * opt.MaxFileSize
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit: unzip, UnzipXMLSizeLimit: min(unzip, excelize.StreamChunkSize)})
	if err != nil {
		return nil, permanentf("read workbook: %w", err)
	}
	defer f.Close()
	w := newTableWriter(int(min(tableTextFactor*opt.MaxFileSize, int64(maxInt))))
	doc = &schema.ParsedDoc{Format: schema.FormatTable, Meta: map[string]string{}}
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, permanentf("read workbook: no sheets")
	}
	for si, name := range sheets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		label := w.cleanCell(name, "sheet name")
		if si > 0 {
			w.endLine()
			w.endLine() // a blank line between sheets
		}
		sec := schema.Section{Title: label, Kind: schema.KindSheet, Level: 1, Start: w.b.Len(), Path: label, Parent: -1}
		w.write("Sheet: " + label)
		sec.HeadingEnd = w.b.Len()
		rows, formulas, err := readSheet(ctx, f, name, label, w, &sec)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var pe *permanentError
			if errors.As(err, &pe) {
				return nil, err
			}
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("sheet %s: %v; the rows after the error are left out", label, err))
		}
		if rows == 0 && err == nil {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("sheet %s is empty", label))
		}
		if formulas > 0 {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("sheet %s: %d formula cells have no stored result (the file was saved by a program that does not calculate) and are left empty", label, formulas))
		}
		doc.Sections = append(doc.Sections, sec)
	}
	if w.err != nil {
		return nil, w.err
	}
	w.endLine()
	doc.Text = w.b.String()
	for i := range doc.Sections {
		if i+1 < len(doc.Sections) {
			doc.Sections[i].End = doc.Sections[i+1].Start
		} else {
			doc.Sections[i].End = len(doc.Text)
		}
	}
	doc.Warnings = append(doc.Warnings, w.warnings("row")...)
	if w.rows == 0 {
		doc.Warnings = append(doc.Warnings, "no data rows: nothing to index")
	}
	doc.Date, doc.DateSource = fileDate(modTime)
	return doc, nil
}

// readSheet writes one sheet's rows; it returns the number of non-empty
// rows and of formula cells without a stored result.
func readSheet(ctx context.Context, f *excelize.File, name, label string, w *tableWriter, sec *schema.Section) (rows, formulas int, err error) {
	it, err := f.Rows(name)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read its rows: %w", err)
	}
	defer it.Close()
	var names []string
	checks := 0
	for r := 1; it.Next(); r++ {
		if r%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return rows, formulas, err
			}
		}
		cells, err := it.Columns()
		if err != nil {
			return rows, formulas, fmt.Errorf("row %d: %w", r, err)
		}
		if allEmpty(cells) {
			continue
		}
		rows++
		w.endLine()
		prefix := "row " + strconv.Itoa(r)
		if names == nil {
			names = w.header(cells)
			w.write(prefix + " (header)" + fieldSep + joinNames(names))
			sec.HeadingEnd = w.b.Len()
		} else {
			for c := 0; c < len(names) && checks < maxFormulaChecks; c++ {
				if c < len(cells) && cells[c] != "" {
					continue
				}
				checks++
				ref, _ := excelize.CoordinatesToCellName(c+1, r)
				if fm, err := f.GetCellFormula(name, ref); err == nil && fm != "" {
					formulas++
				}
			}
			w.record(prefix, names, cells, "sheet "+label+" row "+strconv.Itoa(r), r)
		}
		if w.err != nil {
			return rows, formulas, w.err
		}
	}
	if err := it.Error(); err != nil {
		return rows, formulas, err
	}
	return rows, formulas, nil
}
