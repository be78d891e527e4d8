package parsers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/stratakb/stratakb/schema"
)

// PageSeparator joins the pages of a PDF in ParsedDoc.Text: a form feed on a
// line of its own. Page spans exclude it.
const PageSeparator = "\n\f\n"

// How a PDF page's text was obtained, in the order they are tried.
const (
	methodGo        = "go"        // github.com/ledongthuc/pdf read the text layer
	methodPdftotext = "pdftotext" // poppler's pdftotext read the text layer
	methodOCR       = "ocr"       // the page was rendered and OCR'd
	methodBlank     = "blank"     // nothing found: an empty page
	methodFailed    = "failed"    // every extractor failed; the page is empty
)

// pageResult is what happened to one PDF page.
type pageResult struct {
	Text       string
	Method     string
	Why        string // why the previous extractor was not enough
	Confidence float64
	thin       bool
}

// parsePDF extracts each page's text: the Go reader first, pdftotext where
// the Go reader fails or returns unusable text, OCR where neither finds
// usable text. It also returns what happened to each page.
func parsePDF(ctx context.Context, path string, data []byte, opt Options) (*schema.ParsedDoc, []pageResult, error) {
	name := filepath.Base(path)
	if len(data) == 0 {
		return nil, nil, permanentf("parse pdf %s: empty file (0 bytes)", name)
	}
	if !bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
		return nil, nil, permanentf("parse pdf %s: not a PDF (no %%PDF- header)", name)
	}
	src := &pdfSource{path: path, data: data}
	defer src.cleanup()

	// pdftotext reads the whole document while the Go reader does.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	whole := startPdftotext(pctx, src)

	pages, title, goErr := goExtractBounded(ctx, data)
	if errors.Is(goErr, pdf.ErrInvalidPassword) {
		return nil, nil, permanentf("parse pdf %s: encrypted, needs a password", name)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if goErr != nil {
		// The Go reader could not open the document: ask poppler whether it can.
		n, err := popplerPageCount(ctx, src)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			var pe *permanentError
			if errors.As(err, &pe) {
				return nil, nil, permanentf("parse pdf %s: %w (Go reader: %v)", name, err, goErr)
			}
			return nil, nil, fmt.Errorf("parse pdf %s: %w", name, err)
		}
		pages = make([]pageResult, n)
		for i := range pages {
			pages[i].Why = "Go reader cannot open the file: " + shortErr(goErr)
		}
	}

	// pdftotext for every page: it reads the pages the Go reader could not,
	// and it is the yardstick for the pages the Go reader did read.
	refChars, err := popplerText(ctx, src, pages, whole)
	if err != nil {
		return nil, nil, fmt.Errorf("parse pdf %s: %w", name, err)
	}

	// OCR for every page still without text, and for thin text layers that
	// may sit on a scanned image.
	var ocr []int
	for i, p := range pages {
		if p.Method == "" || p.thin {
			ocr = append(ocr, i)
		}
	}
	if len(ocr) > 0 && !opt.NoOCR {
		if err := ocrPages(ctx, src, pages, ocr, opt); err != nil {
			return nil, nil, fmt.Errorf("parse pdf %s: %w", name, err)
		}
	}
	for i := range pages {
		if pages[i].Method == "" {
			// Without OCR a scanned page cannot be told from a blank one.
			pages[i].Method = methodBlank
			if opt.NoOCR {
				pages[i].Method = methodFailed
			}
		}
	}
	doc := assemblePDF(pages, opt)
	doc.Title = title
	if got := textChars(doc.Text); refChars > 0 && float64(got) < minDocShare*float64(refChars) {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("text may be missing: the stored text holds %d of the %d characters pdftotext reads (%.0f %%)",
			got, refChars, 100*float64(got)/float64(refChars)))
	}
	return doc, pages, nil
}

// goReaderBudget bounds the time the Go reader may take on one document. The
// guards in pdfguard.go stop the loops known in github.com/ledongthuc/pdf;
// should another one show up, the document goes to poppler after this long
// instead of holding its job forever. (The stuck goroutine cannot be stopped
// and keeps running until the process exits.)
var goReaderBudget = 2 * time.Minute

