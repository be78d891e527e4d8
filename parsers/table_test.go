package parsers

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/stratakb/stratakb/schema"
)

// lineOf returns line n (1-based) of text, without its line break.
func lineOf(text string, n int) string {
	lines := strings.Split(text, "\n")
	if n < 1 || n > len(lines) {
		return "<no line>"
	}
	return lines[n-1]
}

func parseTable(t *testing.T, name string, data []byte) *schema.ParsedDoc {
	t.Helper()
	doc, err := Parse(context.Background(), name, data, testModTime, Options{})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	checkTable(t, doc)
	return doc
}

// checkTable asserts what the chunker and the store rely on for a table.
func checkTable(t testing.TB, doc *schema.ParsedDoc) {
	t.Helper()
	checkSpans(t, doc)
	if doc.Format != schema.FormatTable {
		t.Fatalf("format %q", doc.Format)
	}
	prev := 0
	for _, s := range doc.Sections {
		if s.Start < prev || s.HeadingEnd < s.Start || s.End < s.HeadingEnd || s.End > len(doc.Text) || s.Parent != -1 {
			t.Fatalf("sheet section %+v out of order or bounds (text %d bytes)", s, len(doc.Text))
		}
		prev = s.End
	}
}

// TestCSVLineIsFileLine: line N of the stored text is line N of the file,
// blank lines and values that span lines included, and every value carries
// its column's name.
func TestCSVLineIsFileLine(t *testing.T) {
	path := filepath.Join("..", "fixtures", "tables", "parts.csv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := parseTable(t, path, data)
	for n, want := range map[int]string{
		1: "code | part | supplier | unit price | notes",
		2: "code: AC01 | part: Hex bolt M8 | supplier: Norda Fasteners | unit price: 0.12",
		4: "code: AC03 | part: Washer, M8 flat | supplier: Norda Fasteners | unit price: 0.02",
		5: "",
		6: "code: AC04 | part: Hinge pin | supplier: Kestrel Metals | unit price: 1.85 | notes: replaces AC03 on the 2024 cabinet doors",
		7: "", // the second line of AC04's notes
		8: "code: AC05 | part: Gas strut 200 N | supplier: Kestrel Metals | unit price: 7.40",
		9: "code: ZQRT | part: Calibration shim set | supplier: Ostra Tools | unit price: 23.00 | notes: ordered once a year",
	} {
		if got := lineOf(doc.Text, n); got != want {
			t.Errorf("line %d:\n got %q\nwant %q", n, got, want)
		}
	}
	fileLines := strings.Count(string(data), "\n")
	if got := strings.Count(doc.Text, "\n"); got != fileLines {
		t.Errorf("stored text has %d lines, the file %d", got, fileLines)
	}
	if len(doc.Warnings) != 0 || len(doc.Sections) != 0 {
		t.Errorf("warnings %q, sections %d; want none", doc.Warnings, len(doc.Sections))
	}
}

func TestDelimiterSniffing(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       rune
	}{
		{"a.csv", "a,b,c\n1,2,3\n", ','},
		{"a.csv", "a;b;c\n1,5;2,5;3\n", ';'},
		{"a.csv", "a\tb\n1\t2\n", '\t'},
		{"a.csv", "a|b|c\n1|2|3\n", '|'},
		{"a.csv", "\"x;y\",b\n\"1;2\",3\n", ','},
		{"a.tsv", "one column\nvalue\n", '\t'},
		{"a.csv", "one column\nvalue\n", ','},
		{"a.tsv", "a,b\t\n1,2\t\n", '\t'},
	} {
		def := ','
		if strings.HasSuffix(tc.name, ".tsv") {
			def = '\t'
		}
		if got := sniffDelimiter([]byte(tc.data), def); got != tc.want {
			t.Errorf("sniff %q (%s) = %q, want %q", tc.data, tc.name, got, tc.want)
		}
	}
	doc := parseTable(t, "prices.csv", []byte("Artikel;Preis\nSchraube M6;0,08\n"))
	if got := lineOf(doc.Text, 2); got != "Artikel: Schraube M6 | Preis: 0,08" {
		t.Errorf("semicolon file line 2 = %q", got)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "semicolons") {
		t.Errorf("warnings %q, want one naming the semicolons", doc.Warnings)
	}
}

