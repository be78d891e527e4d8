package parsers

/*
#cgo LDFLAGS: -llept
#include <stdlib.h>
#include <leptonica/allheaders.h>

// straightenPage decodes an image, turns it a quarter turn when its text
// lines run up and down, a half turn when its text is upside down, and by
// its skew angle when that is at least minSkew degrees, and returns the
// result as an 8-bit grey PNG. It returns NULL with *changed 0 when the
// image is upright and straight enough, and NULL with *changed -1 when it
// cannot be decoded. *quads is the number of clockwise quarter turns made,
// *skew the angle (degrees) it was turned by and *conf the confidence of
// that angle.
static unsigned char *straightenPage(const unsigned char *data, size_t size, float minSkew, float minConf,
		size_t *outsize, int *changed, int *quads, float *skew, float *conf) {
	*changed = -1;
	*quads = 0;
	*skew = 0;
	*conf = 0;
	PIX *pixs = pixReadMem(data, size);
	if (pixs == NULL) return NULL;
	PIX *pix8 = pixConvertTo8(pixs, 0);
	pixDestroy(&pixs);
	if (pix8 == NULL) return NULL;
	PIX *pix1 = pixConvertTo1(pix8, 128);
	PIX *pix1r = pix1 ? pixRotate90(pix1, 1) : NULL;
	if (pix1 == NULL || pix1r == NULL) {
		pixDestroy(&pix8); pixDestroy(&pix1); pixDestroy(&pix1r);
		return NULL;
	}
	*changed = 0;

	// Text lines give a sharp skew score along their direction: the
	// direction (as scanned or a quarter turn) that scores higher is the
	// one the lines run in.
	l_float32 a0 = 0, c0 = 0, a90 = 0, c90 = 0;
	if (pixFindSkew(pix1, &a0, &c0) != 0) c0 = 0;
	if (pixFindSkew(pix1r, &a90, &c90) != 0) c90 = 0;
	l_float32 angle = a0, c = c0;
	if (c90 >= minConf && c90 > 2 * c0) {
		PIX *t = pixRotate90(pix8, 1);
		pixDestroy(&pix8);
		pix8 = t;
		pixDestroy(&pix1);
		pix1 = pix1r;
		pix1r = NULL;
		angle = a90;
		c = c90;
		*quads = 1;
	}
	pixDestroy(&pix1r);
	*conf = c;
	if (pix8 != NULL && c >= minConf && (angle >= minSkew || angle <= -minSkew)) {
		PIX *t = pixRotate(pix8, 3.14159265f / 180.0f * angle, L_ROTATE_AREA_MAP, L_BRING_IN_WHITE, 0, 0);
		pixDestroy(&pix8);
		pix8 = t;
		pixDestroy(&pix1);
		pix1 = pix8 ? pixConvertTo1(pix8, 128) : NULL;
		*skew = angle;
	}
	// Upside down: leptonica's count of ascenders against descenders, with
	// its own default thresholds for a confident decision.
	l_float32 upconf = 0, leftconf = 0;
	l_int32 orient = L_TEXT_ORIENT_UNKNOWN;
	if (pix1 != NULL && pixOrientDetect(pix1, &upconf, &leftconf, 0, 0) == 0 &&
			makeOrientDecision(upconf, leftconf, 0, 0, &orient, 0) == 0 && orient == L_TEXT_ORIENT_DOWN) {
		PIX *t = pixRotate180(NULL, pix8);
		pixDestroy(&pix8);
		pix8 = t;
		*quads += 2;
	}
	pixDestroy(&pix1);
	if (pix8 == NULL) {
		*changed = -1;
		return NULL;
	}
	if (*quads == 0 && *skew == 0) {
		pixDestroy(&pix8);
		return NULL;
	}
	l_uint8 *out = NULL;
	if (pixWriteMemPng(&out, outsize, pix8, 0) != 0) {
		pixDestroy(&pix8);
		*changed = -1;
		return NULL;
	}
	pixDestroy(&pix8);
	*changed = 1;
	return out;
}
*/
import "C"

import (
	"unsafe"
)

// Page segmentation finds columns by the white space that runs down the page
// between them. On a two-column scan skewed by a few degrees that gutter no
// longer runs straight down: tesseract (library and command line alike, with
// or without orientation detection, --psm 1) then reads lines across both
// columns, at character accuracy 0.26-0.36 on the test page skewed by -4 or
// -5 degrees, and a page fed sideways and askew fares no better. So each page
// is straightened before OCR, as a scanner's deskew would: turned upright
// and rotated back by its skew angle, both measured by leptonica (the image
// library tesseract reads with) on a binarised copy.
const (
	// minSkew is the smallest skew (degrees) worth correcting: below it the
	// gutter stays clear and tesseract reads the page as it is, and leaving
	// it alone spares a rotation and a PNG encoding.
	minSkew = 0.5
	// minSkewConf is the confidence below which leptonica's skew angle is
	// not trusted (its own threshold for deskewing).
	minSkewConf = 3.0
)

// straightening says what straighten did to a page.
type straightening struct {
	Quads int     // clockwise quarter turns
	Skew  float64 // degrees turned to undo the skew; 0 if not turned
	Conf  float64 // confidence of the skew angle
}

// straighten returns img turned upright and deskewed as a grey PNG, or img
// itself when it is upright and straight enough or cannot be decoded (OCR
// then reports why).
func straighten(img []byte) ([]byte, straightening) {
	quietLeptonica.Do(func() { C.setMsgSeverity(C.L_SEVERITY_NONE) })
	if len(img) == 0 {
		return img, straightening{}
	}
	var (
		size    C.size_t
		changed C.int
		quads   C.int
		skew    C.float
		conf    C.float
	)
	cdata := C.CBytes(img)
	defer C.free(cdata)
	out := C.straightenPage((*C.uchar)(cdata), C.size_t(len(img)), C.float(minSkew), C.float(minSkewConf),
		&size, &changed, &quads, &skew, &conf)
	s := straightening{Quads: int(quads), Skew: float64(skew), Conf: float64(conf)}
	if out == nil || changed != 1 {
		return img, s
	}
	defer C.lept_free(unsafe.Pointer(out))
	return C.GoBytes(unsafe.Pointer(out), C.int(size)), s
}
