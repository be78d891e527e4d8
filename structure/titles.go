package structure

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// listMarker matches the start of a list item: "a)", "b.", "iv)".
var listMarker = regexp.MustCompile(`^[a-z]{1,4}[.)](\s|$)`)

// InlineTitle returns the title at the start of rest when it is written
// the way agreements write their clause headings: a short phrase in title
// case or capitals that ends with a period, alone ("Limited Warranties;
// Disclaimer of Warranties.") or followed by the clause's first sentence
// ("Hosting Agreement. This Agreement…", "Indemnification. Subject to…").
// The title is returned without its period; "" when rest does not start
// so. Running text ("The fee is due. It…"), a list item ("Buy milk. Then…")
// and abbreviations ("Mr. Smith…") do not.
func InlineTitle(rest string) string {
	end := -1
	for i := 0; i < len(rest) && i <= maxTitle; i++ {
		if rest[i] != '.' {
			continue
		}
		if i+1 == len(rest) || rest[i+1] == ' ' || rest[i+1] == '\t' {
			end = i
			break
		}
	}
	if end <= 0 {
		return ""
	}
	t, after := rest[:end], strings.TrimLeft(rest[end+1:], " \t")
	if after != "" {
		r, _ := utf8.DecodeRuneInString(after)
		first, _, _ := strings.Cut(after, " ")
		// A sentence starts, or a name that starts in lower case
		// ("eGain will provide…"), or the heading's first subclause
		// ("Early Termination.   2.2.1. Either party…").
		if !unicode.IsUpper(r) && !strings.ContainsRune("(\"“'‘[", r) && strings.IndexFunc(first, unicode.IsUpper) < 0 &&
			!subclauseLead(after) {
			return ""
		}
	}
	r, _ := utf8.DecodeRuneInString(t)
	// One line, and no dot inside ("Mr.1", "e.g"): a title is words.
	if !unicode.IsUpper(r) || strings.Contains(t, "   ") || strings.ContainsAny(t, "\t\n\r=.") {
		return ""
	}
	words := strings.Fields(t)
	if len(words) == 0 || len(words) > 10 {
		return ""
	}
	for _, w := range words {
		if _, ok := parseLead(w); ok && strings.ContainsAny(w, "0123456789") {
			return "" // a heading run on into the next clause's number ("TERM 2.1 Grant.")
		}
	}
	// Every word of four letters or more is capitalised, and there is at
	// least one ("Term" and "Limitation of Liability" are titles; "Buy
	// milk", "Mr" and "The fee is due" are not).
	long := 0
	for _, w := range words {
		w = strings.Trim(w, "\"'“”‘’()[],;:")
		if utf8.RuneCountInString(w) < 4 {
			continue
		}
		long++
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) {
			return ""
		}
	}
	if long == 0 {
		return ""
	}
	for _, w := range words {
		if sentenceVerb(w) {
			return ""
		}
	}
	return t
}

// sentenceVerb reports a word that makes a phrase a sentence rather than a
// title: a modal or a form of "be", "have", "do" or "mean".
func sentenceVerb(w string) bool {
	switch strings.ToLower(strings.Trim(w, ",.;:")) {
	case "shall", "should", "must", "will", "would", "may", "can", "could", "is", "are", "was", "were", "be", "has", "have", "does", "means":
		return true
	}
	return false
}

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
		if sentenceVerb(w) {
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

// subclauseLead reports whether s opens with a clause number of two or
// more parts ("2.2.1.", "7.1 "): a heading's first subclause, which may
// follow the heading's title at once.
func subclauseLead(s string) bool {
	ld, ok := parseLead(s)
	return ok && !ld.keyword && ld.family == "" && len(ld.parts) >= 2
}
