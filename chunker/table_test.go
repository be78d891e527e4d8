package chunker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

// tableDoc lays out sheets the way the parsers do for a workbook: a
// "Sheet: NAME" line, a header row, one line per row, a blank line between
// sheets. No sheets means a CSV file: a header line and its rows.
func tableDoc(sheets []string, rows int, rowText func(sheet string, r int) string) (*schema.ParsedDoc, []schema.Section) {
	var b strings.Builder
	var secs []schema.Section
	if len(sheets) == 0 {
		b.WriteString("code | part | notes\n")
		for r := 2; r <= rows+1; r++ {
			b.WriteString(rowText("", r) + "\n")
		}
		return &schema.ParsedDoc{Text: b.String(), Format: schema.FormatTable}, nil
	}
	for i, name := range sheets {
		if i > 0 {
			b.WriteString("\n")
		}
		s := schema.Section{Title: name, Path: name, Kind: schema.KindSheet, Level: 1, Parent: -1, Start: b.Len()}
		b.WriteString("Sheet: " + name + "\nrow 1 (header) | code | part | notes")
		s.HeadingEnd = b.Len()
		b.WriteString("\n")
		for r := 2; r <= rows+1; r++ {
			b.WriteString(fmt.Sprintf("row %d | %s\n", r, rowText(name, r)))
		}
		secs = append(secs, s)
	}
	text := b.String()
	for i := range secs {
		secs[i].End = len(text)
		if i+1 < len(secs) {
			secs[i].End = secs[i+1].Start
		}
	}
	return &schema.ParsedDoc{Text: text, Format: schema.FormatTable, Sections: secs}, secs
}

func partRow(sheet string, r int) string {
	return fmt.Sprintf("code: %s%03d | part: part number %d of the %s list | notes: kept in bin %d", strings.ToUpper(sheet[:min(2, len(sheet))]), r, r, sheet, r%17)
}

// TestTableChunksHoldWholeRows: every chunk starts at the start of a row and
// ends at the end of one, never holds rows of two sheets, names its sheet in
// the clause path, cites the lines it spans, keeps a sheet's heading and
// header with its first rows, and every row is in exactly one chunk.
func TestTableChunksHoldWholeRows(t *testing.T) {
	doc, secs := tableDoc([]string{"Parts", "Spares", "Tools"}, 60, partRow)
	chunks := Chunk(doc, secs, Options{Size: 500})
	if len(chunks) < 9 {
		t.Fatalf("%d chunks for 180 rows of about 80 bytes at size 500", len(chunks))
	}
	text := doc.Text
	covered := map[int]int{} // line start offset -> times covered
	for _, c := range chunks {
		if c.Start > 0 && text[c.Start-1] != '\n' || c.End < len(text) && text[c.End] != '\n' {
			t.Errorf("chunk %d (%d-%d) does not start and end at line boundaries: %q", c.Ordinal, c.Start, c.End, c.Text)
		}
		sheet := ""
		for _, s := range secs {
			if c.Start >= s.Start && c.Start < s.End {
				sheet = s.Path
				if c.End > s.End {
					t.Errorf("chunk %d runs from sheet %s into the next", c.Ordinal, s.Path)
				}
			}
		}
		if c.ClausePath != sheet {
			t.Errorf("chunk %d clause path %q, want %q", c.Ordinal, c.ClausePath, sheet)
		}
		if c.LineStart != schema.LineOf(text, c.Start) || c.LineEnd != schema.LineOf(text, c.End-1) {
			t.Errorf("chunk %d lines %d-%d, text says %d-%d", c.Ordinal, c.LineStart, c.LineEnd,
				schema.LineOf(text, c.Start), schema.LineOf(text, c.End-1))
		}
		if strings.HasSuffix(c.Text, "notes") || strings.HasSuffix(c.Text, "Sheet: "+sheet) {
			t.Errorf("chunk %d ends with a heading or header row: %q", c.Ordinal, c.Text[max(0, len(c.Text)-60):])
		}
		if len(c.Text) > 500 {
			t.Errorf("chunk %d is %d bytes, over the size", c.Ordinal, len(c.Text))
		}
		off := c.Start
		for _, l := range strings.SplitAfter(c.Text, "\n") {
			if strings.TrimSpace(l) != "" {
				covered[off]++
			}
			off += len(l)
		}
	}
	off := 0
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.TrimSpace(l) != "" && covered[off] != 1 {
			t.Errorf("line %q is in %d chunks", strings.TrimSpace(l), covered[off])
		}
		off += len(l)
	}
}

// TestTableRowNeverSplit: a row longer than the size is a chunk of its own;
// a CSV file's header row stays with its first rows.
func TestTableRowNeverSplit(t *testing.T) {
	long := strings.Repeat("a very long note about the part. ", 60)
	doc, _ := tableDoc(nil, 12, func(_ string, r int) string {
		if r == 6 {
			return "code: AC06 | notes: " + long
		}
		return fmt.Sprintf("code: AC%02d | part: short row %d", r, r)
	})
	chunks := Chunk(doc, nil, Options{Size: 300})
	found := false
	for _, c := range chunks {
		if strings.Contains(c.Text, "AC06") {
			found = true
			if !strings.HasPrefix(c.Text, "code: AC06") || !strings.HasSuffix(c.Text, "part. ") && !strings.HasSuffix(c.Text, "part.") {
				t.Errorf("the long row is split or shares its chunk: %.80q…", c.Text)
			}
			if c.LineStart != 6 || c.LineEnd != 6 {
				t.Errorf("the long row's chunk cites lines %d-%d, want 6-6", c.LineStart, c.LineEnd)
			}
		}
	}
	if !found {
		t.Fatal("no chunk holds the long row")
	}
	if !strings.HasPrefix(chunks[0].Text, "code | part | notes\ncode: AC02") {
		t.Errorf("the header row is not kept with the first row: %q", chunks[0].Text)
	}
}

// TestTableEditIsLocal: inserting a row near the top of a long table moves
// only the chunk boundaries near it.
func TestTableEditIsLocal(t *testing.T) {
	doc, secs := tableDoc([]string{"Parts"}, 400, partRow)
	before := Chunk(doc, secs, Options{Size: 800})
	lines := strings.Split(doc.Text, "\n")
	edited := append(append(append([]string{}, lines[:5]...), "row 99999 | code: NEW1 | part: an inserted row"), lines[5:]...)
	doc2 := &schema.ParsedDoc{Text: strings.Join(edited, "\n"), Format: schema.FormatTable}
	secs2 := []schema.Section{secs[0]}
	secs2[0].End = len(doc2.Text)
	after := Chunk(doc2, secs2, Options{Size: 800})
	old := map[string]bool{}
	for _, c := range before {
		old[c.Hash] = true
	}
	changed := 0
	for _, c := range after {
		if !old[c.Hash] {
			changed++
		}
	}
	if changed > 3 {
		t.Errorf("inserting one row changed %d of %d chunks", changed, len(after))
	}
}
