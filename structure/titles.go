package structure

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// listMarker matches the start of a list item: "a)", "b.", "iv)".
var listMarker = regexp.MustCompile(`^[a-z]{1,4}[.)](\s|$)`)

// collapse trims s and collapses runs of white space to one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// titleLike reports whether s (the text after a clause number) reads as a
// heading's title rather than running text. next is the line that follows.
func titleLike(s, next string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) && !unicode.IsDigit(r) && !strings.ContainsRune("(\"“'‘[", r) {
		return false
	}
	if !hasWord(s) || strings.Contains(s, " = ") {
		return false
	}
	// Captions are not headings.
	if w, _, _ := strings.Cut(s, " "); strings.EqualFold(w, "table") || strings.EqualFold(w, "figure") {
		return false
	}
	// Table columns, justified text and tables of contents.
	if strings.Contains(s, "   ") || strings.Contains(s, "\t") || tocLine(s) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(s)
	if strings.ContainsRune(".,;", last) && !strings.HasSuffix(s, "etc.") {
		return false
	}
	words := strings.Fields(s)
	if len(words) > 14 {
		return false
	}
	// Verbs make a sentence, unless the words are in title case ("What
	// is Cacheable").
	tc := titleCase(words)
	for _, w := range words[1:] {
		if tc {
			break
		}
		switch strings.ToLower(strings.Trim(w, ",.;:")) {
		case "shall", "should", "must", "will", "would", "may", "can", "could", "is", "are", "was", "were", "be", "has", "have", "does", "means":
			return false
		}
	}
	if last == ':' && len(words) > 6 {
		return false
	}
	// A sentence that wraps onto the next line, or a table-of-contents
	// entry that does.
	if tocLine(next) {
		return false
	}
	if next != "" {
		nr, _ := utf8.DecodeRuneInString(next)
		if unicode.IsLower(nr) && len(s) > 40 && !listMarker.MatchString(next) {
			return false
		}
	}
	return true
}

// tocLine reports a table-of-contents line: dot leaders, or a page number
// after a wide gap.
func tocLine(s string) bool {
	if strings.Contains(s, "....") || strings.Contains(s, ". . .") || strings.Contains(s, "…") {
		return true
	}
	f := strings.Fields(s)
	if len(f) >= 2 && strings.Contains(s, "   ") {
		lastw := f[len(f)-1]
		if strings.Trim(lastw, "0123456789") == "" || strings.Trim(lastw, "ivxl") == "" {
			return true
		}
	}
	return false
}

// termTitle returns the term of a definition clause ("abbreviated format: A
// representation…"), or "".
func termTitle(rest string) string {
	i := strings.Index(rest, ":")
	if i <= 0 || i > 60 {
		return ""
	}
	term := rest[:i]
	if strings.ContainsAny(term, ".;") || len(strings.Fields(term)) > 6 {
		return ""
	}
	return collapse(term)
}

// hasWord reports whether s holds a run of at least three letters: figure
// labels such as "H(0,3)" or "P, V(0)" do not.
func hasWord(s string) bool {
	run := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			run++
			if run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// titleCase reports whether most words of four letters or more start with
// a capital, as in "What is Cacheable".
func titleCase(words []string) bool {
	long, upper := 0, 0
	for _, w := range words {
		w = strings.Trim(w, "\"'“”‘’()[],.;:")
		if utf8.RuneCountInString(w) < 4 {
			continue
		}
		long++
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
			upper++
		}
	}
	return long >= 2 && upper*10 >= long*8
}

// clip shortens a title to at most maxTitle bytes, at a word boundary.
func clip(s string) string {
	if len(s) <= maxTitle {
		return s
	}
	cut := maxTitle
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > maxTitle/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]) + "…"
}
