package ask

import (
	"slices"
	"testing"

	"github.com/stratakb/stratakb/structure"
)

func TestMissingField(t *testing.T) {
	spelled := map[string]string{}
	columns := map[string][]string{
		"countries.csv":  headerColumns("Country | Capital | Sub-region Name | Dial", spelled),
		"currencies.csv": headerColumns("Entity | Currency | AlphabeticCode", spelled),
	}
	rows := append(parseRows("countries.csv", 10, "Country: Antarctica | Dial: 672\nCountry: Norway | Capital: Oslo | Sub-region Name: Northern Europe | Dial: 47"),
		parseRows("currencies.csv", 40, "Entity: EUROPEAN UNION | Currency: Euro | AlphabeticCode: EUR")...)
	cases := []struct {
		q      string
		gaps   []int // lines of the rows that lack the column
		column string
	}{
		{"What is the Sub-region Name of Antarctica?", []int{10}, "sub region name"},
		{"What is the capital of Antarctica?", []int{10}, "capital"},
		{"What is the capital of Norway?", nil, "capital"},
		{"What is the capital of the European Union?", []int{40}, "capital"},
		// No row holds the thing asked about: nothing is decided.
		{"What is the capital of Tuvalu?", nil, "capital"},
		// No column is asked for.
		{"Where is Antarctica?", nil, ""},
	}
	for _, c := range cases {
		gaps, column := missingField(" "+structure.FoldWords(c.q)+" ", rows, columns)
		var lines []int
		for _, g := range gaps {
			lines = append(lines, g.line)
		}
		if !slices.Equal(lines, c.gaps) || column != c.column {
			t.Errorf("%q: gaps at %v, column %q; want %v, %q", c.q, lines, column, c.gaps, c.column)
		}
	}
	gaps, _ := missingField(" what is the capital of antarctica ", rows, columns)
	if n := fieldNote(gaps, spelled); n != `The rows that hold "antarctica" have no value for "Capital" (countries.csv line 10): the tables do not give it.` {
		t.Errorf("note %q", n)
	}
	if headerColumns("Sheet: Codes", spelled) != nil || headerColumns("", spelled) != nil {
		t.Error("a workbook's sheet line or no header is not a header row")
	}
}
