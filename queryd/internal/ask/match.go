package ask

import (
	"strings"
	"unicode"
)

// folded is a text prepared for name matching: lower case, with everything
// but letters and digits dropped and the leading zeros of each number
// removed, so "PEP 8", "PEP8" and "pep-0008" read alike. bound[i] is true
// where a token starts at folded position i in the original (after a
// separator, or where letters turn into digits or back), and at the end.
type folded struct {
	s     []rune
	bound []bool
}

func foldText(text string) folded {
	f := folded{s: make([]rune, 0, len(text))}
	// Segments are maximal runs of letters or of digits; each starts a
	// token. A run of digits loses its leading zeros (one stays for 0).
	var seg []rune
	digits := false
	flush := func() {
		if len(seg) == 0 {
			return
		}
		if digits {
			i := 0
			for i < len(seg)-1 && seg[i] == '0' {
				i++
			}
			seg = seg[i:]
		}
		for i, r := range seg {
			f.push(r, i == 0)
		}
		seg = seg[:0]
	}
	for _, r := range text {
		isDigit := unicode.IsDigit(r)
		if !isDigit && !unicode.IsLetter(r) {
			flush()
			continue
		}
		if len(seg) > 0 && isDigit != digits {
			flush()
		}
		digits = isDigit
		seg = append(seg, unicode.ToLower(r))
	}
	flush()
	f.bound = append(f.bound, true)
	return f
}

func (f *folded) push(r rune, boundary bool) {
	f.s = append(f.s, r)
	f.bound = append(f.bound, boundary)
}

// fold returns the matching key of a name.
func fold(name string) string { return string(foldText(name).s) }

// contains reports whether key occurs in f on token boundaries at both
// ends, so "pep8" is in "see pep-0008" but not in "pep 80".
func (f folded) contains(key string) bool {
	k := []rune(key)
	if len(k) == 0 || len(k) > len(f.s) {
		return false
	}
	for i := 0; i+len(k) <= len(f.s); i++ {
		if !f.bound[i] || !f.bound[i+len(k)] {
			continue
		}
		if string(f.s[i:i+len(k)]) == key {
			return true
		}
	}
	return false
}

// NameSource is what a name may be found in: a returned passage's (or chosen
// sentence's) text and its file path.
type NameSource struct {
	Text string
	File string
}

// Missing returns the names none of the sources holds, in order. A name
// matches without regard to case or spacing, in a source's text or its
// file path.
func Missing(names []Name, sources []NameSource) []Name {
	if len(names) == 0 {
		return nil
	}
	fs := make([]folded, 0, 2*len(sources))
	for _, s := range sources {
		fs = append(fs, foldText(s.Text), foldText(s.File))
	}
	var out []Name
	for _, n := range names {
		found := false
		for _, f := range fs {
			if f.contains(n.key) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// quoteNames writes names for a note: "PEP 8", "AC04" and "pacs.008".
func quoteNames(ns []Name) string {
	q := make([]string, len(ns))
	for i, n := range ns {
		q[i] = "\"" + n.Text + "\""
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
