package parsers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Guards around github.com/ledongthuc/pdf. The library recovers its own
// parse panics, but some malformed inputs make it loop forever instead:
//   - a content stream or ToUnicode CMap that ends inside a hex string
//     ("<48656c"): its lexer reads past the end as endless newlines;
//   - a page tree whose Kids or a page whose Parent chain loops back on itself.
// A page that would trigger one of these is not handed to the library; the
// poppler fallback reads it instead.

const (
	maxPageTreeDepth = 64
	maxPageTreeNodes = 200000
	maxParentChain   = 64
	maxStreamBytes   = 64 << 20 // decoded bytes of one page's content streams
)

var errHangRisk = errors.New("content stream ends inside a hex string (the Go reader would loop)")

// goPages lists the leaf pages of the document's page tree in order, walking
// it with bounded depth and size instead of trusting /Count.
func goPages(r *pdf.Reader) (pages []pdf.Page, err error) {
	defer func() {
		if x := recover(); x != nil {
			pages, err = nil, fmt.Errorf("malformed page tree: %v", x)
		}
	}()
	nodes := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		if nodes > maxPageTreeNodes {
			return errors.New("page tree too large")
		}
		if depth > maxPageTreeDepth {
			return errors.New("page tree too deep (a loop?)")
		}
		kids := v.Key("Kids")
		if v.Key("Type").Name() == "Pages" || (v.Key("Type").Name() != "Page" && kids.Kind() == pdf.Array) {
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		if v.Kind() == pdf.Dict {
			pages = append(pages, pdf.Page{V: v})
		}
		return nil
	}
	if err := walk(r.Trailer().Key("Root").Key("Pages"), 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// checkPage returns an error when handing p to the library could hang: a
// looping Parent chain (resources are inherited along it), or a content
// stream or ToUnicode CMap that ends inside a hex string.
func checkPage(p pdf.Page) error {
	v := p.V
	for i := 0; !v.IsNull(); i++ {
		if i > maxParentChain {
			return errors.New("page's Parent chain loops")
		}
		v = v.Key("Parent")
	}
	var streams []pdf.Value
	contents := p.V.Key("Contents")
	if contents.Kind() == pdf.Array {
		for i := 0; i < contents.Len(); i++ {
			streams = append(streams, contents.Index(i))
		}
		// The library reads an array of streams as one stream.
		if err := scanStreams(streams); err != nil {
			return err
		}
	} else if err := scanStreams([]pdf.Value{contents}); err != nil {
		return err
	}
	fonts := p.Resources().Key("Font")
	for _, name := range fonts.Keys() {
		if tu := fonts.Key(name).Key("ToUnicode"); tu.Kind() == pdf.Stream {
			if err := scanStreams([]pdf.Value{tu}); err != nil {
				return fmt.Errorf("font %s: %w", name, err)
			}
		}
	}
	return nil
}

// scanStreams decodes streams as one and checks them with hexHangRisk.
// A stream that cannot be decoded is left to the library, which reports it.
func scanStreams(vs []pdf.Value) error {
	var readers []io.Reader
	for _, v := range vs {
		if v.Kind() == pdf.Stream {
			readers = append(readers, v.Reader())
		}
	}
	if len(readers) == 0 {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(io.MultiReader(readers...), maxStreamBytes+1))
	if len(data) > maxStreamBytes {
		return fmt.Errorf("content stream over %d bytes", maxStreamBytes)
	}
	if err != nil {
		return nil
	}
	if hexHangRisk(data) {
		return errHangRisk
	}
	return nil
}

// hexHangRisk lexes a content stream the way the library does and reports
// whether it ends inside a hex string. It errs on the side of "risk": a
// malformed token the library would abort on is treated as read on.
func hexHangRisk(s []byte) bool {
	isSpace := func(c byte) bool {
		return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
	}
	isHex := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
	i := 0
	for i < len(s) {
		c := s[i]
		i++
		switch c {
		case '%':
			for i < len(s) && s[i] != '\r' && s[i] != '\n' {
				i++
			}
		case '(':
			depth := 1
		str:
			for i < len(s) {
				c := s[i]
				i++
				switch c {
				case '(':
					depth++
				case ')':
					if depth--; depth == 0 {
						break str
					}
				case '\\':
					if i >= len(s) {
						break str
					}
					e := s[i]
					i++
					switch {
					case e == 'n' || e == 'r' || e == 'b' || e == 't' || e == 'f' || e == '(' || e == ')' || e == '\\' || e == '\r' || e == '\n':
					case e >= '0' && e <= '7':
						x := int(e - '0')
						for k := 0; k < 2 && i < len(s) && s[i] >= '0' && s[i] <= '7'; k++ {
							x = x*8 + int(s[i]-'0')
							i++
						}
						if x > 255 {
							break str // the library aborts the string here
						}
					default:
						break str // invalid escape: the library aborts the string
					}
				}
			}
		case '<':
			if i < len(s) && s[i] == '<' {
				i++
				continue
			}
			// A hex string: pairs of hex digits, spaces skipped, up to '>'.
			// A non-hex character aborts it; the end of the stream hangs.
		hex:
			for {
				for i < len(s) && isSpace(s[i]) {
					i++
				}
				if i >= len(s) {
					return true
				}
				c1 := s[i]
				i++
				if c1 == '>' {
					break hex
				}
				for i < len(s) && isSpace(s[i]) {
					i++
				}
				if i >= len(s) {
					return true
				}
				c2 := s[i]
				i++
				if !isHex(c1) || !isHex(c2) {
					break hex
				}
			}
		}
	}
	return false
}

var (
	reSize     = regexp.MustCompile(`/Size\s+(\d+)`)
	reIndex    = regexp.MustCompile(`/Index\s*\[([^\]]*)\]`)
	reW        = regexp.MustCompile(`/W\s*\[([^\]]*)\]`)
	reXRefType = regexp.MustCompile(`/Type\s*/XRef`)
	rePrev     = regexp.MustCompile(`/Prev\s+(\d+)`)
	reStart    = regexp.MustCompile(`startxref\s+(\d+)`)
)

// preflight rejects files that would make the library allocate without
// bound or loop before it returns: cross-reference sizes, indexes or
// subsections far beyond what the file's size allows, absurd /W field widths,
// and /Prev chains that revisit an offset. It errs on the side of "risk";
// such files go to poppler instead.
func preflight(data []byte) error {
	limit := int64(min(len(data)/2+10000, 5_000_000))
	num := func(b []byte) int64 {
		if len(b) > 15 {
			return 1 << 62
		}
		n, _ := strconv.ParseInt(string(b), 10, 64)
		return n
	}
	for _, m := range reSize.FindAllSubmatch(data, -1) {
		if num(m[1]) > limit {
			return fmt.Errorf("cross-reference /Size %s is implausible for a %d-byte file", m[1], len(data))
		}
	}
	for _, m := range reIndex.FindAllSubmatch(data, -1) {
		f := bytes.Fields(m[1])
		for i := 0; i+1 < len(f); i += 2 {
			if num(f[i])+num(f[i+1]) > limit {
				return errors.New("cross-reference /Index out of range")
			}
		}
	}
	// /W of cross-reference streams only: CID fonts have /W arrays of glyph
	// widths. The window is the XRef stream's dictionary, from its "obj" to
	// its "stream" keyword.
	for _, loc := range reXRefType.FindAllIndex(data, -1) {
		from := max(0, bytes.LastIndex(data[:loc[0]], []byte("obj")))
		to := len(data)
		if j := bytes.Index(data[loc[1]:], []byte("stream")); j >= 0 {
			to = loc[1] + j
		}
		for _, m := range reW.FindAllSubmatch(data[from:to], -1) {
			for _, f := range bytes.Fields(m[1]) {
				if num(f) > 16 {
					return errors.New("cross-reference /W field too wide")
				}
			}
		}
	}
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte("xref"))
		if i < 0 {
			break
		}
		off += i + 4
		if xrefTableOutOfRange(data[off:], limit) {
			return errors.New("cross-reference subsection out of range")
		}
	}
	seen := map[int64]bool{}
	if ms := reStart.FindAllSubmatch(data, -1); len(ms) > 0 {
		seen[num(ms[len(ms)-1][1])] = true
	}
	for _, m := range rePrev.FindAllSubmatch(data, -1) {
		p := num(m[1])
		if seen[p] {
			return errors.New("cross-reference /Prev chain revisits an offset")
		}
		seen[p] = true
	}
	return nil
}

