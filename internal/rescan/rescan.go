// Package rescan finds the matches of a regular expression exactly as
// package regexp does, faster where matches can start only at a few places
// of a long text.
//
// Go's regexp tries an unanchored pattern at every position of the text,
// and each call clears state in proportion to the rest of the text; a
// pattern without a literal prefix (a case-insensitive one, or one that
// starts with a class) costs about a microsecond per character. A Scan
// runs the pattern, anchored, only where a match can start: where a
// character the pattern can start with stands, the \b every match starts
// with holds, and the caller's need (a further condition any match start
// meets) holds. It runs it on a window no path of the match can read past.
//
// The window is exact. A match consumes its first character, then only
// characters the pattern names in a literal or class other than its
// initial and final pieces (a piece before which, or after which, nothing
// in the pattern consumes), then perhaps one last character a final piece
// takes (the guard [^0-9] after a number). So no path reads past the first
// character outside that set, the character after it (which a \b or $
// after the final piece looks at) included.
package rescan

import (
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// Scan is a pattern with what it needs to be tried only where it can match.
type Scan struct {
	re       *regexp.Regexp // the pattern, unanchored
	anchored *regexp.Regexp // the same, anchored at the start of the text
	// inText is the pattern anchored after one character, so that a \b
	// in it sees the character before the candidate.
	inText   *regexp.Regexp
	first    runeSet // the characters a match can start with
	reach    runeSet // the characters a match consumes but for its first and a final one
	boundary bool    // every match starts with \b
	need     func(text string, i int) bool
}

// New returns the scan of re, which must not match the empty string (New
// panics if it can). need, when not nil, reports whether a match may start
// at byte i of text: it must hold wherever one does, and is called only
// where a character re can start with stands (and \b holds, where every
// match of re starts with \b).
func New(re *regexp.Regexp, need func(text string, i int) bool) *Scan {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		panic("rescan: " + err.Error())
	}
	tree = tree.Simplify()
	s := &Scan{re: re, need: need,
		anchored: regexp.MustCompile(`^(?:` + re.String() + `)`),
		inText:   regexp.MustCompile(`^(?s:.)(?:` + re.String() + `)`),
		boundary: startsWithBoundary(tree)}
	if firstRunes(tree, &s.first) {
		panic("rescan: a pattern that matches the empty string: " + re.String())
	}
	reachRunes(tree, true, true, &s.reach)
	return s
}

// Regexp returns the pattern.
func (s *Scan) Regexp() *regexp.Regexp { return s.re }

// Boundary reports whether every match starts with \b.
func (s *Scan) Boundary() bool { return s.boundary }

// MayStart reports whether a match may start with r.
func (s *Scan) MayStart(r rune) bool { return s.first.has(r) }

// InWindow reports whether r extends a match's window (a match may consume
// it after its first character and before its last).
func (s *Scan) InWindow(r rune) bool { return s.reach.has(r) }

// FindAllStringSubmatchIndex returns what
// s.Regexp().FindAllStringSubmatchIndex(text, -1) returns.
func (s *Scan) FindAllStringSubmatchIndex(text string) [][]int {
	var out [][]int
	for pos := 0; pos < len(text); {
		m := s.next(text, pos)
		if m == nil {
			break
		}
		out = append(out, m)
		pos = m[1]
	}
	return out
}

// FindAllStringIndex returns what s.Regexp().FindAllStringIndex(text, -1)
// returns.
func (s *Scan) FindAllStringIndex(text string) [][]int {
	ms := s.FindAllStringSubmatchIndex(text)
	for i, m := range ms {
		ms[i] = m[:2:2]
	}
	return ms
}

// FindStringSubmatchIndex returns what
// s.Regexp().FindStringSubmatchIndex(text) returns.
func (s *Scan) FindStringSubmatchIndex(text string) []int { return s.next(text, 0) }

