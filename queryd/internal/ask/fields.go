package ask

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stratakb/stratakb/structure"
)

// A question that asks for a column of a table about a row ("What is the
// Capital of Antarctica?", "Which alpha2 code does Ancient Greek have?")
// is answered by a row that holds the thing it asks about and a value in
// that column. When the rows of the returned passages that hold it have
// no value there (the code list leaves Antarctica's capital empty), the
// documents do not answer it, however close the row is: the answer is
// not_found, with a note that says which row lacks what. This is the
// table's counterpart of a section that does not exist.

// tableFieldSep joins a stored table row's "name: value" fields and the
// header row's names (parsers/table.go).
const tableFieldSep = " | "

// fieldQuestionWords are the words of a question about a table's row that
// say neither which row nor which column.
var fieldQuestionWords = map[string]bool{
	"what": true, "which": true, "who": true, "whose": true, "how": true, "is": true, "are": true,
	"was": true, "were": true, "does": true, "do": true, "did": true, "has": true, "have": true,
	"the": true, "a": true, "an": true, "of": true, "for": true, "in": true, "on": true, "to": true,
	"and": true, "or": true, "its": true, "it": true, "by": true, "with": true, "use": true, "uses": true,
	"code": true, "codes": true, "name": true, "names": true, "value": true, "list": true, "give": true,
	"there": true, "that": true, "this": true, "me": true, "tell": true, "say": true, "says": true,
}

// fieldGap is a row that holds what the question asks about but no value
// in the column it asks for.
type fieldGap struct {
	file, column, entity string
	line                 int
}

// tableRow is one stored row of a returned passage.
type tableRow struct {
	file   string
	line   int
	values map[string]string // folded column name → value
}

// askedColumn returns, of the column names given (folded), the longest
// that the question writes as a run of whole words; "" when none.
func askedColumn(folded string, columns []string) string {
	best := ""
	for _, c := range columns {
		if len(c) >= 3 && len(c) > len(best) && strings.Contains(folded, " "+c+" ") {
			best = c
		}
	}
	return best
}

// headerColumns returns a table's column names from its header line,
// folded, and each folded name's first spelling; nil for a line that is
// not a header row (a workbook's "Sheet:").
func headerColumns(header string, spelled map[string]string) []string {
	if header == "" || strings.HasPrefix(header, "Sheet: ") {
		return nil
	}
	var out []string
	for _, n := range strings.Split(header, tableFieldSep) {
		if f := structure.FoldWords(n); f != "" {
			out = append(out, f)
			if _, ok := spelled[f]; !ok {
				spelled[f] = strings.TrimSpace(n)
			}
		}
	}
	return out
}

// parseRows reads the "name: value" rows of a passage's text, numbered
// from its first line.
func parseRows(file string, firstLine int, text string) []tableRow {
	var out []tableRow
	for i, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, ": ") {
			continue
		}
		r := tableRow{file: file, line: firstLine + i, values: map[string]string{}}
		for _, f := range strings.Split(l, tableFieldSep) {
			name, value, ok := strings.Cut(f, ": ")
			if ok && strings.TrimSpace(value) != "" {
				r.values[structure.FoldWords(name)] = value
			}
		}
		out = append(out, r)
	}
	return out
}

// entityWords are the question's words that say which row: not the
// column's, not a question word, not any column name's of the table.
func entityWords(folded, column string, columns []string) []string {
	skip := map[string]bool{}
	for _, c := range columns {
		for _, w := range strings.Fields(c) {
			skip[w] = true
		}
	}
	for _, w := range strings.Fields(column) {
		skip[w] = true
	}
	var out []string
	for _, w := range strings.Fields(folded) {
		if !skip[w] && !fieldQuestionWords[w] && len(w) >= 2 {
			skip[w] = true
			out = append(out, w)
		}
	}
	return out
}

// holds reports whether the row's values hold every word.
func (r tableRow) holds(words []string) bool {
	var b strings.Builder
	for _, v := range r.values {
		b.WriteString(" " + structure.FoldWords(v) + " ")
	}
	vals := b.String()
	for _, w := range words {
		if !strings.Contains(vals, " "+w+" ") {
			return false
		}
	}
	return true
}

