// Package verifyeval builds the drafts strata_verify is evaluated on: for
// each gold passage of the answer eval set, drafts that restate it
// correctly, in other forms of the same facts, with one fact changed, with
// a quote altered, citing the wrong passage, citing nothing, and holding
// nothing to check, each with the verdict the spec asks for.
//
// The drafts come from deterministic transformations of the passages, and
// every transformation is checked here, not by the checker under test: a
// changed number must be written nowhere in the passage, an altered quote's
// words must not run together in it, a wrong passage must lack the fact.
// A draft that cannot be built so that it holds what its kind says is left
// out.
package verifyeval

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kinds of drafts, in the order reports print them.
const (
	KindCorrect     = "correct"
	KindOtherForm   = "other_form"
	KindFactChanged = "fact_changed"
	KindQuoteAlter  = "quote_altered"
	KindWrongSource = "wrong_passage"
	KindNoCitation  = "no_citation"
	KindNothing     = "nothing_to_check"
)

// Kinds lists the kinds in report order.
var Kinds = []string{KindCorrect, KindOtherForm, KindFactChanged, KindQuoteAlter, KindWrongSource, KindNoCitation, KindNothing}

// Verdicts as strata_verify names them.
const (
	Verified       = "verified"
	Flagged        = "flagged"
	NothingChecked = "nothing_checked"
)

// Item is one gold passage: the question it answers and the passage text
// (S1 of its drafts), with the gold quote inside it.
type Item struct {
	ID      string
	Passage string
	Quote   string
}

// Draft is one draft with its passages and what strata_verify must say.
type Draft struct {
	ID   string `json:"id"`
	Item string `json:"item"` // the question whose passage is S1
	Kind string `json:"kind"`
	// Draft is the text checked against S1, S2, … in order.
	Draft string `json:"draft"`
	// Sources name the passages by the question they come from; Passages
	// are their texts (not written out: the corpora hold them).
	Sources  []string `json:"passages"`
	Passages []string `json:"-"`
	Expect   string   `json:"expect"`
	// Flag, for a flagged draft, is the text one of the flags must hold:
	// the changed fact, the altered quote, the fact missing from the cited
	// passage; "" when any flag will do (no citation).
	Flag string `json:"flag,omitempty"`
	Note string `json:"note,omitempty"`
}