// next returns the first match that starts at or after byte from of text
// (a character start, or a match's end), as the pattern finds it searching
// text from there with what stands before in view; nil if there is none.
func (s *Scan) next(text string, from int) []int {
	for i := from; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if s.first.has(r) && (!s.boundary || boundaryAt(text, i)) && (s.need == nil || s.need(text, i)) {
			if m := s.matchAt(text, i, size); m != nil {
				return m
			}
		}
		i += size
	}
	return nil
}

// matchAt returns the match that starts at byte i of text, where a
// character of size bytes starts, or nil.
func (s *Scan) matchAt(text string, i, size int) []int {
	k := i + size
	for k < len(text) {
		r, size := rune(text[k]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[k:])
		}
		if !s.reach.has(r) {
			break
		}
		k += size
	}
	// The last character a final piece may take, and the one after it.
	for n := 0; n < 2 && k < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[k:])
		k += size
	}
	if i == 0 {
		return s.anchored.FindStringSubmatchIndex(text[:k])
	}
	_, before := utf8.DecodeLastRuneInString(text[:i])
	j := i - before
	m := s.inText.FindStringSubmatchIndex(text[j:k])
	if m == nil {
		return nil
	}
	for n := range m {
		if m[n] >= 0 {
			m[n] += j
		}
	}
	m[0] = i
	return m
}

// asciiWord is \w, the class \b is defined by.
func asciiWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// boundaryAt reports whether \b holds at byte i of text, i < len(text); a
// byte outside ASCII is never part of a word character.
func boundaryAt(text string, i int) bool {
	return (i > 0 && asciiWord(text[i-1])) != asciiWord(text[i])
}

// runeSet is a set of characters: a table for ASCII, ranges for the rest.
type runeSet struct {
	ascii  [utf8.RuneSelf]bool
	ranges []rune // lo, hi pairs, beyond ASCII
}

func (s *runeSet) add(lo, hi rune) {
	for r := max(lo, 0); r <= hi && r < utf8.RuneSelf; r++ {
		s.ascii[r] = true
	}
	if hi >= utf8.RuneSelf {
		s.ranges = append(s.ranges, max(lo, utf8.RuneSelf), hi)
	}
}

// addFold adds r and, with fold, the characters case folding makes equal
// to it.
func (s *runeSet) addFold(r rune, fold bool) {
	s.add(r, r)
	if !fold {
		return
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		s.add(f, f)
	}
}

func (s *runeSet) has(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 0 && s.ascii[r]
	}
	for i := 0; i < len(s.ranges); i += 2 {
		if r >= s.ranges[i] && r <= s.ranges[i+1] {
			return true
		}
	}
	return false
}

// consumes reports whether re can consume a character.
func consumes(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) > 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	for _, sub := range re.Sub {
		if consumes(sub) {
			return true
		}
	}
	return false
}

// addClass adds what the one-character piece re matches.
func addClass(re *syntax.Regexp, s *runeSet) {
	switch re.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			s.add(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyChar:
		s.add(0, unicode.MaxRune)
	case syntax.OpAnyCharNotNL:
		s.add(0, '\n'-1)
		s.add('\n'+1, unicode.MaxRune)
	}
}

// firstRunes adds to s the characters a match of re can start with, and
// reports whether re can match the empty string. It may add too many,
// never too few.
func firstRunes(re *syntax.Regexp, s *runeSet) (nullable bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true
		}
		s.addFold(re.Rune[0], re.Flags&syntax.FoldCase != 0)
		return false
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		addClass(re, s)
		return false
	case syntax.OpCapture:
		return firstRunes(re.Sub[0], s)
	case syntax.OpStar, syntax.OpQuest:
		firstRunes(re.Sub[0], s)
		return true
	case syntax.OpPlus:
		return firstRunes(re.Sub[0], s)
	case syntax.OpRepeat:
		return firstRunes(re.Sub[0], s) || re.Min == 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !firstRunes(sub, s) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		nullable := false
		for _, sub := range re.Sub {
			if firstRunes(sub, s) {
				nullable = true
			}
		}
		return nullable
	}
	return true // empty-width assertions
}

