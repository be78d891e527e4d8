package main

import (
	"strings"
	"testing"
)

// TestSkipsAreCounted: `make test` on a clone without ../shared said ok
// while tests skipped without a word (issue 32, item 16). The summary line
// counts them and names STRATA_SHARED_DIR; a failing test's output and the
// package verdicts pass through, passing tests' chatter does not.
func TestSkipsAreCounted(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"run","Package":"a","Test":"TestShared"}`,
		`{"Action":"output","Package":"a","Test":"TestShared","Output":"=== RUN   TestShared\n"}`,
		`{"Action":"output","Package":"a","Test":"TestShared","Output":"    corpus_test.go:20: skipped: the shared folder (set STRATA_SHARED_DIR): stat ../shared: no such file\n"}`,
		`{"Action":"skip","Package":"a","Test":"TestShared"}`,
		`{"Action":"output","Package":"a","Test":"TestEval","Output":"    eval_test.go:51: STRATA_SHARED_DIR is not set\n"}`,
		`{"Action":"skip","Package":"a","Test":"TestEval"}`,
		`{"Action":"output","Package":"a","Test":"TestSlow","Output":"    slow_test.go:9: set STRATA_EVAL=1\n"}`,
		`{"Action":"skip","Package":"a","Test":"TestSlow"}`,
		`{"Action":"output","Package":"a","Test":"TestFine","Output":"=== RUN   TestFine\n--- PASS: TestFine (0.00s)\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestFine"}`,
		`{"Action":"output","Package":"a","Output":"PASS\n"}`,
		`{"Action":"output","Package":"a","Output":"ok  \ta\t0.01s\n"}`,
		`{"Action":"output","Package":"b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n    b_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"b","Test":"TestBroken"}`,
		`{"Action":"output","Package":"b","Output":"FAIL\tb\t0.01s\n"}`,
		`# not json`,
	}, "\n")
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"ok  \ta\t0.01s\n", "--- FAIL: TestBroken", "b_test.go:3: boom", "FAIL\tb\t0.01s\n", "# not json\n",
		"test.sh: 3 tests skipped; 2 need the shared corpus and model folder, which is not there (set STRATA_SHARED_DIR",
		"; 1 for other reasons"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"TestFine", "=== RUN", "PASS\n"} {
		if strings.Contains(got, not) {
			t.Errorf("output holds %q:\n%s", not, got)
		}
	}
	if n := strings.Count(got, "tests skipped"); n != 1 {
		t.Errorf("%d summary lines, want 1:\n%s", n, got)
	}
}