// PassageAround returns the passage around the gold quote in a document's
// text: the quote with up to context bytes either side, cut at whitespace
// so that no word is split. ok is false when the quote is not in the text.
func PassageAround(text, quote string, context int) (string, bool) {
	at := strings.Index(text, quote)
	if at < 0 {
		return "", false
	}
	start, end := at-context, at+len(quote)+context
	if start <= 0 {
		start = 0
	} else {
		for start < at && !isSpaceByte(text[start-1]) {
			start++
		}
	}
	if end >= len(text) {
		end = len(text)
	} else {
		for end > at+len(quote) && !isSpaceByte(text[end]) {
			end--
		}
	}
	return strings.TrimSpace(text[start:end]), true
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// Generate builds the drafts of every item; the wrong passage of an item
// is the first of the items after it that lacks the fact or quote.
func Generate(items []Item) []Draft {
	var out []Draft
	for i, it := range items {
		var others []Item
		for j := 1; j < len(items); j++ {
			others = append(others, items[(i+j)%len(items)])
		}
		out = append(out, draftsOf(it, others)...)
	}
	return out
}

func draftsOf(it Item, others []Item) []Draft {
	var out []Draft
	n := 0
	add := func(kind, draft string, ps []Item, expect, flag, note string) {
		n++
		d := Draft{ID: fmt.Sprintf("%s/%d", it.ID, n), Item: it.ID, Kind: kind, Draft: draft,
			Expect: expect, Flag: flag, Note: note}
		for _, p := range ps {
			d.Passages = append(d.Passages, p.Passage)
			d.Sources = append(d.Sources, p.ID)
		}
		out = append(out, d)
	}
	s1 := []Item{it}
	quote, open, closeMark := quotable(wholeWords(it.Passage, it.Quote))
	quoted := func(q string) string { return open + q + closeMark }

	if quote != "" {
		// 1. Correct: the gold quote, whole and with an omission.
		add(KindCorrect, "The passage states that "+quoted(quote)+" [S1].", s1, Verified, "", "gold quote")
		if om, ok := omission(quote); ok {
			add(KindCorrect, "It reads "+quoted(om)+" [S1].", s1, Verified, "", "gold quote with an omission")
		}
		// 4. A quote altered.
		if altered, word, ok := alterQuote(quote, it.Passage); ok {
			add(KindQuoteAlter, "The passage states that "+quoted(altered)+" [S1].", s1, Flagged, altered, "word "+word)
		}
		// 5. The right quote citing the wrong passage.
		for _, o := range others {
			if !containsWords(words(o.Passage), words(quote)) {
				add(KindWrongSource, "The passage states that "+quoted(quote)+" [S2].", []Item{it, o}, Flagged,
					quote, "quote is only in S1")
				break
			}
		}
		// 6. No citation at all: flagged, however right it is.
		add(KindNoCitation, "The passage states that "+quoted(quote)+".", s1, Flagged, "", "gold quote, uncited")
	}

	for _, f := range chooseFacts(it) {
		window := windowAround(it.Passage, f)
		// 1. Correct: the fact as the passage writes it.
		add(KindCorrect, "According to the passage, "+window+" [S1].", s1, Verified, "", "fact "+f.text+" as written")
		// 3. One fact changed.
		if changed, to, ok := changeFact(it.Passage, window, f); ok {
			add(KindFactChanged, "According to the passage, "+changed+" [S1].", s1, Flagged, to, f.text+" → "+to)
		}
		// 5. The right fact citing the wrong passage.
		for _, o := range others {
			if !numberWritten(o.Passage, f.text) {
				add(KindWrongSource, "According to the passage, "+window+" [S2].", []Item{it, o}, Flagged,
					f.text, "fact "+f.text+" is only in S1")
				break
			}
		}
		// 6. No citation.
		add(KindNoCitation, "According to the passage, "+window+".", s1, Flagged, "", "fact "+f.text+", uncited")
	}

	// 3. A code or a number word changed.
	if c, ok := firstWithWindow(it.Passage, codeTokens(it.Passage)); ok {
		window := windowAround(it.Passage, c)
		add(KindCorrect, "According to the passage, "+window+" [S1].", s1, Verified, "", "code "+c.text+" as written")
		if changed, to, ok := changeCode(it.Passage, window, c); ok {
			add(KindFactChanged, "According to the passage, "+changed+" [S1].", s1, Flagged, to, "code "+c.text+" → "+to)
		}
		for _, o := range others {
			if !codeWritten(o.Passage, c.text) {
				add(KindWrongSource, "According to the passage, "+window+" [S2].", []Item{it, o}, Flagged,
					c.text, "code "+c.text+" is only in S1")
				break
			}
		}
	}
	if w, ok := firstWithWindow(it.Passage, numberWordTokens(it.Passage)); ok {
		window := windowAround(it.Passage, w)
		if changed, to, ok := changeNumberWord(it.Passage, window, w); ok {
			add(KindFactChanged, "According to the passage, "+changed+" [S1].", s1, Flagged, to, "number word "+w.text+" → "+to)
		}
	}

	// 2. Other forms of the same facts.
	for _, rw := range otherForms(it.Passage) {
		add(KindOtherForm, "According to the passage, "+rw.text+" [S1].", s1, Verified, "", rw.note)
	}

	// 7. Nothing to check: citations, but no quote and no fact.
	if plain := plainWords(it.Passage); plain != "" {
		add(KindNothing, "The passage covers this: it speaks of "+plain+" [S1].", s1, NothingChecked, "", "")
	}
	return out
}

// valueRe finds the facts a reader cares most about: amounts, percentages
// and dates.
var valueRe = regexp.MustCompile(`(?i)[$€£]\s?[0-9]|\b(?:EUR|USD|GBP)\s?[0-9]|[0-9]\s?(?:%|percent|per cent)|` +
	`(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+[0-9]|[0-9]{4}-[0-9]{2}-[0-9]{2}`)

// chooseFacts picks up to two numbers of the passage to build drafts on:
// the first inside the gold quote (else the first of the passage), and the
// first in an amount, percentage or date when that is another.
func chooseFacts(it Item) []token {
	var ok []token
	for _, t := range numberTokens(it.Passage) {
		if windowAround(it.Passage, t) != "" {
			ok = append(ok, t)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	first := ok[0]
	if q := strings.Index(it.Passage, it.Quote); q >= 0 {
		for _, t := range ok {
			if t.start >= q && t.end <= q+len(it.Quote) {
				first = t
				break
			}
		}
	}
	out := []token{first}
	for _, m := range valueRe.FindAllStringIndex(it.Passage, -1) {
		for _, t := range ok {
			if t.start < m[1]+12 && t.end > m[0] && t.start >= m[0]-12 {
				if t != first {
					out = append(out, t)
				}
				return out
			}
		}
	}
	return out
}

// omission returns the quote's first and last three fields around an
// omission mark, when each part has at least two words (as the spec asks
// of every part) and the parts do not overlap.
func omission(q string) (string, bool) {
	f := strings.Fields(q)
	if len(f) < 8 {
		return "", false
	}
	head, tail := strings.Join(f[:3], " "), strings.Join(f[len(f)-3:], " ")
	if len(words(head)) < 2 || len(words(tail)) < 2 {
		return "", false
	}
	return head + " … " + tail, true
}

// wholeWords drops a word the gold quote cuts at either end (a quote
// that ends in "… this Agreement. Li"), so that the quote holds whole
// words of the passage.
func wholeWords(p, q string) string {
	at := strings.Index(p, q)
	if at < 0 || q == "" {
		return q
	}
	end := at + len(q)
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	first, _ := utf8.DecodeRuneInString(q)
	last, _ := utf8.DecodeLastRuneInString(q)
	if before, _ := utf8.DecodeLastRuneInString(p[:at]); at > 0 && isWord(before) && isWord(first) {
		i := strings.IndexFunc(q, unicode.IsSpace)
		if i < 0 {
			return ""
		}
		q = q[i+1:]
	}
	if after, _ := utf8.DecodeRuneInString(p[end:]); end < len(p) && isWord(after) && isWord(last) {
		i := strings.LastIndexFunc(q, unicode.IsSpace)
		if i < 0 {
			return ""
		}
		q = q[:i]
	}
	return q
}

// quotable returns the gold quote on one line with the quote marks to put
// around it: straight ones, or curly ones when it holds straight ones.
// It returns "" when it holds both kinds or has fewer than three words.
func quotable(q string) (text, open, closeMark string) {
	q = strings.Join(strings.Fields(q), " ")
	if len(words(q)) < 3 || strings.ContainsAny(q, "[]") {
		return "", "", ""
	}
	hasStraight := strings.Contains(q, `"`)
	hasCurly := strings.ContainsAny(q, "“”")
	switch {
	case hasStraight && hasCurly:
		return "", "", ""
	case hasStraight:
		return q, "“", "”"
	}
	return q, `"`, `"`
}

// token is a number as a passage writes it, with its byte offsets.
type token struct {
	text       string
	start, end int
}

var numRunRe = regexp.MustCompile(`[0-9]+(?:[.,][0-9]+)*`)

// numberTokens are the passage's numbers that stand alone: not inside a
// word (utf8, x86) and not the tail of a longer dotted number.
func numberTokens(p string) []token {
	var out []token
	for _, m := range numRunRe.FindAllStringIndex(p, -1) {
		a, b := m[0], m[1]
		if a > 0 {
			r, _ := utf8.DecodeLastRuneInString(p[:a])
			if unicode.IsLetter(r) || r == '_' || r == '.' || r == ',' {
				continue
			}
		}
		if b < len(p) {
			r, _ := utf8.DecodeRuneInString(p[b:])
			if unicode.IsLetter(r) || r == '_' {
				continue
			}
		}
		out = append(out, token{text: p[a:b], start: a, end: b})
	}
	return out
}

// windowAround returns a few words of the passage either side of the
// token, on one line, with sentence ends, quote marks and brackets taken
// out so that the draft is one sentence with no quote of its own; "" when
// the token's word is not found.
func windowAround(p string, t token) string {
	a, b := t.start, t.end
	for k := 0; k < 7 && a > 0; k++ { // six words back
		a--
		for a > 0 && !isSpaceByte(p[a-1]) {
			a--
		}
		for a > 0 && isSpaceByte(p[a-1]) && k < 6 {
			a--
		}
	}
	for a < t.start && isSpaceByte(p[a]) {
		a++
	}
	for a > 0 && !isSpaceByte(p[a-1]) {
		a--
	}
	for k := 0; k < 6 && b < len(p); k++ { // six words on
		for b < len(p) && isSpaceByte(p[b]) {
			b++
		}
		for b < len(p) && !isSpaceByte(p[b]) {
			b++
		}
	}
	w := clean(p[a:b])
	if !strings.Contains(w, t.text) {
		return ""
	}
	return w
}

// clean puts text on one line as one sentence: no sentence end inside, no
// quote marks, brackets or stray markup.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '"', '“', '”', '[', ']', '`', '*', '|', '!', '?', ';':
			return ' '
		}
		return r
	}, s)
	var f []string
	for _, w := range strings.Fields(strings.ReplaceAll(s, "..", " to ")) { // 4..7 is a range
		if w = strings.TrimRight(dropStops(w), ":"); w != "" {
			f = append(f, w)
		}
	}
	out := strings.Join(f, " ")
	return strings.TrimSpace(strings.Trim(out, " ,"))
}