// missingField applies the rule to the rows of the returned passages,
// given the question folded (" what is … ") and, by file, the column
// names of each table returned. It returns the rows that lack the column
// when no row that holds the entity has a value in it.
func missingField(folded string, rows []tableRow, columns map[string][]string) (gaps []fieldGap, column string) {
	for _, cs := range columns {
		if c := askedColumn(folded, cs); len(c) > len(column) {
			column = c
		}
	}
	if column == "" {
		return nil, ""
	}
	var all []string
	for _, cs := range columns {
		all = append(all, cs...)
	}
	words := entityWords(folded, column, all)
	if len(words) == 0 {
		return nil, ""
	}
	for _, r := range rows {
		if !r.holds(words) {
			continue
		}
		if _, ok := r.values[column]; ok {
			return nil, column
		}
		gaps = append(gaps, fieldGap{file: r.file, line: r.line, column: column, entity: strings.Join(words, " ")})
	}
	return gaps, column
}

// fieldNote says which rows lack the column (as the header spells it),
// the first three.
func fieldNote(gaps []fieldGap, spelled map[string]string) string {
	var at []string
	for i, g := range gaps {
		if i == 3 {
			at = append(at, fmt.Sprintf("%d more", len(gaps)-3))
			break
		}
		at = append(at, fmt.Sprintf("%s line %d", g.file, g.line))
	}
	return fmt.Sprintf("The rows that hold %q have no value for %q (%s): the tables do not give it.",
		gaps[0].entity, cmp.Or(spelled[gaps[0].column], gaps[0].column), strings.Join(at, ", "))
}

// maxOtherTables bounds the table documents read for the columns a
// question may ask for (a layer with more decides nothing by this rule);
// maxOtherTableChunks the chunks of those tables read for a row that holds
// what it names.
const (
	maxOtherTables      = 64
	maxOtherTableChunks = 20
)

// columnGap is a column the question asks for that only tables other than
// the returned rows' have.
type columnGap struct {
	column string   // folded
	tables []string // files of the tables that have it
	words  []string // what the question names
	rows   []tableRow
}

// otherColumnGap finds the column of other tables (by file) that the
// question writes, the words that say which row, and the returned rows
// that hold them; a zero columnGap when there is no such column or no such
// row.
func otherColumnGap(folded string, rows []tableRow, returned, others map[string][]string) columnGap {
	var g columnGap
	var all []string
	for _, cs := range returned {
		all = append(all, cs...)
	}
	for _, cs := range others {
		all = append(all, cs...)
		if c := askedColumn(folded, cs); len(c) > len(g.column) {
			g.column = c
		}
	}
	if g.column == "" {
		return columnGap{}
	}
	for f, cs := range others {
		if slices.Contains(cs, g.column) {
			g.tables = append(g.tables, f)
		}
	}
	sort.Strings(g.tables)
	if g.words = entityWords(folded, g.column, all); len(g.words) == 0 {
		return columnGap{}
	}
	for _, r := range rows {
		if r.holds(g.words) {
			g.rows = append(g.rows, r)
		}
	}
	if len(g.rows) == 0 {
		return columnGap{}
	}
	return g
}

// note says where the rows are and which tables have the column.
func (g columnGap) note(spelled map[string]string) string {
	var at []string
	for i, r := range g.rows {
		if i == 3 {
			at = append(at, fmt.Sprintf("%d more", len(g.rows)-3))
			break
		}
		at = append(at, fmt.Sprintf("%s line %d", r.file, r.line))
	}
	return fmt.Sprintf("The rows that hold %q (%s) are in tables without a %q column, and no row of %s, which has it, holds %q: the tables do not give it.",
		strings.Join(g.words, " "), strings.Join(at, ", "), cmp.Or(spelled[g.column], g.column), strings.Join(g.tables, ", "), strings.Join(g.words, " "))
}