// xrefTableOutOfRange reads a classic cross-reference table the way the
// library's lexer does (whitespace and % comments skipped) and reports a
// subsection reaching beyond limit objects.
func xrefTableOutOfRange(b []byte, limit int64) bool {
	next := func() string {
		for len(b) > 0 {
			switch c := b[0]; {
			case c == '%':
				for len(b) > 0 && b[0] != '\r' && b[0] != '\n' {
					b = b[1:]
				}
			case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0:
				b = b[1:]
			default:
				i := 0
				for i < len(b) && !bytes.ContainsRune([]byte(" \t\r\n\f\x00%()<>[]{}/"), rune(b[i])) {
					i++
				}
				if i == 0 {
					i = 1
				}
				t := string(b[:i])
				b = b[i:]
				return t
			}
		}
		return ""
	}
	integer := func(t string) (int64, bool) {
		if len(t) > 15 && strings.Trim(t, "0123456789") == "" {
			return 1 << 50, true
		}
		n, err := strconv.ParseInt(t, 10, 64)
		return n, err == nil && n >= 0
	}
	for sections := 0; sections < 100000; sections++ {
		t := next()
		if t == "trailer" {
			return false
		}
		start, ok1 := integer(t)
		count, ok2 := integer(next())
		if !ok1 || !ok2 {
			return false
		}
		if start+count > limit || start > limit || count > limit {
			return true
		}
		for k := int64(0); k < count; k++ {
			_, ok1 := integer(next())
			_, ok2 := integer(next())
			kw := next()
			if !ok1 || !ok2 || kw != "f" && kw != "n" {
				return false
			}
		}
	}
	return false
}