// dropStops removes the points of a word that could end a sentence: all
// but those followed by a digit or a lower-case letter (7.2, pacs.008,
// e.g.), so "LTD.," becomes "LTD," and "T.6.)" becomes "T.6)".
func dropStops(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] == '.' && !(i+1 < len(w) && (w[i+1] >= '0' && w[i+1] <= '9' || w[i+1] >= 'a' && w[i+1] <= 'z')) {
			continue
		}
		b.WriteByte(w[i])
	}
	return b.String()
}

// numberWritten reports whether the passage writes the number num so that
// a checker could read it there: not as the tail of a longer number
// (2025 holds no 5 of its own), but as a number on its own or the head of
// a dotted one (7.3 in 7.3.1). Number words count too.
func numberWritten(p, num string) bool {
	for i := 0; ; {
		j := strings.Index(p[i:], num)
		if j < 0 {
			break
		}
		a, b := i+j, i+j+len(num)
		i = a + 1
		if a > 0 {
			c := p[a-1]
			if c >= '0' && c <= '9' {
				continue
			}
			if (c == '.' || c == ',') && a > 1 && p[a-2] >= '0' && p[a-2] <= '9' {
				continue
			}
		}
		if b < len(p) && p[b] >= '0' && p[b] <= '9' {
			continue
		}
		return true
	}
	if v, err := strconv.Atoi(num); err == nil {
		w, ok := numberWord(v)
		if v == 1 {
			w, ok = "one", true
		}
		if ok {
			for _, x := range words(p) {
				if x == w {
					return true
				}
			}
		}
	}
	return false
}