// TestBadDelimitedInput: ragged rows, bare and broken quotes, huge values,
// a header without data and empty files get warnings or clear errors.
func TestBadDelimitedInput(t *testing.T) {
	doc := parseTable(t, "ragged.csv", []byte("a,b\n1,2,3\n4\n5,6\n"))
	if got := lineOf(doc.Text, 2); got != "a: 1 | b: 2 | column 3: 3" {
		t.Errorf("ragged line 2 = %q", got)
	}
	if got := lineOf(doc.Text, 3); got != "a: 4" {
		t.Errorf("short line 3 = %q", got)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "1 rows have more fields than their header row (lines 2)") {
		t.Errorf("ragged warnings %q", doc.Warnings)
	}

	doc = parseTable(t, "inch.csv", []byte("item,size\npipe,5\" long\n"))
	if got := lineOf(doc.Text, 2); got != `item: pipe | size: 5" long` {
		t.Errorf("bare quote line 2 = %q", got)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "literal") {
		t.Errorf("bare quote warnings %q", doc.Warnings)
	}

	// A value that opens with a quote that never closes is no quoted field:
	// it is read literally, and so are the rows after it.
	doc = parseTable(t, "broken.csv", []byte("a,b\n\"open,2\n3,4\n"))
	if got := lineOf(doc.Text, 2) + "\n" + lineOf(doc.Text, 3); got != "a: \"open | b: 2\na: 3 | b: 4" {
		t.Errorf("unterminated quote read as %q", got)
	}
	if len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], "line 2: ") {
		t.Errorf("unterminated quote warnings %q, want one naming line 2", doc.Warnings)
	}

	// A bare quote and then a quote that never closes: neither swallows the
	// later rows.
	swallow := "item,size\npipe,5\" long\n\"open,2\n" + strings.Repeat("3,4\n", 80)
	doc = parseTable(t, "swallow.csv", []byte(swallow))
	if got := lineOf(doc.Text, 83); got != "item: 3 | size: 4" {
		t.Errorf("last row after an unclosed quote = %q", got)
	}
	if len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], "lines 2, 3: ") {
		t.Errorf("unclosed quote after a bare one: warnings %q", doc.Warnings)
	}

	huge := strings.Repeat("é", maxCellBytes) // twice maxCellBytes in bytes
	doc = parseTable(t, "huge.csv", []byte("id,text\n1,"+huge+"\n"))
	line := lineOf(doc.Text, 2)
	if len(line) > maxCellBytes+100 || !strings.HasSuffix(line, "…") || !strings.HasPrefix(line, "id: 1 | text: éé") {
		t.Errorf("huge value kept %d bytes: %.60q…", len(line), line)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "line 2") {
		t.Errorf("huge value warnings %q", doc.Warnings)
	}

	doc = parseTable(t, "only-header.csv", []byte("a,b\n"))
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "no data rows") {
		t.Errorf("header-only warnings %q", doc.Warnings)
	}
	doc, err := Parse(context.Background(), "empty.tsv", nil, testModTime, Options{})
	if err != nil || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "empty file") {
		t.Errorf("empty file: %v, %+v", err, doc)
	}
	for name, data := range map[string][]byte{
		"nul.csv":    []byte("a,b\n1,\x002\n"),
		"latin1.csv": []byte("a,b\nCaf\xe9,2\n"),
	} {
		if _, err := Parse(context.Background(), name, data, testModTime, Options{}); !errors.Is(err, ErrPermanent) {
			t.Errorf("%s: err %v, want permanent", name, err)
		}
	}
	_, err = Parse(context.Background(), "wide.csv", []byte("a\n"+strings.Repeat("x", 300)+"\n"), testModTime, Options{MaxFileSize: 100})
	if !errors.Is(err, ErrPermanent) {
		t.Errorf("file over the limit: %v", err)
	}
	// Text may grow past the file (names repeat on every row), but only so far.
	many := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n" + strings.Repeat("1,2\n", 200)
	_, err = Parse(context.Background(), "grows.csv", []byte(many), testModTime, Options{MaxFileSize: int64(len(many))})
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("text over twice the limit: %v", err)
	}
}

