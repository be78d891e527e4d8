package retrieve

import (
	"context"
	"strconv"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/schema/migrate"
)

// TestDefaultParamsMatchDatabase: a row of strata.model_search_params that
// names only some columns gets the others from their SQL DEFAULTs, and a
// model without a row gets DefaultParams; the two must be the same numbers.
func TestDefaultParamsMatchDatabase(t *testing.T) {
	ctx := context.Background()
	pool, _ := dbtest.NewPool(t)
	if _, err := migrate.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	for col, want := range map[string]float64{
		"rrf_k":             float64(p.RRFK),
		"lexical_weight":    p.LexicalWeight,
		"vector_weight":     p.VectorWeight,
		"ef_search":         float64(p.EFSearch),
		"confidence_high":   p.ConfidenceHigh,
		"confidence_medium": p.ConfidenceMedium,
		"min_similarity":    p.MinSimilarity,
	} {
		var def string
		if err := pool.QueryRow(ctx, `SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
			JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			WHERE d.adrelid = 'strata.model_search_params'::regclass AND a.attname = $1`, col).Scan(&def); err != nil {
			t.Fatalf("DEFAULT of model_search_params.%s: %v", col, err)
		}
		got, err := strconv.ParseFloat(def, 64)
		if err != nil {
			t.Fatalf("DEFAULT of model_search_params.%s is %q, not a number", col, def)
		}
		if float32(got) != float32(want) {
			t.Errorf("model_search_params.%s DEFAULT is %s, DefaultParams says %v", col, def, want)
		}
	}
}