// changeFact changes the token's last digit in the window so that the new
// number is written nowhere in the passage.
func changeFact(p, window string, t token) (changed, to string, ok bool) {
	// The fact as a whole number of the window, not the first run of its
	// digits (a "1" inside a URL before it is no fact).
	at := -1
	for _, w := range numberTokens(window) {
		if w.text == t.text {
			at = w.start
			break
		}
	}
	if at < 0 {
		return "", "", false
	}
	last := len(t.text) - 1
	for step := 1; step <= 9; step++ {
		d := (int(t.text[last]-'0') + step) % 10
		cand := t.text[:last] + strconv.Itoa(d)
		if numberWritten(p, cand) || strings.HasPrefix(cand, "0") && len(cand) > 1 && !strings.HasPrefix(t.text, "0") {
			continue
		}
		return window[:at] + cand + window[at+len(t.text):], cand, true
	}
	return "", "", false
}

var codeRe = regexp.MustCompile(`\b[A-Z]{1,6}[0-9]{2,6}\b|\b[a-z]{2,8}\.[0-9]{3}\b`)

// codeTokens are the passage's codes: AC01, D103, pacs.008.
func codeTokens(p string) []token {
	var out []token
	for _, m := range codeRe.FindAllStringIndex(p, -1) {
		out = append(out, token{text: p[m[0]:m[1]], start: m[0], end: m[1]})
	}
	return out
}

