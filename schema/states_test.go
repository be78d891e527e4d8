package schema_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/schema/migrate"
)

// migrated returns a pool on a fresh database with the product's
// migrations applied.
func migrated(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, _ := dbtest.NewPool(t)
	if _, err := migrate.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// checkDefs returns the definitions of the CHECK constraints of
// strata.table that mention column.
func checkDefs(t *testing.T, pool *pgxpool.Pool, table, column string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
		WHERE c.contype = 'c' AND c.conrelid = ('strata.' || $1)::regclass AND a.attname = $2
		ORDER BY 1`, table, column)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 {
		t.Fatalf("strata.%s.%s: want one CHECK constraint, got %q", table, column, defs)
	}
	return defs
}

var quoted = regexp.MustCompile(`'((?:[^']|'')*)'::text`)

// allowed returns the values a CHECK (column IN (...)) constraint allows,
// sorted.
func allowed(t *testing.T, pool *pgxpool.Pool, table, column string) []string {
	t.Helper()
	def := checkDefs(t, pool, table, column)[0]
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(def, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("strata.%s.%s: no values in %s", table, column, def)
	}
	slices.Sort(out)
	return out
}

func sorted[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	slices.Sort(out)
	return out
}

// TestStatesMatchDatabase: each set of typed constants is exactly what its
// column's CHECK constraint allows.
func TestStatesMatchDatabase(t *testing.T) {
	pool := migrated(t)
	for _, c := range []struct {
		table, column string
		consts        []string
	}{
		{"ingest_runs", "status", sorted(schema.RunStatuses())},
		{"ingest_files", "status", sorted(schema.FileStatuses())},
		{"ingest_files", "action", sorted(schema.FileActions())},
		{"documents", "status", sorted(schema.DocStatuses())},
		{"layers", "answer_mode", sorted(schema.AnswerModes())},
		{"pages", "text_origin", sorted([]string{schema.OriginText, schema.OriginOCR})},
		{"chunks", "text_origin", sorted([]string{schema.OriginText, schema.OriginOCR})},
		{"documents", "date_source", sorted([]string{schema.DateSourceFrontMatter, schema.DateSourceFile})},
	} {
		got := allowed(t, pool, c.table, c.column)
		if !slices.Equal(got, c.consts) {
			t.Errorf("strata.%s.%s: the database allows %q, the Go constants are %q", c.table, c.column, got, c.consts)
		}
	}
}

// columnDefault returns the DEFAULT expression of strata.table.column.
func columnDefault(t *testing.T, pool *pgxpool.Pool, table, column string) string {
	t.Helper()
	var def string
	err := pool.QueryRow(context.Background(), `
		SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
		JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = ('strata.' || $1)::regclass AND a.attname = $2`, table, column).Scan(&def)
	if err != nil {
		t.Fatalf("default of strata.%s.%s: %v", table, column, err)
	}
	return def
}

// TestDefaultsMatchDatabase: the layer columns' DEFAULTs and the chunk
// size's CHECK bounds are the Go constants.
func TestDefaultsMatchDatabase(t *testing.T) {
	pool := migrated(t)
	if got, want := columnDefault(t, pool, "layers", "chunk_size"), strconv.Itoa(schema.DefaultChunkSize); got != want {
		t.Errorf("strata.layers.chunk_size DEFAULT is %s, schema.DefaultChunkSize is %s", got, want)
	}
	if got, want := columnDefault(t, pool, "layers", "answer_mode"), schema.ModelLiteral(string(schema.DefaultAnswerMode))+"::text"; got != want {
		t.Errorf("strata.layers.answer_mode DEFAULT is %s, want %s", got, want)
	}
	def := checkDefs(t, pool, "layers", "chunk_size")[0]
	m := regexp.MustCompile(`chunk_size >= (\d+)\) AND \(chunk_size <= (\d+)`).FindStringSubmatch(def)
	if m == nil {
		t.Fatalf("strata.layers.chunk_size: unexpected CHECK %s", def)
	}
	if m[1] != strconv.Itoa(schema.MinChunkSize) || m[2] != strconv.Itoa(schema.MaxChunkSize) {
		t.Errorf("strata.layers.chunk_size CHECK is %s, schema says %d to %d", def, schema.MinChunkSize, schema.MaxChunkSize)
	}
}

func TestParseAnswerMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want schema.AnswerMode
		ok   bool
	}{
		{"grounded", schema.AnswerGrounded, true},
		{"extractive", schema.AnswerExtractive, true},
		{" extractive", "", false},
		{"Grounded", "", false},
		{"", "", false},
		{"abstractive", "", false},
	} {
		got, err := schema.ParseAnswerMode(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseAnswerMode(%q) = %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestModelLiteralMatchesIndexPredicate: the literal is what PostgreSQL
// itself makes of the name (quote_literal), including quotes inside it, so
// a query written with it proves the partial index's predicate.
func TestModelLiteralMatchesIndexPredicate(t *testing.T) {
	pool, _ := dbtest.NewPool(t)
	for _, name := range []string{"use-lite-512@1", "it's", "''", "a\\b", "modèle ü"} {
		var want string
		if err := pool.QueryRow(context.Background(), `SELECT quote_literal($1::text)`, name).Scan(&want); err != nil {
			t.Fatal(err)
		}
		// quote_literal writes a name with a backslash as E'…'; with
		// standard_conforming_strings the plain form reads back the same.
		if got := schema.ModelLiteral(name); got != want && !strings.Contains(name, `\`) {
			t.Errorf("ModelLiteral(%q) = %s, PostgreSQL quotes it %s", name, got, want)
		}
		var back string
		if err := pool.QueryRow(context.Background(), `SELECT `+schema.ModelLiteral(name)+`::text`).Scan(&back); err != nil || back != name {
			t.Errorf("%s reads back as %q (%v), want %q", schema.ModelLiteral(name), back, err, name)
		}
	}
}