// workbook builds an XLSX file in memory: two sheets, a formula with a
// stored result missing, a duplicate and an empty header.
func workbook(t testing.TB) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", "Parts"))
	must(f.SetSheetRow("Parts", "A1", &[]any{"code", "part", "price", "price", ""}))
	must(f.SetSheetRow("Parts", "A2", &[]any{"AC04", "Hinge pin", 1.85, 2, "spare"}))
	must(f.SetSheetRow("Parts", "A4", &[]any{"ZQRT", "Calibration shim set", 23}))
	must(f.SetCellFormula("Parts", "C5", "C2*2"))
	must(f.SetCellValue("Parts", "A5", "AC09"))
	if _, err := f.NewSheet("Suppliers"); err != nil {
		t.Fatal(err)
	}
	must(f.SetSheetRow("Suppliers", "B3", &[]any{"name", "city"}))
	must(f.SetSheetRow("Suppliers", "B4", &[]any{"Kestrel Metals", "Leeds"}))
	if _, err := f.NewSheet("Empty"); err != nil {
		t.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestXLSX: every sheet is a section named after it; every row line names
// its row; a formula without a stored result and an empty sheet are warned
// about.
func TestXLSX(t *testing.T) {
	doc := parseTable(t, "book.xlsx", workbook(t))
	want := strings.Join([]string{
		"Sheet: Parts",
		"row 1 (header) | code | part | price | price (2)", // a blank last name is not kept
		"row 2 | code: AC04 | part: Hinge pin | price: 1.85 | price (2): 2 | column 5: spare",
		"row 4 | code: ZQRT | part: Calibration shim set | price: 23",
		"row 5 | code: AC09",
		"",
		"Sheet: Suppliers",
		"row 3 (header) | column 1 | name | city",
		"row 4 | name: Kestrel Metals | city: Leeds",
		"",
		"Sheet: Empty",
		"",
	}, "\n")
	if doc.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", doc.Text, want)
	}
	if len(doc.Sections) != 3 {
		t.Fatalf("%d sections, want 3", len(doc.Sections))
	}
	for i, name := range []string{"Parts", "Suppliers", "Empty"} {
		s := doc.Sections[i]
		if s.Path != name || s.Kind != schema.KindSheet || !strings.HasPrefix(doc.Text[s.Start:], "Sheet: "+name+"\n") {
			t.Errorf("section %d: %+v", i, s)
		}
	}
	if got := doc.Text[doc.Sections[0].Start:doc.Sections[0].HeadingEnd]; !strings.HasSuffix(got, "price (2)") {
		t.Errorf("Parts heading span %q does not end with the header row", got)
	}
	joined := strings.Join(doc.Warnings, "\n")
	for _, w := range []string{"sheet Parts: 1 formula cells have no stored result", "sheet Empty is empty",
		"1 rows have more fields than their header row (rows 2)"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestBrokenXLSX(t *testing.T) {
	good := workbook(t)
	for name, data := range map[string][]byte{
		"truncated": good[:len(good)/2],
		"not a zip": []byte("this is not a workbook"),
		"empty":     nil,
		"zip of nothing": func() []byte {
			var b bytes.Buffer
			b.Write([]byte("PK\x05\x06"))
			b.Write(make([]byte, 18))
			return b.Bytes()
		}(),
	} {
		_, err := Parse(context.Background(), "broken.xlsx", data, testModTime, Options{})
		if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "workbook") {
			t.Errorf("%s: err %v, want a permanent error about the workbook", name, err)
		}
	}
}

// TestTableGolden compares the parse of fixtures/tables with
// testdata/golden; -update rewrites them.
func TestTableGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "fixtures", "tables", "*"))
	if len(files) == 0 {
		t.Fatal("no fixtures in fixtures/tables")
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			doc := mustParse(t, path, Options{})
			got := goldenJSON(t, doc)
			golden := filepath.Join("testdata", "golden", "table-"+name+".json")
			if *update {
				write(t, golden, got)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./parsers -run TestTableGolden -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s:\n%s", name, golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// BenchmarkTables parses a CSV of 50,000 rows and a workbook of 20,000 rows
// (six columns each) and reports rows/s and MB/s of file.
func BenchmarkTables(b *testing.B) {
	var csvData strings.Builder
	csvData.WriteString("code,part,supplier,bin,qty,notes\n")
	for r := 0; r < 50000; r++ {
		csvData.WriteString("AC" + itoa(r) + ",Hinge pin size " + itoa(r%90) + ",Kestrel Metals,B" + itoa(r%40) + "," + itoa(r*7%1000) + ",\"kept dry, check yearly\"\n")
	}
	wb := excelize.NewFile()
	for r := 1; r <= 20000; r++ {
		row := []any{"AC" + itoa(r), "Hinge pin size " + itoa(r%90), "Kestrel Metals", "B" + itoa(r%40), r * 7 % 1000, "kept dry"}
		if r == 1 {
			row = []any{"code", "part", "supplier", "bin", "qty", "notes"}
		}
		if err := wb.SetSheetRow("Sheet1", "A"+itoa(r), &row); err != nil {
			b.Fatal(err)
		}
	}
	buf, err := wb.WriteToBuffer()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		rows int
	}{{"csv", []byte(csvData.String()), 50000}, {"xlsx", buf.Bytes(), 19999}} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				if _, err := Parse(context.Background(), "t."+tc.name, tc.data, testModTime, Options{}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(n*tc.rows)/sec, "rows/s")
			b.ReportMetric(float64(n*len(tc.data))/sec/1e6, "MB/s")
		})
	}
}