var numberWordRe = regexp.MustCompile(`(?i)(?:^|[^-\w])(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety)\s+[a-z]`)

// numberWordTokens are the passage's number words standing alone before a
// word (six months), not in a compound (two-byte).
func numberWordTokens(p string) []token {
	var out []token
	for _, m := range numberWordRe.FindAllStringSubmatchIndex(p, -1) {
		out = append(out, token{text: p[m[2]:m[3]], start: m[2], end: m[3]})
	}
	return out
}

func firstWithWindow(p string, ts []token) (token, bool) {
	for _, t := range ts {
		if windowAround(p, t) != "" {
			return t, true
		}
	}
	return token{}, false
}

// codeWritten reports whether the passage writes the code, case and
// separators aside, even inside a longer code.
func codeWritten(p, code string) bool {
	return strings.Contains(fold(p), fold(code))
}

func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// changeCode changes the code's last digit so that the passage writes the
// new code nowhere.
func changeCode(p, window string, t token) (changed, to string, ok bool) {
	at := strings.Index(window, t.text)
	last := len(t.text) - 1
	for step := 1; step <= 9; step++ {
		cand := t.text[:last] + strconv.Itoa((int(t.text[last]-'0')+step)%10)
		if !codeWritten(p, cand) {
			return window[:at] + cand + window[at+len(t.text):], cand, true
		}
	}
	return "", "", false
}

// changeNumberWord writes another number word for the token, one whose
// value the passage writes neither in words nor in digits.
func changeNumberWord(p, window string, t token) (changed, to string, ok bool) {
	at := strings.Index(window, t.text)
	for _, v := range []int{7, 11, 4, 9, 15, 40, 3, 8} {
		w := numberWords[v]
		if strings.EqualFold(w, t.text) || numberWritten(p, strconv.Itoa(v)) {
			continue
		}
		if t.text[0] >= 'A' && t.text[0] <= 'Z' {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		return window[:at] + w + window[at+len(t.text):], w, true
	}
	return "", "", false
}

// substitutes replace one word of a quote; the first that makes the quote
// absent from the passage is taken.
var substitutes = []string{"never", "always", "quarterly", "seldom", "purple"}

// alterQuote changes one word of the quote (the longest word of letters)
// so that its words no longer run together in the passage.
func alterQuote(q, p string) (altered, word string, ok bool) {
	f := strings.Fields(q)
	best := -1
	for i, w := range f {
		if isLetters(w) && len(w) >= 4 && (best < 0 || len(w) > len(f[best])) {
			best = i
		}
	}
	if best < 0 {
		return "", "", false
	}
	pw := words(p)
	for _, s := range substitutes {
		g := append([]string(nil), f...)
		g[best] = s
		a := strings.Join(g, " ")
		if !containsWords(pw, words(a)) {
			return a, f[best] + " → " + s, true
		}
	}
	return "", "", false
}

func isLetters(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return w != ""
}

// words splits text into lower-cased words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func containsWords(hay, needle []string) bool {
outer:
	for i := 0; i+len(needle) <= len(hay); i++ {
		for j, w := range needle {
			if hay[i+j] != w {
				continue outer
			}
		}
		return true
	}
	return len(needle) == 0
}

