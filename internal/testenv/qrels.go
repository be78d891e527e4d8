package testenv

import (
	"os"
	"strings"
	"testing"
)

// ReadQrels reads a BEIR relevance file (query-id, corpus-id, score with a
// header line) and returns query id → the ids of documents judged relevant.
func ReadQrels(t testing.TB, path string) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) < 3 || f[2] == "0" {
			continue
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]bool{}
		}
		out[f[0]][f[1]] = true
	}
	return out
}