// TestStrayQuoteTSV: a spreadsheet export writes a cell that starts with a
// quote as it is ("Nails" 40 mm). Such a cell is read literally with a
// warning naming its lines, while real quoted fields around it (a doubled
// quote, a line break inside a value) are still read as quoted (issue 32,
// item 14).
func TestStrayQuoteTSV(t *testing.T) {
	data := "code\tname\tnote\n" +
		"A1\t\"Nails\" 40 mm\tbox of 100\n" +
		"A2\t\"Screws, \"\"M6\"\"\"\t\"two\nlines\"\n" +
		"A3\t\"Washers\tround\n" +
		"A4\tBolts\t\"\"\"quoted\"\" text\"\n"
	doc := parseTable(t, "stock.tsv", []byte(data))
	want := []string{
		"code | name | note",
		`code: A1 | name: "Nails" 40 mm | note: box of 100`,
		`code: A2 | name: Screws, "M6" | note: two lines`,
		"",
		`code: A3 | name: "Washers | note: round`,
		`code: A4 | name: Bolts | note: "quoted" text`,
	}
	for i, w := range want {
		if got := lineOf(doc.Text, i+1); got != w {
			t.Errorf("line %d = %q, want %q", i+1, got, w)
		}
	}
	if len(doc.Warnings) != 1 || doc.Warnings[0] != "lines 2, 5: quotes that do not enclose a value were read as literal characters" {
		t.Errorf("warnings %q, want one naming lines 2 and 5", doc.Warnings)
	}
}