// testHookGoExtract, when set by a test, runs before the Go reader starts.
var testHookGoExtract func()

type goExtractResult struct {
	pages []pageResult
	title string
	err   error
}

// goExtractBounded runs goExtract under goReaderBudget and ctx.
func goExtractBounded(ctx context.Context, data []byte) ([]pageResult, string, error) {
	done := make(chan goExtractResult, 1)
	hook := testHookGoExtract
	go func() {
		if hook != nil {
			hook()
		}
		pages, title, err := goExtract(ctx, data)
		done <- goExtractResult{pages, title, err}
	}()
	timer := time.NewTimer(goReaderBudget)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.pages, r.title, r.err
	case <-ctx.Done():
		return nil, "", ctx.Err()
	case <-timer.C:
		return nil, "", fmt.Errorf("timed out after %v", goReaderBudget)
	}
}

// goExtract reads every page's text layer with github.com/ledongthuc/pdf.
// Pages whose text is unusable are left with an empty Method and a Why. A
// panic inside the library fails that page, or the document when it happens
// while opening.
func goExtract(ctx context.Context, data []byte) (pages []pageResult, title string, err error) {
	r, err := openGo(data)
	if err != nil {
		return nil, "", err
	}
	list, err := goPages(r)
	if err != nil {
		return nil, "", err
	}
	n := len(list)
	if n == 0 {
		return nil, "", errors.New("document has no pages")
	}
	title = goTitle(r)
	pages = make([]pageResult, n)
	for i := range pages {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		text, err := goPageText(list[i])
		if err != nil {
			pages[i].Why = "Go reader failed: " + shortErr(err)
			continue
		}
		q := judgeText(text)
		if !q.OK {
			pages[i].Why = "Go reader: " + q.Reason
			continue
		}
		pages[i] = pageResult{Text: cleanText(text), Method: methodGo, thin: q.Thin}
	}
	return pages, title, nil
}

// goTitle returns the document information dictionary's /Title, if it is
// usable text.
func goTitle(r *pdf.Reader) (title string) {
	defer func() {
		if recover() != nil {
			title = ""
		}
	}()
	t := strings.TrimSpace(cleanText(r.Trailer().Key("Info").Key("Title").Text()))
	if !judgeText(t).OK || len(t) > 300 {
		return ""
	}
	return strings.Join(strings.Fields(t), " ")
}

func openGo(data []byte) (r *pdf.Reader, err error) {
	if err := preflight(data); err != nil {
		return nil, err
	}
	defer func() {
		if x := recover(); x != nil {
			r, err = nil, fmt.Errorf("malformed PDF: %v", x)
		}
	}()
	return pdf.NewReader(bytes.NewReader(data), int64(len(data)))
}

func goPageText(p pdf.Page) (text string, err error) {
	defer func() {
		if x := recover(); x != nil {
			text, err = "", fmt.Errorf("panic: %v", x)
		}
	}()
	if err := checkPage(p); err != nil {
		return "", err
	}
	fonts := map[string]*pdf.Font{}
	for _, name := range p.Fonts() {
		f := p.Font(name)
		fonts[name] = &f
	}
	return pageText(p, fonts), nil
}

// pdfSource gives poppler a file to read: the file at path when it still
// holds the bytes being parsed, else a temporary copy of them.
type pdfSource struct {
	path string
	data []byte
	tmp  string
	once sync.Once
	err  error
}

func (s *pdfSource) file() (string, error) {
	s.once.Do(func() {
		if fi, err := os.Stat(s.path); s.path != "" && err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(s.data)) {
			s.tmp = ""
			return
		}
		f, err := os.CreateTemp("", "strata-*.pdf")
		if err != nil {
			s.err = fmt.Errorf("copy pdf for poppler: %w", err)
			return
		}
		s.tmp = f.Name()
		if _, err := f.Write(s.data); err != nil {
			s.err = fmt.Errorf("copy pdf for poppler: %w", err)
		}
		if err := f.Close(); err != nil && s.err == nil {
			s.err = fmt.Errorf("copy pdf for poppler: %w", err)
		}
	})
	if s.err != nil {
		return "", s.err
	}
	if s.tmp != "" {
		return s.tmp, nil
	}
	return s.path, nil
}

