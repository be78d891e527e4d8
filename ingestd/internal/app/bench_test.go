package app

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// BenchmarkIngestPeakRSS builds ingestd, writes a text file that is one line
// of words with no sentence end (63 MB, or STRATA_BENCH_FILE_MB), and runs
// `ingestd add DIR --layer L --wait` on it, once per iteration into a new
// layer, without the embedding model (parse, chunk and store: what a file's
// size drives). It reports the process's peak resident set size (the
// "Maximum resident set size" of /usr/bin/time -v), its ratio to the file's
// size, and the run's seconds.
func BenchmarkIngestPeakRSS(b *testing.B) {
	url := dbtest.NewDatabase(b)
	mb := 63
	if v := os.Getenv("STRATA_BENCH_FILE_MB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("STRATA_BENCH_FILE_MB=%q: want a whole number of megabytes", v)
		}
		mb = n
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "ingestd")
	build := exec.Command("go", "build", "-o", bin, "github.com/stratakb/stratakb/ingestd")
	build.Dir = testenv.RepoRoot(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ingestd: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "docs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	size := writeOneLine(b, filepath.Join(dir, "one-line.txt"), mb<<20)
	var peak []float64
	var secs float64
	run := 0
	for b.Loop() {
		run++
		cmd := exec.Command(bin, "add", dir, "--layer", fmt.Sprintf("rss-%d", run), "--wait")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+url, "STRATA_MODEL_DIR="+filepath.Join(tmp, "no-model"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("ingestd add: %v\n%s", err, out.String())
		}
		secs += time.Since(start).Seconds()
		if !bytes.Contains(out.Bytes(), []byte("1 added")) {
			b.Fatalf("ingestd add did not add the file:\n%s", out.String())
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			b.Fatal("no resource usage for the ingestd process")
		}
		peak = append(peak, float64(ru.Maxrss)/1024) // kilobytes on Linux
	}
	sort.Float64s(peak)
	mib := peak[len(peak)/2]
	b.ReportMetric(mib, "peak-RSS-MiB")
	b.ReportMetric(mib*(1<<20)/float64(size), "RSS/file")
	b.ReportMetric(secs/float64(len(peak)), "s/file")
	b.ReportMetric(0, "ns/op")
}

// writeOneLine writes about n bytes of words separated by spaces, with no
// sentence end and no line break, and returns the size written.
func writeOneLine(b *testing.B, path string, n int) int {
	words := []string{"the", "leave", "policy", "days", "carried", "over", "employee", "manager", "request",
		"approval", "annual", "holiday", "budget", "office", "travel", "expense", "report", "quarter"}
	r := rand.New(rand.NewSource(1))
	buf := make([]byte, 0, n+16)
	for len(buf) < n {
		buf = append(buf, words[r.Intn(len(words))]...)
		buf = append(buf, ' ')
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	return len(buf)
}
