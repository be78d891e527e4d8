package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// `queryd search --top-k 0` used to search with the default of 5: a number
// out of range is a usage error, before any database is touched.
func TestSearchTopKOutOfRangeIsUsageError(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, k := range []string{"0", "-1", "51"} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"search", "leave", "--top-k", k}, noEnv, strings.NewReader(""), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "top_k") || !strings.Contains(stderr.String(), "from 1 to 50") {
			t.Errorf("--top-k %s: exit %d, stderr %q; want exit 2 naming the range", k, code, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("--top-k %s: printed %q", k, stdout.String())
		}
	}
}