var numberWords = map[int]string{2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
	10: "ten", 11: "eleven", 12: "twelve", 15: "fifteen", 20: "twenty", 30: "thirty", 40: "forty", 45: "forty-five",
	50: "fifty", 60: "sixty", 90: "ninety"}

func numberWord(v int) (string, bool) {
	w, ok := numberWords[v]
	return w, ok
}

// plainWords picks up to six words of the passage that are letters only
// and no number word, month or code, for a draft with nothing to check.
func plainWords(p string) string {
	var out []string
	for _, w := range strings.Fields(p) {
		if !isLetters(w) || len(w) < 5 || strings.ToLower(w) != w || isNumberWord(w) || months[w] {
			continue
		}
		out = append(out, w)
		if len(out) == 6 {
			break
		}
	}
	if len(out) < 3 {
		return ""
	}
	return strings.Join(out, ", ")
}

var months = map[string]bool{"january": true, "february": true, "march": true, "april": true, "june": true, "july": true,
	"august": true, "september": true, "october": true, "november": true, "december": true}

func isNumberWord(w string) bool {
	for _, x := range numberWords {
		if strings.Contains(w, x) {
			return true
		}
	}
	for _, x := range []string{"one", "hundred", "thousand", "million", "billion", "zero", "thirteen", "fourteen", "sixteen", "seventeen", "eighteen", "nineteen", "seventy", "eighty"} {
		if strings.Contains(w, x) {
			return true
		}
	}
	return false
}

// WriteJSONL writes the drafts to path, one a line.
func WriteJSONL(path string, ds []Draft) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, d := range ds {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("encode draft %s: %w", d.ID, err)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write drafts: %w", err)
	}
	return nil
}

// Handwritten is one hand-written draft of another form of a fact, where
// rewriting it by rule is not safe: Draft cites the item's passage as S1
// and writes Form where the passage writes Same.
type Handwritten struct {
	Item  string `json:"item"`
	Draft string `json:"draft"`
	Same  string `json:"same"`
	Form  string `json:"form"`
}

// LoadHandwritten reads hand-written drafts, one JSON object a line.
func LoadHandwritten(path string) ([]Handwritten, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read hand-written drafts: %w", err)
	}
	var out []Handwritten
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var h Handwritten
		if err := json.Unmarshal([]byte(line), &h); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, h)
	}
	return out, nil
}

// HandwrittenDrafts turns hand-written drafts into drafts of kind
// other_form over the items' passages, checking each: the passage writes
// Same, the draft writes Form and cites [S1], and the passage does not
// write Form (else nothing would be normalised).
func HandwrittenDrafts(hs []Handwritten, items []Item) ([]Draft, error) {
	byID := map[string]Item{}
	for _, it := range items {
		byID[it.ID] = it
	}
	var out []Draft
	for i, h := range hs {
		it, ok := byID[h.Item]
		switch {
		case !ok:
			return nil, fmt.Errorf("hand-written draft %d: no item %s", i+1, h.Item)
		case !strings.Contains(it.Passage, h.Same):
			return nil, fmt.Errorf("hand-written draft %d: %s's passage does not write %q", i+1, h.Item, h.Same)
		case !strings.Contains(h.Draft, h.Form) || !strings.Contains(h.Draft, "[S1]"):
			return nil, fmt.Errorf("hand-written draft %d: the draft must write %q and cite [S1]", i+1, h.Form)
		case strings.Contains(strings.ToLower(it.Passage), strings.ToLower(h.Form)):
			return nil, fmt.Errorf("hand-written draft %d: %s's passage already writes %q", i+1, h.Item, h.Form)
		}
		out = append(out, Draft{ID: fmt.Sprintf("%s/h%d", h.Item, i+1), Item: h.Item, Kind: KindOtherForm, Draft: h.Draft,
			Sources: []string{h.Item}, Passages: []string{it.Passage}, Expect: Verified, Note: "hand-written: " + h.Same + " → " + h.Form})
	}
	return out, nil
}
