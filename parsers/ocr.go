package parsers

/*
#cgo LDFLAGS: -lgomp
void omp_set_max_active_levels(int);
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/otiai10/gosseract/v2"
)

// Tesseract is built with OpenMP and would start several threads per page.
// Parallelism comes from OCR-ing pages concurrently instead, one thread each:
// OMP_THREAD_LIMIT=1 only works when set before the process starts (libgomp
// reads it when it loads), so each OCR call also turns nested and top-level
// OpenMP parallelism off for its own OS thread with
// omp_set_max_active_levels(0), which makes every parallel region run on the
// calling thread alone.
var setOMPEnv sync.Once

// ocrSlots bounds concurrent OCR calls across all Parse calls.
var ocrSlots = make(chan struct{}, runtime.NumCPU())

// ompSingleThread is false only in the test that measures its effect.
var ompSingleThread = true

// ocrResult is the text tesseract read from one image.
type ocrResult struct {
	Text       string
	Confidence float64 // mean word confidence, 0–100
	Words      int
}

// clientPool keeps initialised tesseract clients per language between calls:
// loading a language model costs more than OCR-ing a small image.
var clientPool = struct {
	sync.Mutex
	idle map[string][]*gosseract.Client
}{idle: map[string][]*gosseract.Client{}}

func getClient(lang string) (*gosseract.Client, bool) {
	clientPool.Lock()
	defer clientPool.Unlock()
	if cs := clientPool.idle[lang]; len(cs) > 0 {
		c := cs[len(cs)-1]
		clientPool.idle[lang] = cs[:len(cs)-1]
		return c, true
	}
	return newClient(lang), false
}

// newClient makes a tesseract client for lang with automatic page
// segmentation (tesseract's PSM_AUTO, the command line's default --psm 3):
// the API's own default is a single uniform block of text (--psm 6), which
// reads a two-column page line by line across both columns. With automatic
// segmentation each column is a block of its own, and the words come back
// block by block, paragraph by paragraph, in reading order.
//
// The mode is set as the variable tessedit_pageseg_mode, which gosseract
// applies after it initialises the API: Client.SetPageSegMode calls
// TessBaseAPI::SetPageSegMode at once, before Init, and Init, loading the
// language, starts from fresh settings and loses it.
func newClient(lang string) *gosseract.Client {
	c := gosseract.NewClient()
	_ = c.SetLanguage(strings.Split(lang, "+")...)
	_ = c.SetVariable(psmVariable, strconv.Itoa(int(gosseract.PSM_AUTO)))
	// Page segmentation reports on stderr what it guesses ("Estimating
	// resolution as 264" for an image without a resolution); the outcome
	// is in the result, so the messages go nowhere.
	_ = c.SetVariable(debugFileVariable, os.DevNull)
	return c
}

const (
	psmVariable       gosseract.SettableVariable = "tessedit_pageseg_mode"
	debugFileVariable gosseract.SettableVariable = "debug_file"
)

func putClient(lang string, c *gosseract.Client) {
	clientPool.Lock()
	defer clientPool.Unlock()
	if len(clientPool.idle[lang]) >= 2*runtime.NumCPU() {
		_ = c.Close()
		return
	}
	clientPool.idle[lang] = append(clientPool.idle[lang], c)
}

// ocrImage recognises the text of one encoded image (PNG, JPEG, TIFF: what
// leptonica reads). trusted says the image came from our own renderer: an
// untrusted image always gets a fresh client, because a pooled client handed
// an image leptonica cannot decode would pass a null image to tesseract,
// whereas a fresh one reports the error.
func ocrImage(lang string, img []byte, trusted bool) (res ocrResult, err error) {
	setOMPEnv.Do(func() {
		if os.Getenv("OMP_THREAD_LIMIT") == "" {
			_ = os.Setenv("OMP_THREAD_LIMIT", "1")
		}
	})
	// At most one tesseract per CPU in the whole process, however many
	// documents are parsed at once.
	ocrSlots <- struct{}{}
	defer func() { <-ocrSlots }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if ompSingleThread {
		C.omp_set_max_active_levels(0)
	}

	var c *gosseract.Client
	if trusted {
		c, _ = getClient(lang)
	} else {
		c = newClient(lang)
	}
	ok := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tesseract panicked: %v", r)
			ok = false
		}
		if ok {
			putClient(lang, c)
		} else {
			_ = c.Close()
		}
	}()
	// Skewed and sideways scans are straightened first (ocrstraighten.go).
	img, _ = straighten(img)
	if err := c.SetImageFromBytes(img); err != nil {
		return ocrResult{}, fmt.Errorf("tesseract: %w", err)
	}
	boxes, err := c.GetBoundingBoxesVerbose()
	if err != nil {
		return ocrResult{}, fmt.Errorf("tesseract: %w", err)
	}
	ok = true
	return assembleOCR(boxes), nil
}

// assembleOCR joins recognised words into lines (one space between words),
// lines into paragraphs (one newline) and paragraphs and blocks with a blank
// line, and averages the word confidences. The words keep the order of
// tesseract's result iterator (block, paragraph, line, word), which is its
// reading order; sorting them by position would interleave columns.
func assembleOCR(boxes []gosseract.BoundingBox) ocrResult {
	var b strings.Builder
	var sum float64
	n := 0
	prevBlock, prevPar, prevLine := -1, -1, -1
	for _, w := range boxes {
		word := strings.TrimSpace(w.Word)
		if word == "" {
			continue
		}
		if n > 0 {
			switch {
			case w.BlockNum != prevBlock || w.ParNum != prevPar:
				b.WriteString("\n\n")
			case w.LineNum != prevLine:
				b.WriteString("\n")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString(word)
		prevBlock, prevPar, prevLine = w.BlockNum, w.ParNum, w.LineNum
		if w.Confidence >= 0 {
			sum += w.Confidence
		}
		n++
	}
	res := ocrResult{Text: cleanText(b.String()), Words: n}
	if n > 0 {
		res.Confidence = sum / float64(n)
	}
	return res
}
