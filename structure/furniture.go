package structure

import (
	"strconv"
	"strings"

	"github.com/stratakb/stratakb/schema"
)

// Page furniture: running heads and footers of paged text (PDF text layers
// and OCR), found by where they sit rather than by what they say. The
// stored text keeps them (offsets stay exact), but they head no section
// (Parse) and never make a passage on their own (the chunker).
const (
	// furnitureZone is how many non-blank lines at the top and at the
	// bottom of a page may be furniture.
	furnitureZone = 2
	// furnitureMinPages is the fewest pages a line must repeat on.
	furnitureMinPages = 3
	// furnitureShare is the share of the pages a line must repeat on, in
	// the same zone: 0.4 lets a book's two alternating heads (its title on
	// even pages, the chapter's on odd ones) each count.
	furnitureShare = 0.4
	// maxFurnitureLen bounds a furniture line; body paragraphs are longer.
	maxFurnitureLen = 120
)

// zoneLine is a candidate line: its span, its page and its zone.
type zoneLine struct {
	start, end int
	page       int
	top        bool
	key        string
	folio      int // the number at either end of the line, or -1
}

// Furniture returns the byte spans of the page furniture in text, a paged
// document's text whose pages are joined by form feeds ("\n\f\n"), in
// order. A line among the first or last two non-blank lines of a page is
// furniture when the same line, page numbers aside, sits in the same zone
// (top or bottom) on at least three pages and 40 % of them ("T.81 (1992 E)"),
// or when it carries the page's printed number at one end, as a book's
// running head does ("SECTION 1.1 HELLO, WORLD 3"): that is when, in its
// zone, the number minus the page's index is one constant on at least three
// pages and 40 % of them. Other formats, and texts of fewer than three
// pages, have none.
func Furniture(text, format string) [][2]int {
	if format != schema.FormatPDF && format != schema.FormatImage {
		return nil
	}
	pages := splitPages(text)
	if len(pages) < furnitureMinPages {
		return nil
	}
	need := max(furnitureMinPages, int(furnitureShare*float64(len(pages))+0.999))
	var cands []zoneLine
	for pi, pg := range pages {
		cands = append(cands, zoneLines(text, pg, pi)...)
	}
	// Rule 1: the same line in the same zone on enough pages.
	type zkey struct {
		top bool
		key string
	}
	pagesOf := map[zkey]map[int]bool{}
	for _, c := range cands {
		if c.key == "" {
			continue
		}
		k := zkey{c.top, c.key}
		if pagesOf[k] == nil {
			pagesOf[k] = map[int]bool{}
		}
		pagesOf[k][c.page] = true
	}
	// Rule 2: a folio whose offset from the page index is constant.
	type okey struct {
		top    bool
		offset int
	}
	offsetPages := map[okey]map[int]bool{}
	for _, c := range cands {
		if c.folio < 0 {
			continue
		}
		k := okey{c.top, c.folio - c.page}
		if offsetPages[k] == nil {
			offsetPages[k] = map[int]bool{}
		}
		offsetPages[k][c.page] = true
	}
	var out [][2]int
	for _, c := range cands {
		if (c.key != "" && len(pagesOf[zkey{c.top, c.key}]) >= need) ||
			(c.folio >= 0 && len(offsetPages[okey{c.top, c.folio - c.page}]) >= need) {
			if n := len(out); n > 0 && out[n-1] == [2]int{c.start, c.end} {
				continue
			}
			out = append(out, [2]int{c.start, c.end})
		}
	}
	return out
}

// splitPages returns the byte spans of the pages of text, split at lines
// that hold only a form feed.
func splitPages(text string) [][2]int {
	var out [][2]int
	start := 0
	for {
		i := strings.Index(text[start:], "\n\f\n")
		if i < 0 {
			return append(out, [2]int{start, len(text)})
		}
		out = append(out, [2]int{start, start + i})
		start += i + 3
	}
}

// zoneLines returns the first and last furnitureZone non-blank lines of the
// page pg (index pi), in text order; a line in both zones comes twice.
func zoneLines(text string, pg [2]int, pi int) []zoneLine {
	type span struct{ s, e int }
	var lines []span
	for pos := pg[0]; pos < pg[1]; {
		end := strings.IndexByte(text[pos:pg[1]], '\n')
		next := pg[1]
		if end < 0 {
			end = pg[1]
		} else {
			end, next = pos+end, pos+end+1
		}
		if strings.TrimSpace(text[pos:end]) != "" {
			lines = append(lines, span{pos, end})
		}
		pos = next
	}
	var out []zoneLine
	for i, l := range lines {
		s := strings.TrimSpace(text[l.s:l.e])
		if len(s) > maxFurnitureLen {
			continue
		}
		first := l.s + strings.Index(text[l.s:l.e], s)
		z := zoneLine{start: first, end: first + len(s), page: pi,
			key: strings.ToLower(boilerKey(s)), folio: folioOf(s)}
		// A short page's line may sit in both zones.
		if i < furnitureZone {
			z.top = true
			out = append(out, z)
		}
		if i >= len(lines)-furnitureZone {
			z.top = false
			out = append(out, z)
		}
	}
	return out
}

// folioOf returns the number at the start or end of a line that also holds
// words ("3 A TUTORIAL INTRODUCTION", "SECTION 1.1 HELLO, WORLD 3"), or -1.
func folioOf(s string) int {
	f := strings.Fields(s)
	if len(f) < 2 {
		return -1
	}
	for _, w := range []string{f[len(f)-1], f[0]} {
		if n, err := strconv.Atoi(w); err == nil && n >= 0 && n < 100000 {
			return n
		}
	}
	return -1
}