func (s *pdfSource) cleanup() {
	if s.tmp != "" {
		_ = os.Remove(s.tmp)
	}
}

// runTool runs a poppler tool and returns its standard output. A tool that is
// not installed is a transient error (the setup is incomplete, the file is
// not at fault).
func runTool(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s is not installed (Debian package poppler-utils): %w", name, err)
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return stdout.Bytes(), &toolError{tool: name, msg: msg, err: err}
	}
	return stdout.Bytes(), nil
}

// toolError is a poppler tool exiting with an error on this file.
type toolError struct {
	tool, msg string
	err       error
}

func (e *toolError) Error() string {
	if e.msg == "" {
		return e.tool + ": " + e.err.Error()
	}
	return e.tool + ": " + e.msg
}
func (e *toolError) Unwrap() error { return e.err }

var pagesLine = regexp.MustCompile(`(?m)^Pages:\s+(\d+)`)

// popplerPageCount asks pdfinfo for the page count. A file poppler cannot
// open either is corrupt (or needs a password): a permanent error.
func popplerPageCount(ctx context.Context, src *pdfSource) (int, error) {
	f, err := src.file()
	if err != nil {
		return 0, err
	}
	out, err := runTool(ctx, "pdfinfo", f)
	var te *toolError
	if errors.As(err, &te) {
		if strings.Contains(strings.ToLower(te.msg), "password") {
			return 0, permanentf("encrypted, needs a password")
		}
		return 0, permanentf("corrupt PDF: %s", te.msg)
	}
	if err != nil {
		return 0, err
	}
	m := pagesLine.FindSubmatch(out)
	if m == nil {
		return 0, permanentf("corrupt PDF: pdfinfo reports no page count")
	}
	n, _ := strconv.Atoi(string(m[1]))
	if n <= 0 {
		return 0, permanentf("PDF has no pages")
	}
	return n, nil
}

// minGoShare is the share of pdftotext's characters (non-space, ligatures
// counted as the letters they stand for) that the Go reader's text of a page
// must reach to be kept. The Go reader does not run form XObjects (the "Do"
// operator), so text drawn through one, such as a running header, a page's
// whole body or a CID font's glyphs that it cannot map, is missing from its
// text while the rest passes the usable-text test. Over the pdf-text corpus,
// every page the Go reader reads completely holds at least 0.998 of
// pdftotext's characters; the pages that miss a header drawn through a form
// hold 0.55–0.979 (RA_CI.pdf). 0.98 lies between the two.
const minGoShare = 0.98

// goShort is the page warning for a Go-reader text that pdftotext replaced.
var goShort = fmt.Sprintf("Go reader missed text: under %.0f %% of pdftotext's characters", 100*minGoShare)

// minGoTenth: a Go-reader text holding under this share of pdftotext's
// characters (a page read as its running footer alone) is replaced by
// pdftotext's text even when the usable-text test finds fault with that
// text's layout (words or lines run together, a clause number glued to its
// title): the layout costs some structure, keeping the footer costs the
// page. Garbled pdftotext text (undecodable glyphs) replaces nothing.
const minGoTenth = 0.10

// minDocShare is the share of pdftotext's characters under which a
// document's stored text gets a document warning: whatever each page's
// verdict, half the text is missing.
const minDocShare = 0.5

// compareGo judges a page the Go reader read against pdftotext's text of
// it: it keeps the Go text when that holds minGoShare of pdftotext's
// characters, takes pdftotext's text when that is usable (or when the Go
// text holds under minGoTenth and pdftotext's is not garbled), and
// otherwise keeps the Go text with a Why that pdfWarnings reports.
func compareGo(p *pageResult, text string) {
	ref := cleanText(text)
	got, want := textChars(p.Text), textChars(ref)
	if float64(got) >= minGoShare*float64(want) {
		return
	}
	q := judgeText(text)
	switch {
	case q.OK:
		*p = pageResult{Text: ref, Method: methodPdftotext, Why: goShort, thin: q.Thin}
	case float64(got) < minGoTenth*float64(want) && !strings.HasPrefix(q.Reason, "garbled"):
		*p = pageResult{Text: ref, Method: methodPdftotext,
			Why: fmt.Sprintf("Go reader kept under %.0f %% of pdftotext's characters; pdftotext: %s", 100*minGoTenth, q.Reason)}
	default:
		p.Why = fmt.Sprintf("Go reader kept under %.0f %% of pdftotext's characters, and pdftotext's text is unusable: %s", 100*minGoShare, q.Reason)
	}
}

