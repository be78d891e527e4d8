package parsers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/testenv"
)

func corpusFile(tb testing.TB, rel string) (string, []byte) {
	tb.Helper()
	path := filepath.Join(testenv.SharedDir(tb), "corpora", rel)
	testenv.Require(tb, path, "corpus file "+rel)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, data
}

// BenchmarkPDFText measures text-layer extraction (Go reader with pdftotext
// fallbacks, OCR off) on the 186-page ITU-T T.81.
func BenchmarkPDFText(b *testing.B) {
	path, data := corpusFile(b, "pdf-text/itu-t81.pdf")
	pages := 0
	start := time.Now()
	for b.Loop() {
		doc, err := Parse(context.Background(), path, data, time.Time{}, Options{NoOCR: true})
		if err != nil {
			b.Fatal(err)
		}
		pages += len(doc.Pages)
	}
	b.ReportMetric(float64(pages)/time.Since(start).Seconds(), "pages/s")
}

// BenchmarkOCR measures the whole OCR path (render with pdftoppm at 300 dpi,
// tesseract one thread per page, two pages at once) on the 18-page scan.
func BenchmarkOCR(b *testing.B) {
	path, data := corpusFile(b, "pdf-scanned/HL1396.pdf")
	pages := 0
	start := time.Now()
	for b.Loop() {
		doc, err := Parse(context.Background(), path, data, time.Time{}, Options{Concurrency: 2})
		if err != nil {
			b.Fatal(err)
		}
		pages += len(doc.Pages)
	}
	b.ReportMetric(float64(pages)/time.Since(start).Seconds(), "pages/s")
}

// TestOCRVersusCLI compares in-process OCR (gosseract, two workers) with two
// concurrent single-threaded tesseract CLI processes on the same pages of
// HL1396.pdf rendered once at 300 dpi. STRATA_EVAL=1 only; needs the
// tesseract CLI (Debian package tesseract-ocr, a development tool here).
func TestOCRVersusCLI(t *testing.T) {
	if os.Getenv("STRATA_EVAL") != "1" {
		t.Skip("set STRATA_EVAL=1 to compare with the tesseract CLI")
	}
	if _, err := exec.LookPath("tesseract"); err != nil {
		testenv.Missing(t, "tesseract CLI (apt-get install tesseract-ocr)")
	}
	path, _ := corpusFile(t, "pdf-scanned/HL1396.pdf")
	dir := t.TempDir()
	renderStart := time.Now()
	if out, err := exec.Command("pdftoppm", "-r", "300", "-gray", "-png", path, filepath.Join(dir, "p")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	renderDur := time.Since(renderStart)
	files, _ := filepath.Glob(filepath.Join(dir, "p*.png"))
	sort.Strings(files)
	imgs := make([][]byte, len(files))
	for i, f := range files {
		imgs[i], _ = os.ReadFile(f)
	}
	// Warm up: load the language model into a pooled client per worker.
	for range 2 {
		if _, err := ocrImage("eng", imgs[0], true); err != nil {
			t.Fatal(err)
		}
	}

	run := func(do func(i int)) time.Duration {
		start := time.Now()
		next := make(chan int)
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					do(i)
				}
			}()
		}
		for i := range imgs {
			next <- i
		}
		close(next)
		wg.Wait()
		return time.Since(start)
	}

	cpu0 := testenv.ProcessCPU()
	words := 0
	var mu sync.Mutex
	inproc := run(func(i int) {
		res, err := ocrImage("eng", imgs[i], true)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		words += res.Words
		mu.Unlock()
	})
	inprocCPU := testenv.ProcessCPU() - cpu0

	cli := run(func(i int) {
		cmd := exec.Command("tesseract", files[i], "-")
		cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("tesseract: %v: %s", err, out)
		}
	})
	n := float64(len(imgs))
	report := fmt.Sprintf(`
pages: %d (rendered at 300 dpi in %.1f s, %.2f s/page on one core)
in-process (gosseract, 2 workers): %.1f s, %.2f pages/s, CPU %.1f s (%.2f cores busy), %d words
tesseract CLI (2 processes, OMP_THREAD_LIMIT=1): %.1f s, %.2f pages/s
throughput ratio in-process / CLI: %.0f %%`,
		len(imgs), renderDur.Seconds(), renderDur.Seconds()/n,
		inproc.Seconds(), n/inproc.Seconds(), inprocCPU.Seconds(), inprocCPU.Seconds()/inproc.Seconds(), words,
		cli.Seconds(), n/cli.Seconds(),
		100*cli.Seconds()/inproc.Seconds())
	t.Log(report)
}
