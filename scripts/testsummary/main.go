// Command testsummary reads `go test -json` on stdin and prints what plain
// `go test` prints (each package's ok or FAIL line, build errors, and the
// output of the tests that failed), then one line counting the skipped
// tests, with the reason for those that need the shared folder
// (STRATA_SHARED_DIR). `make test` ran on a clone without ../shared and
// said ok while 22 call sites skipped without a word (issue 32, item 16).
// scripts/test.sh pipes `go test -json ./...` through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}

// sharedMarker is what a test's skip message says when it needs the shared
// folder (internal/testenv.SharedDir and the tests that read the variable).
const sharedMarker = "STRATA_SHARED_DIR"

func run(in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	defer w.Flush()
	buf := map[string]*strings.Builder{} // a running test's output, by package and name
	shared, other := 0, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet's or the linker's own words): as it is.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			w.WriteString(e.Output)
		case e.Test == "" && e.Action == "output":
			// A package's own lines: keep its verdict and whatever a
			// failing binary said, not the -v chatter.
			if o := strings.TrimSpace(e.Output); o != "PASS" && !strings.HasPrefix(o, "=== ") {
				w.WriteString(e.Output)
			}
		case e.Action == "output":
			b := buf[key]
			if b == nil {
				b = &strings.Builder{}
				buf[key] = b
			}
			b.WriteString(e.Output)
		case e.Action == "fail" && e.Test != "":
			if b := buf[key]; b != nil {
				w.WriteString(b.String())
			}
			delete(buf, key)
		case e.Action == "skip" && e.Test != "":
			if b := buf[key]; b != nil && strings.Contains(b.String(), sharedMarker) {
				shared++
			} else {
				other++
			}
			delete(buf, key)
		case e.Action == "pass" && e.Test != "":
			delete(buf, key)
		}
		w.Flush()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read go test -json: %w", err)
	}
	fmt.Fprintln(w, summary(shared, other))
	return nil
}

// summary is the one line about skipped tests.
func summary(shared, other int) string {
	s := fmt.Sprintf("test.sh: %d tests skipped", shared+other)
	if shared > 0 {
		s += fmt.Sprintf("; %d need the shared corpus and model folder, which is not there (set STRATA_SHARED_DIR to it; the default is ../shared beside the checkout)", shared)
	}
	if other > 0 {
		s += fmt.Sprintf("; %d for other reasons (go test -v -run NAME ./PACKAGE/ says why)", other)
	}
	return s
}