// reachRunes adds to s every character re can consume, except those an
// initial piece consumes (one before which nothing in the pattern
// consumes: it can take only a match's first character) and those a final
// piece consumes (one after which nothing consumes). It may add too many,
// never too few.
func reachRunes(re *syntax.Regexp, initial, final bool, s *runeSet) {
	switch re.Op {
	case syntax.OpLiteral:
		rs := re.Rune
		if initial && len(rs) > 0 {
			rs = rs[1:]
		}
		if final && len(rs) > 0 {
			rs = rs[:len(rs)-1]
		}
		for _, r := range rs {
			s.addFold(r, re.Flags&syntax.FoldCase != 0)
		}
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		if !initial && !final {
			addClass(re, s)
		}
	case syntax.OpCapture, syntax.OpQuest, syntax.OpAlternate:
		for _, sub := range re.Sub {
			reachRunes(sub, initial, final, s)
		}
	case syntax.OpRepeat:
		once := re.Max == 1
		reachRunes(re.Sub[0], initial && once, final && once, s)
	case syntax.OpStar, syntax.OpPlus:
		reachRunes(re.Sub[0], false, false, s)
	case syntax.OpConcat:
		for i, sub := range re.Sub {
			first, last := initial, final
			for _, before := range re.Sub[:i] {
				if consumes(before) {
					first = false
				}
			}
			for _, after := range re.Sub[i+1:] {
				if consumes(after) {
					last = false
				}
			}
			reachRunes(sub, first, last, s)
		}
	}
}

// startsWithBoundary reports whether every match of re starts with \b.
func startsWithBoundary(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpWordBoundary:
		return true
	case syntax.OpCapture:
		return startsWithBoundary(re.Sub[0])
	case syntax.OpConcat:
		return len(re.Sub) > 0 && startsWithBoundary(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !startsWithBoundary(sub) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

// LetterRun returns the end of the run of ASCII letters that starts at
// byte i of text, and whether a byte outside ASCII ends it (case folding
// makes some characters outside ASCII letters: ſ is s, K the Kelvin sign
// is k).
func LetterRun(text string, i int) (end int, nonASCII bool) {
	end = i
	for end < len(text) && (text[end]|0x20 >= 'a' && text[end]|0x20 <= 'z') {
		end++
	}
	return end, end < len(text) && text[end] >= utf8.RuneSelf
}

// LeadWord returns a need for patterns that start with one of words
// (lower-case ASCII letters, case aside) followed by a character other
// than a letter: the ASCII letters at i, as a whole, are one of words,
// unless a byte outside ASCII starts or ends them.
func LeadWord(words ...string) func(text string, i int) bool {
	set := map[string]bool{}
	longest := 0
	for _, w := range words {
		set[w] = true
		longest = max(longest, len(w))
	}
	return func(text string, i int) bool {
		if text[i] >= utf8.RuneSelf {
			return true
		}
		end, nonASCII := LetterRun(text, i)
		if nonASCII {
			return true
		}
		if end-i > longest {
			return false
		}
		var buf [32]byte
		w := buf[:0]
		for _, c := range []byte(text[i:end]) {
			w = append(w, c|0x20)
		}
		return set[string(w)]
	}
}

// HasFoldPrefix reports whether text[i:] starts with one of prefixes
// (lower-case ASCII), case folded as regexp's (?i) folds it: ſ is s and
// K the Kelvin sign is k.
func HasFoldPrefix(text string, i int, prefixes ...string) bool {
outer:
	for _, p := range prefixes {
		j := i
		for n := 0; n < len(p); n++ {
			if j >= len(text) {
				continue outer
			}
			c := text[j]
			if c < utf8.RuneSelf {
				if c != p[n] && !(c|0x20 == p[n] && p[n] >= 'a' && p[n] <= 'z') {
					continue outer
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[j:])
			if !foldEqual(r, rune(p[n])) {
				continue outer
			}
			j += size
		}
		return true
	}
	return false
}

// foldEqual reports whether r and c are equal under simple case folding.
func foldEqual(r, c rune) bool {
	if r == c {
		return true
	}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return false
}
