package parsers

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// The Go reader's own text extraction (pdf.Page.GetPlainText) writes a line
// break only at BT and T*: a page that moves to the next line with Td, TD or
// Tm, as most word processors' PDFs do, comes out as a few long lines with
// clause headings in their middle, and words at line ends glued to the next
// line's first word. pageText interprets the content stream itself, tracks
// where each string is drawn and breaks lines and words by position.
const (
	// lineBreakShift is how far, as a fraction of the larger of the two
	// font sizes, the baseline must move across the writing direction for
	// a new line. Superscripts and subscripts rise or drop by about a third
	// of the font size; consecutive lines are a font size or more apart.
	lineBreakShift = 0.5
	// blockGap: a baseline move of more than blockGap times the page's
	// line spacing ends a block. Over the corpus the usual spacing is
	// 1.0–1.4 font sizes (the most common move of each document), and the
	// moves before headings and between paragraphs are 1.3–2.1 times it
	// (parsers/README.md, "Lines and words").
	blockGap = 1.3
	// The page's line spacing is the most common downward baseline move
	// under maxLeading font sizes, in bins of leadingBin, when at least
	// minLeadingLines moves are seen; else defaultLeading.
	maxLeading      = 3.0
	leadingBin      = 0.05
	minLeadingLines = 3
	defaultLeading  = 1.2
	// dupShift is how close, as a fraction of the font size, the same
	// glyph drawn again on a line must lie to be a copy (fake bold, a drop
	// shadow) that is written once; a glyph's own width is far more.
	dupShift = 0.1
	// approxAdvance is the advance, in thousandths of the font size, of a
	// glyph whose width the font does not give.
	approxAdvance = 500
	// maxApproxGap is the TJ adjustment, in thousandths of the font size,
	// that counts as a space in a font without widths (where the gap after
	// a string cannot be measured).
	maxApproxGap = -200
)

// wordBreakGap is the gap between the end of one glyph and the start of the
// next on a line, as a fraction of the font size, that makes a space. It was
// chosen by TestEvalWordGaps against pdftotext's words (parsers/README.md,
// "Lines and words"); a variable only so that the measurement can vary it.
var wordBreakGap = 0.10

// affine is a PDF transformation matrix [a b c d e f]: a point (x, y) maps
// to (a·x + c·y + e, b·x + d·y + f).
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

