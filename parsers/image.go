package parsers

/*
#cgo LDFLAGS: -llept
#include <stdlib.h>
#include <leptonica/allheaders.h>

// tiffPagePNG decodes page n (0-based) of a TIFF and re-encodes it as PNG,
// so that each page of a multi-page TIFF can be OCR'd on its own.
static unsigned char *tiffPagePNG(const unsigned char *data, size_t size, int n, size_t *outsize) {
	PIX *pix = pixReadMemTiff(data, size, n);
	if (pix == NULL) return NULL;
	l_uint8 *out = NULL;
	if (pixWriteMemPng(&out, outsize, pix, 0) != 0) {
		pixDestroy(&pix);
		return NULL;
	}
	pixDestroy(&pix);
	return out;
}
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig checks JPEG files before OCR
	_ "image/png"  // and PNG files
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/stratakb/stratakb/schema"
)

// maxTIFFPages bounds the pages read from one multi-page TIFF.
const maxTIFFPages = 1000

var quietLeptonica sync.Once

// parseImage OCRs a PNG, JPEG or TIFF file. Each page of a multi-page TIFF
// becomes a page of the document, joined like PDF pages.
func parseImage(ctx context.Context, path string, data []byte, modTime time.Time, opt Options) (*schema.ParsedDoc, error) {
	name := filepath.Base(path)
	if len(data) == 0 {
		return nil, permanentf("parse image %s: empty file (0 bytes)", name)
	}
	quietLeptonica.Do(func() { C.setMsgSeverity(C.L_SEVERITY_NONE) })

	var images [][]byte
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		if _, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil {
			return nil, permanentf("parse image %s: corrupt image: %w", name, err)
		}
		images = [][]byte{data}
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		n, err := tiffPageCount(data)
		if err != nil {
			return nil, permanentf("parse image %s: corrupt TIFF: %w", name, err)
		}
		if n == 1 {
			images = [][]byte{data}
			break
		}
		for i := range n {
			png, err := tiffPage(data, i)
			if err != nil {
				return nil, permanentf("parse image %s: TIFF page %d: %w", name, i+1, err)
			}
			images = append(images, png)
		}
	default:
		return nil, permanentf("parse image %s: not a PNG, JPEG or TIFF image", name)
	}

	doc := &schema.ParsedDoc{Format: schema.FormatImage, Meta: map[string]string{}}
	doc.Date, doc.DateSource = fileDate(modTime)
	pages := make([]pageResult, len(images))
	if opt.NoOCR {
		for i := range pages {
			pages[i] = pageResult{Method: methodFailed, Why: "an image has no text layer"}
		}
		doc.Warnings = append(doc.Warnings, "OCR is off: the image's text was not read")
		fillImageDoc(doc, pages)
		return doc, nil
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var fatal error
	work := make(chan int)
	for range min(opt.Concurrency, len(images)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res, err := ocrImage(opt.OCRLanguage, images[i], false)
				mu.Lock()
				switch {
				case err != nil && strings.Contains(err.Error(), "PixImage is not set"):
					if fatal == nil {
						fatal = permanentf("parse image %s: image cannot be decoded", name)
					}
				case err != nil:
					if fatal == nil {
						fatal = fmt.Errorf("parse image %s: %w", name, err)
					}
				case !judgeText(res.Text).OK:
					pages[i] = pageResult{Method: methodBlank}
				default:
					pages[i] = pageResult{Text: res.Text, Method: methodOCR, Confidence: res.Confidence}
				}
				mu.Unlock()
			}
		}()
	}
	for i := range images {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fatal != nil {
		return nil, fatal
	}
	fillImageDoc(doc, pages)
	for _, w := range pdfWarnings(pages, opt) {
		if !strings.Contains(w, "text from OCR") {
			doc.Warnings = append(doc.Warnings, w)
		}
	}
	return doc, nil
}

func fillImageDoc(doc *schema.ParsedDoc, pages []pageResult) {
	p := assemblePDF(pages, Options{})
	doc.Text, doc.Pages = p.Text, p.Pages
	for i := range doc.Pages {
		doc.Pages[i].TextOrigin = schema.OriginOCR
	}
}

// tiffPage returns page i (0-based) of a TIFF as PNG.
func tiffPage(data []byte, i int) ([]byte, error) {
	var size C.size_t
	cdata := C.CBytes(data)
	defer C.free(cdata)
	out := C.tiffPagePNG((*C.uchar)(cdata), C.size_t(len(data)), C.int(i), &size)
	if out == nil {
		return nil, errors.New("cannot be decoded")
	}
	defer C.lept_free(unsafe.Pointer(out))
	return C.GoBytes(unsafe.Pointer(out), C.int(size)), nil
}

// tiffPageCount follows the chain of image file directories in a TIFF's
// header to count its pages.
func tiffPageCount(data []byte) (int, error) {
	if len(data) < 8 {
		return 0, errors.New("truncated header")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if data[0] == 'M' {
		bo = binary.BigEndian
	}
	off := int64(bo.Uint32(data[4:8]))
	seen := map[int64]bool{}
	n := 0
	for off != 0 {
		if seen[off] || off+2 > int64(len(data)) {
			if n == 0 {
				return 0, errors.New("bad directory offset")
			}
			break // a broken chain after page 1: read what is there
		}
		seen[off] = true
		entries := int64(bo.Uint16(data[off : off+2]))
		next := off + 2 + 12*entries
		if next+4 > int64(len(data)) {
			if n == 0 {
				return 0, errors.New("truncated directory")
			}
			break
		}
		n++
		if n >= maxTIFFPages {
			break
		}
		off = int64(bo.Uint32(data[next : next+4]))
	}
	return n, nil
}