// toolOutput is what a tool run in the background printed, or its error.
type toolOutput struct {
	out []byte
	err error
}

// startPdftotext runs pdftotext over the whole document in the background.
func startPdftotext(ctx context.Context, src *pdfSource) <-chan toolOutput {
	ch := make(chan toolOutput, 1)
	go func() {
		f, err := src.file()
		if err != nil {
			ch <- toolOutput{err: err}
			return
		}
		out, err := runTool(ctx, "pdftotext", "-enc", "UTF-8", f, "-")
		ch <- toolOutput{out, err}
	}()
	return ch
}

// popplerText takes pdftotext's text of the whole document from whole and
// splits it at its form feeds (or runs pdftotext page by page when that split
// does not give one part per page). A page the Go reader left without text
// takes pdftotext's text when that is usable; a page the Go reader did read
// keeps its text unless compareGo prefers pdftotext's. It returns the
// characters pdftotext read over all the pages it read (0 when it read none).
func popplerText(ctx context.Context, src *pdfSource, pages []pageResult, whole <-chan toolOutput) (int, error) {
	var r toolOutput
	select {
	case r = <-whole:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	out, err := r.out, r.err
	f, ferr := src.file()
	if ferr != nil {
		return 0, ferr
	}
	refChars := 0
	texts := map[int]string{}
	failed := map[int]string{}
	var te *toolError
	if err != nil && !errors.As(err, &te) {
		return 0, err
	}
	// pdftotext ends every page with a form feed.
	parts := strings.Split(string(out), "\f")
	var perPage []int
	switch {
	case err == nil && len(parts) == len(pages)+1:
		for i := range pages {
			texts[i] = parts[i]
		}
	case err != nil:
		// poppler failed on the document as a whole: try every page one by
		// one, the ones the Go reader could not read for their text and the
		// ones it did read as the yardstick for what it kept.
		for i := range pages {
			perPage = append(perPage, i)
		}
	default:
		// The page counts disagree: ask for each page by its number.
		for i := range pages {
			perPage = append(perPage, i)
		}
	}
	for _, i := range perPage {
		n := strconv.Itoa(i + 1)
		out, err := runTool(ctx, "pdftotext", "-enc", "UTF-8", "-f", n, "-l", n, f, "-")
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		switch {
		case errors.As(err, &te):
			failed[i] = te.Error()
		case err != nil:
			return 0, err
		default:
			texts[i] = string(out)
		}
	}
	for i := range pages {
		if msg, ok := failed[i]; ok {
			if pages[i].Method == "" {
				pages[i].Why += "; " + msg
			}
			continue
		}
		text, ok := texts[i]
		if !ok {
			continue
		}
		refChars += textChars(cleanText(text))
		if pages[i].Method == methodGo {
			compareGo(&pages[i], text)
			continue
		}
		q := judgeText(text)
		if !q.OK {
			pages[i].Why += "; pdftotext: " + q.Reason
			continue
		}
		pages[i].Text = cleanText(text)
		pages[i].Method = methodPdftotext
		pages[i].thin = q.Thin
	}
	return refChars, nil
}

// ocrPages renders the pages listed in idx with pdftoppm and OCRs them,
// opt.Concurrency pages at a time. A thin text layer is replaced only when
// OCR finds clearly more text than it.
func ocrPages(ctx context.Context, src *pdfSource, pages []pageResult, idx []int, opt Options) error {
	f, err := src.file()
	if err != nil {
		return err
	}
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fatal error
	workers := min(opt.Concurrency, len(idx))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res, why, err := ocrPDFPage(ctx, f, i+1, opt)
				mu.Lock()
				switch {
				case err != nil:
					if fatal == nil {
						fatal = err
					}
				case why != "":
					if pages[i].Method == "" {
						pages[i].Why += "; " + why
					}
				case pages[i].Method == "" || res.Words > 2*len(strings.Fields(pages[i].Text)):
					pages[i] = pageResult{Text: res.Text, Method: methodOCR, Why: pages[i].Why, Confidence: res.Confidence}
					if pages[i].Why == "" {
						pages[i].Why = "text layer almost empty"
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range idx {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fatal
}

// ocrPDFPage renders one page and OCRs it. why is set when the page yields no
// usable text; err only for failures that are not the page's fault
// (cancellation, missing tools, a language tesseract lacks).
func ocrPDFPage(ctx context.Context, file string, num int, opt Options) (res ocrResult, why string, err error) {
	n := strconv.Itoa(num)
	img, err := runTool(ctx, "pdftoppm", "-r", strconv.Itoa(opt.DPI), "-f", n, "-l", n, "-gray", "-png", file)
	var te *toolError
	if errors.As(err, &te) {
		return ocrResult{}, "render failed: " + te.Error(), nil
	}
	if err != nil {
		return ocrResult{}, "", err
	}
	if len(img) == 0 {
		return ocrResult{}, "render produced no image", nil
	}
	res, err = ocrImage(opt.OCRLanguage, img, true)
	if err != nil {
		return ocrResult{}, "", fmt.Errorf("ocr page %d: %w", num, err)
	}
	if q := judgeText(res.Text); !q.OK {
		return ocrResult{}, "OCR: " + q.Reason, nil
	}
	return res, "", nil
}

// assemblePDF joins the pages with PageSeparator and writes the warnings.
func assemblePDF(pages []pageResult, opt Options) *schema.ParsedDoc {
	doc := &schema.ParsedDoc{Format: schema.FormatPDF, Meta: map[string]string{}}
	var b strings.Builder
	for i, p := range pages {
		if i > 0 {
			b.WriteString(PageSeparator)
		}
		start := b.Len()
		b.WriteString(p.Text)
		pg := schema.Page{Number: i + 1, Start: start, End: b.Len(), TextOrigin: schema.OriginText}
		if p.Method == methodOCR {
			pg.TextOrigin = schema.OriginOCR
			pg.OCRConfidence = p.Confidence
		}
		doc.Pages = append(doc.Pages, pg)
	}
	doc.Text = b.String()
	doc.Warnings = pdfWarnings(pages, opt)
	return doc
}

// pdfWarnings groups pages by what happened to them, e.g.
// "pages 3-5, 9: text from OCR (Go reader: no text; pdftotext: no text)".
func pdfWarnings(pages []pageResult, opt Options) []string {
	type group struct {
		pages []int
		conf  float64
	}
	groups := map[string]*group{}
	for i, p := range pages {
		var msg string
		switch p.Method {
		case methodGo:
			if p.Why == "" {
				continue
			}
			msg = "text from the Go reader, which may miss text (" + p.Why + ")"
		case methodPdftotext:
			msg = "text from pdftotext (" + p.Why + ")"
		case methodOCR:
			msg = "text from OCR (" + strings.TrimPrefix(p.Why, "; ") + ")"
		case methodBlank:
			msg = "blank page, no text found"
		case methodFailed:
			msg = "no usable text layer and OCR is off (" + p.Why + ")"
		}
		g := groups[msg]
		if g == nil {
			g = &group{}
			groups[msg] = g
		}
		g.pages = append(g.pages, i+1)
		g.conf += p.Confidence
	}
	var out []string
	for msg, g := range groups {
		if strings.HasPrefix(msg, "text from OCR") {
			msg = fmt.Sprintf("%s, mean confidence %.0f", msg, g.conf/float64(len(g.pages)))
		}
		out = append(out, pageRanges(g.pages)+": "+msg)
	}
	sort.Strings(out)
	return out
}

// pageRanges formats sorted page numbers as "page 3" or "pages 1-4, 7".
func pageRanges(p []int) string {
	var parts []string
	for i := 0; i < len(p); {
		j := i
		for j+1 < len(p) && p[j+1] == p[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(p[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", p[i], p[j]))
		}
		i = j + 1
	}
	if len(p) == 1 {
		return "page " + parts[0]
	}
	return "pages " + strings.Join(parts, ", ")
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return strings.ToValidUTF8(s, "")
}
