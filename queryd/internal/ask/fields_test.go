package ask

import (
	"slices"
	"strings"
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

// TestOtherColumnGap: a column that only a table not returned has, asked
// about a returned row of another table.
func TestOtherColumnGap(t *testing.T) {
	spelled := map[string]string{}
	returned := map[string][]string{"currencies.csv": headerColumns("Entity | Currency | AlphabeticCode", spelled)}
	others := map[string][]string{
		"countries.csv": headerColumns("Country | Capital | TLD", spelled),
		"ports.csv":     headerColumns("Service Name | Port Number", spelled),
	}
	rows := parseRows("currencies.csv", 7, "Entity: ARAB MONETARY FUND | Currency: Arab Accounting Dinar | AlphabeticCode: XAD")
	cases := []struct {
		q      string
		column string
		tables []string
		words  string
	}{
		{"Which TLD does the Arab Monetary Fund use?", "tld", []string{"countries.csv"}, "arab monetary fund"},
		{"What is the port number of the Arab Monetary Fund?", "port number", []string{"ports.csv"}, "arab monetary fund"},
		// No returned row holds what it names: nothing to say.
		{"Which TLD does Tuvalu use?", "", nil, ""},
		// No other table's column is asked for.
		{"Which currency does the Arab Monetary Fund use?", "", nil, ""},
	}
	for _, c := range cases {
		g := otherColumnGap(" "+structure.FoldWords(c.q)+" ", rows, returned, others)
		if g.column != c.column || !slices.Equal(g.tables, c.tables) || strings.Join(g.words, " ") != c.words {
			t.Errorf("%q: column %q in %v for %q; want %q in %v for %q", c.q, g.column, g.tables, g.words, c.column, c.tables, c.words)
		}
		if c.column != "" && (len(g.rows) != 1 || g.rows[0].line != 7) {
			t.Errorf("%q: rows %v, want currencies.csv line 7", c.q, g.rows)
		}
	}
	note := otherColumnGap(" which tld does the arab monetary fund use ", rows, returned, others).note(spelled)
	if !strings.Contains(note, `without a "TLD" column`) || !strings.Contains(note, "currencies.csv line 7") || !strings.HasSuffix(note, ": the tables do not give it.") {
		t.Errorf("note %q", note)
	}
}