// then returns the transformation m followed by n (PDF's m × n).
func (m affine) then(n affine) affine {
	return affine{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

func translate(x, y float64) affine { return affine{1, 0, 0, 1, x, y} }

// textFont is what pageText needs of a font: its decoder and glyph widths.
type textFont struct {
	enc     pdf.TextEncoding
	twoByte bool      // codes are two bytes (a Type0 font)
	first   int       // first code of widths
	widths  []float64 // simple font widths, glyph units
	cid     map[int]float64
	dw      float64 // Type0 default width
	scale   float64 // glyph units to text space (FontMatrix[0]; 0.001 but for Type3)
	known   bool    // the font gives widths
}

func newTextFont(f *pdf.Font) *textFont {
	tf := &textFont{enc: f.Encoder(), scale: 0.001}
	if tf.enc == nil {
		tf.enc = noDecode{}
	}
	v := f.V
	switch v.Key("Subtype").Name() {
	case "Type0":
		tf.twoByte = true
		d := v.Key("DescendantFonts").Index(0)
		tf.dw = 1000
		if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			tf.dw = dw.Float64()
		}
		tf.cid = map[int]float64{}
		w := d.Key("W")
		for i := 0; i < w.Len() && len(tf.cid) < 1<<16; {
			c := int(w.Index(i).Float64())
			if i+1 < w.Len() && w.Index(i+1).Kind() == pdf.Array {
				a := w.Index(i + 1)
				for j := 0; j < a.Len() && len(tf.cid) < 1<<16; j++ {
					tf.cid[c+j] = a.Index(j).Float64()
				}
				i += 2
				continue
			}
			if i+2 >= w.Len() {
				break
			}
			last, wd := int(w.Index(i+1).Float64()), w.Index(i+2).Float64()
			for c2 := c; c2 <= last && c2-c < 1<<16; c2++ {
				tf.cid[c2] = wd
			}
			i += 3
		}
		tf.known = true
	default:
		if v.Key("Subtype").Name() == "Type3" {
			if fm := v.Key("FontMatrix"); fm.Len() == 6 && fm.Index(0).Float64() > 0 {
				tf.scale = fm.Index(0).Float64()
			}
		}
		ws := v.Key("Widths")
		tf.first = int(v.Key("FirstChar").Int64())
		for i := 0; i < ws.Len() && i < 256; i++ {
			tf.widths = append(tf.widths, ws.Index(i).Float64())
		}
		tf.known = len(tf.widths) > 0
	}
	return tf
}

// noDecode passes codes through, as the library does for a missing font.
type noDecode struct{}

func (noDecode) Decode(raw string) string { return raw }

// advance returns the width of raw in text space units at font size fs, with
// character spacing tc and word spacing tw, before horizontal scaling.
func (f *textFont) advance(raw string, fs, tc, tw float64) float64 {
	var w float64
	step := 1
	if f != nil && f.twoByte {
		step = 2
	}
	for i := 0; i+step <= len(raw); i += step {
		code := int(raw[i])
		if step == 2 {
			code = code<<8 | int(raw[i+1])
		}
		g := approxAdvance * 0.001
		if f != nil && f.known {
			if step == 2 {
				gw, ok := f.cid[code]
				if !ok {
					gw = f.dw
				}
				g = gw * f.scale
			} else if j := code - f.first; j >= 0 && j < len(f.widths) {
				g = f.widths[j] * f.scale
			}
		}
		w += g*fs + tc
		if step == 1 && code == ' ' {
			w += tw
		}
	}
	return w
}

// textState is the part of the graphics state that places text.
type textState struct {
	ctm                       affine
	tc, tw, th, tl, tfs, rise float64
	font                      *textFont
}

// placedGlyph is one glyph's text and where it lies along its line: from x0
// to x1, in device units from the line's first glyph.
type placedGlyph struct {
	text   string
	x0, x1 float64
	size   float64
	approx bool // its font gave no widths: x1 is a guess
	// spaced: the producer moved the pen (a positioning operator, or a TJ
	// adjustment of maxApproxGap or more) just before it. Only glyphs of
	// fonts without widths use it.
	spaced bool
}

// lineWriter collects the glyphs of one line at a time and writes each line
// when the baseline moves: glyphs sorted along the line (a page number
// drawn after the rule it sits in, a table row drawn out of order), the
// same glyph drawn twice at almost the same place (fake bold) once, and a
// space wherever the gap between two glyphs makes one.
type lineWriter struct {
	cur   strings.Builder // the line being written by flush
	lines []string
	// gaps[i] is how far the baseline moved down from line i to line i+1,
	// in font sizes; +Inf for a move up or a turn (a new block).
	gaps []float64
	line []placedGlyph
	// The line's origin and writing direction (u) with its normal (v), in
	// device space, and the baseline and font size of the last glyph.
	ox, oy         float64
	ux, uy, vx, vy float64
	lastAcross     float64
	lastSize       float64
}

// add places a glyph whose origin is (x, y) in device space, advance width
// adv along its writing direction (ux, uy) with normal (vx, vy), font size
// size.
func (w *lineWriter) add(text string, x, y, adv, ux, uy, vx, vy, size float64, approx, spaced bool) {
	if len(w.line) > 0 {
		dx, dy := x-w.ox, y-w.oy
		across := dx*w.vx + dy*w.vy
		sz := math.Max(size, w.lastSize)
		turned := ux*w.ux+uy*w.uy < 0.99
		if turned || math.Abs(across-w.lastAcross) > lineBreakShift*sz {
			down := (w.lastAcross - across) / sz
			if turned || down < 0 {
				down = math.Inf(1)
			}
			w.flush()
			w.gaps = append(w.gaps, down)
		}
	}
	if len(w.line) == 0 {
		w.ox, w.oy = x, y
		w.ux, w.uy, w.vx, w.vy = ux, uy, vx, vy
	}
	dx, dy := x-w.ox, y-w.oy
	along := dx*w.ux + dy*w.uy
	w.lastAcross = dx*w.vx + dy*w.vy
	w.lastSize = size
	w.line = append(w.line, placedGlyph{text: text, x0: along, x1: along + adv, size: size, approx: approx, spaced: spaced})
}

// flush writes the collected line and ends it.
func (w *lineWriter) flush() {
	if len(w.line) == 0 {
		return
	}
	// Where a font gave no widths, where its glyphs end is a guess, and so
	// is their order: such a line stays in the order it was drawn.
	measured := true
	for _, g := range w.line {
		if g.approx {
			measured = false
			break
		}
	}
	if measured {
		sort.SliceStable(w.line, func(i, j int) bool { return w.line[i].x0 < w.line[j].x0 })
	}
	var kept []placedGlyph
	end := math.Inf(-1)
	for _, g := range w.line {
		dup := false
		for k := len(kept) - 1; measured && k >= 0 && math.Abs(g.x0-kept[k].x0) <= dupShift*g.size; k-- {
			if kept[k].text == g.text {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if len(kept) > 0 {
			prev := kept[len(kept)-1]
			var sp bool
			if g.approx || prev.approx {
				sp = g.spaced
			} else {
				sp = g.x0-end > wordBreakGap*math.Max(g.size, prev.size)
			}
			if sp {
				w.space(g.text)
			}
		}
		w.cur.WriteString(g.text)
		kept = append(kept, g)
		end = math.Max(end, g.x1)
	}
	w.lines = append(w.lines, w.cur.String())
	w.cur.Reset()
	w.line = w.line[:0]
}

// space writes a space unless the text on either side already has one.
func (w *lineWriter) space(next string) {
	s := w.cur.String()
	if s == "" {
		return
	}
	last, _ := utf8.DecodeLastRuneInString(s)
	first, _ := utf8.DecodeRuneInString(next)
	if unicode.IsSpace(last) || unicode.IsSpace(first) {
		return
	}
	w.cur.WriteByte(' ')
}

// text returns the page's lines, with a blank line where the baseline moves
// further than the page's usual line spacing (the most common downward
// move) by over blockGap, or moves up: paragraphs, headings and blocks come
// apart as pdftotext sets them apart, and a heading after a line that does
// not end a sentence still starts a paragraph.
func (w *lineWriter) text() string {
	w.flush()
	count := map[int]int{}
	for _, g := range w.gaps {
		if g < maxLeading {
			count[int(math.Round(g/leadingBin))]++
		}
	}
	best, n := 0, 0
	for k, c := range count {
		if c > n || c == n && k < best {
			best, n = k, c
		}
	}
	leading := defaultLeading
	if n >= minLeadingLines {
		leading = float64(best) * leadingBin
	}
	var b strings.Builder
	for i, l := range w.lines {
		if i > 0 {
			b.WriteByte('\n')
			if w.gaps[i-1] > leading*blockGap {
				b.WriteByte('\n')
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// pageText returns the text of a page's content stream, one line per line of
// the page in the order the stream draws them. Form XObjects are not run
// (as in the library); popplerText makes up for the text they hold.
func pageText(p pdf.Page, fonts map[string]*pdf.Font) string {
	if p.V.IsNull() || p.V.Key("Contents").Kind() == pdf.Null {
		return ""
	}
	cache := map[string]*textFont{}
	g := textState{ctm: identity, th: 1}
	var stack []textState
	tm, tlm := identity, identity
	var w lineWriter
	moved := true
	gap := 0.0

	// show draws raw glyph by glyph: letter spacing (Tc), word spacing
	// (Tw) and a font's widths place each glyph, and some producers make
	// the space between two words with nothing else.
	show := func(raw string) {
		f := g.font
		step := 1
		if f != nil && f.twoByte {
			step = 2
		}
		for i := 0; i+step <= len(raw); i += step {
			code := raw[i : i+step]
			trm := affine{g.tfs * g.th, 0, 0, g.tfs, 0, g.rise}.then(tm).then(g.ctm)
			var text string
			if f != nil {
				text = f.enc.Decode(code)
			} else {
				text = code
			}
			approx := f == nil || !f.known
			if !approx && strings.TrimSpace(text) == "" {
				// As pdftotext does, a space glyph only moves the pen:
				// some producers draw a space and then kern back over it,
				// and the gap it leaves decides. In a font without widths
				// the gap cannot be measured, and the space is kept.
				text = ""
			}
			if text != "" {
				ux, uy := trm[0], trm[1]
				if n := math.Hypot(ux, uy); n > 0 {
					ux, uy = ux/n, uy/n
				} else {
					ux, uy = 1, 0
				}
				// The normal follows the matrix when text is skewed or
				// mirrored; for upright text it is (0, 1).
				vx, vy := -uy, ux
				size := math.Hypot(trm[2], trm[3])
				if size > 0 {
					vx, vy = trm[2]/size, trm[3]/size
				} else {
					size = 1
				}
				// The glyph's own advance ends it; letter and word spacing
				// come after it, as a gap before the next glyph.
				gw := f.advance(code, g.tfs, 0, 0) * g.th
				ex, ey := affine{1, 0, 0, 1, gw, g.rise}.then(tm).then(g.ctm).apply(0, 0)
				adv := (ex-trm[4])*ux + (ey-trm[5])*uy
				w.add(text, trm[4], trm[5], adv, ux, uy, vx, vy, size, approx, moved || gap <= maxApproxGap)
				moved, gap = false, 0
			}
			tx := f.advance(code, g.tfs, g.tc, g.tw) * g.th
			tm = translate(tx, 0).then(tm)
		}
	}
	nextLine := func() {
		tlm = translate(0, -g.tl).then(tlm)
		tm = tlm
		moved = true
	}
	num := func(v pdf.Value) float64 { return v.Float64() }

	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "q":
			if len(stack) < 1<<12 {
				stack = append(stack, g)
			}
		case "Q":
			if k := len(stack); k > 0 {
				g = stack[k-1]
				stack = stack[:k-1]
			}
		case "cm":
			if n == 6 {
				var m affine
				for i := range m {
					m[i] = num(args[i])
				}
				g.ctm = m.then(g.ctm)
				moved = true
			}
		case "BT":
			tm, tlm = identity, identity
			moved = true
		case "Tc":
			if n == 1 {
				g.tc = num(args[0])
			}
		case "Tw":
			if n == 1 {
				g.tw = num(args[0])
			}
		case "Tz":
			if n == 1 {
				g.th = num(args[0]) / 100
			}
		case "TL":
			if n == 1 {
				g.tl = num(args[0])
			}
		case "Ts":
			if n == 1 {
				g.rise = num(args[0])
			}
		case "Tf":
			if n == 2 {
				name := args[0].Name()
				tf, ok := cache[name]
				if !ok {
					if f, ok := fonts[name]; ok {
						tf = newTextFont(f)
					}
					cache[name] = tf
				}
				g.font = tf
				g.tfs = num(args[1])
			}
		case "Td", "TD":
			if n == 2 {
				tx, ty := num(args[0]), num(args[1])
				if op == "TD" {
					g.tl = -ty
				}
				tlm = translate(tx, ty).then(tlm)
				tm = tlm
				moved = true
			}
		case "Tm":
			if n == 6 {
				var m affine
				for i := range m {
					m[i] = num(args[i])
				}
				tm, tlm = m, m
				moved = true
			}
		case "T*":
			nextLine()
		case "Tj":
			if n == 1 {
				show(args[0].RawString())
			}
		case "'":
			if n == 1 {
				nextLine()
				show(args[0].RawString())
			}
		case "\"":
			if n == 3 {
				g.tw, g.tc = num(args[0]), num(args[1])
				nextLine()
				show(args[2].RawString())
			}
		case "TJ":
			if n == 1 {
				a := args[0]
				for i := 0; i < a.Len(); i++ {
					x := a.Index(i)
					if x.Kind() == pdf.String {
						show(x.RawString())
						continue
					}
					adj := num(x)
					tm = translate(-adj/1000*g.tfs*g.th, 0).then(tm)
					gap += adj
				}
			}
		}
	})
	return w.text()
}
