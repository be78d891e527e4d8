package verify

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stratakb/stratakb/internal/rescan"
	"github.com/stratakb/stratakb/structure"
)

// Kinds of facts.
const (
	KindDate    = "date"
	KindAmount  = "amount"
	KindPercent = "percent"
	KindCode    = "code"
	KindClause  = "clause"
	KindNumber  = "number"
)

// Fact is one checkable fact of a text: a date, amount, percentage, code,
// clause reference or number, with its normalised keys (an ambiguous
// number such as 1.000 has two readings).
type Fact struct {
	Kind       string
	Text       string
	Start, End int
	Keys       []string
}

const numPat = `[0-9]{1,3}(?:[.,'  ][0-9]{3})+(?:[.,][0-9]+)?|[0-9]+(?:[.,][0-9]+)?`

var (
	months = map[string]int{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
		"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}
	monthPat = `(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?`

	isoDateRe = regexp.MustCompile(`\b([0-9]{4})-([0-9]{2})-([0-9]{2})\b`)
	dmyRe     = regexp.MustCompile(`(?i)\b([0-9]{1,2})(?:st|nd|rd|th)?\.?\s+` + monthPat + `,?\s+([0-9]{4})\b`)
	mdyRe     = regexp.MustCompile(`(?i)\b` + monthPat + `\s+([0-9]{1,2})(?:st|nd|rd|th)?,?\s+([0-9]{4})\b`)
	dotDateRe = regexp.MustCompile(`\b([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{4})\b`)
	currency  = `(\b(?:EUR|USD|GBP|CHF|JPY|SEK|NOK|DKK|PLN|CAD|AUD)|€|\$|£|¥)` // a code starts a word: not the eur of base_fee_eur
	currWords = `(euros?|dollars?|pounds?|francs?)`
	scale     = `(?:\s*(thousand|million|billion|bn|m|k)\b)?`
	amountPre = regexp.MustCompile(`(?i)` + currency + `\s?(` + numPat + `)` + scale)
	// The words first: "48 euros" is written with the word, not with the
	// code its first letters spell.
	amountPost = regexp.MustCompile(`(?i)\b(` + numPat + `)` + scale + `\s?(?:` + currWords + `\b|` + currency + `)`)
	percentRe  = regexp.MustCompile(`(?i)\b(` + numPat + `)\s?(%|percent\b|per cent\b)`)
	codeRes    = []*regexp.Regexp{
		regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`), // IBAN
		regexp.MustCompile(`\b[a-z]{2,8}\.[0-9]{3}(?:\.[0-9]{3})*(?:\.[0-9]{2})?\b`),         // pacs.008.001.08
		regexp.MustCompile(`\b[A-Za-z]{1,6}-[0-9]{1,6}\b`),                                   // AT-44
		regexp.MustCompile(`\b[A-Z]{1,6}[0-9]{2,6}[A-Z]?\b`),                                 // AC01, W123
	}
	// anyNumberRe finds numbers anywhere, also glued to letters (AC01,
	// EUR1000), but never a number cut off before a digit: 1,1999 is one
	// number, not 1,199 and 9.
	anyNumberRe = regexp.MustCompile(`(` + numPat + `)(?:$|[^0-9])`)
	// numberRe is a number on its own; what may stand before it is checked
	// by numberFree, since a match must not take it from the match before.
	numberRe = regexp.MustCompile(`(-?(?:` + numPat + `))(?:$|[^0-9A-Za-z])`)
	wordNums = map[string]int{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
		"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
		"fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}
	wordNumRe = regexp.MustCompile(`(?i)\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)(?:[- ](one|two|three|four|five|six|seven|eight|nine))?(?:\s+(hundred|thousand|million|billion))?\b`)
)

var currencyCode = map[string]string{"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY",
	"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD", "pound": "GBP", "pounds": "GBP", "franc": "CHF", "francs": "CHF"}

func normCurrency(c string) string {
	if v, ok := currencyCode[strings.ToLower(c)]; ok {
		return v
	}
	return strings.ToUpper(c)
}

// groupMarks are the thousands separators dropped before parsing.
var groupMarks = strings.NewReplacer(" ", "", "\u00a0", "", "'", "")

var wordScales = map[string]float64{"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9}

var scales = map[string]float64{"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}

// numbers parses a written number; an ambiguous one gives each reading:
// 1.000,00 and 1,000.00 are 1000; 1.250 is 1250 or 1.25, but 1.000 only
// 1000 (nobody writes three zero decimals for a whole number); 7,5 is 7.5.
func numbers(s string) []float64 {
	if strings.ContainsAny(s, " \u00a0'") { // the replacer allocates even when it replaces nothing
		s = groupMarks.Replace(s)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var readings []string
	dot, comma := strings.LastIndex(s, "."), strings.LastIndex(s, ",")
	switch {
	case dot >= 0 && comma >= 0:
		if dot > comma { // 1,000.50
			readings = []string{strings.ReplaceAll(s, ",", "")}
		} else { // 1.000,50
			readings = []string{strings.ReplaceAll(strings.ReplaceAll(s, ".", ""), ",", ".")}
		}
	case comma >= 0:
		groups := strings.Split(s, ",")
		if len(groups) > 2 || len(groups[1]) == 3 { // 1,000 or 1,000,000 (and 1,250 read as decimal too)
			readings = append(readings, strings.ReplaceAll(s, ",", ""))
			if len(groups) == 2 && groups[1] != "000" { // no one writes 5,000 for five
				readings = append(readings, strings.ReplaceAll(s, ",", "."))
			}
		} else { // 7,5
			readings = []string{strings.ReplaceAll(s, ",", ".")}
		}
	case dot >= 0:
		groups := strings.Split(s, ".")
		if len(groups) > 2 { // 1.000.000
			readings = []string{strings.ReplaceAll(s, ".", "")}
		} else {
			readings = []string{s}
			if len(groups[1]) == 3 { // 1.250 may be a thousand and more
				readings = append(readings, strings.ReplaceAll(s, ".", ""))
				if groups[1] == "000" { // and 1.000 is a thousand, not one
					readings = readings[1:]
				}
			}
		}
	default:
		readings = []string{s}
	}
	var out []float64
	for _, r := range readings {
		if v, err := strconv.ParseFloat(r, 64); err == nil {
			if neg {
				v = -v
			}
			out = append(out, v)
		}
	}
	return out
}

func numKey(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func dateKey(y, m, d int) string { return fmt.Sprintf("%s:%04d-%02d-%02d", KindDate, y, m, d) }

// Facts returns the facts of text, in order. Parts already taken by a
// longer fact (the 2026 of a date) are not facts of their own.
func Facts(text string) []Fact {
	var out []Fact
	taken := make([]bool, len(text)+1)
	free := func(a, b int) bool {
		for i := a; i < b; i++ {
			if taken[i] {
				return false
			}
		}
		return true
	}
	add := func(kind string, a, b int, keys []string) {
		if len(keys) == 0 || !free(a, b) {
			return
		}
		for i := a; i < b; i++ {
			taken[i] = true
		}
		out = append(out, Fact{Kind: kind, Text: text[a:b], Start: a, End: b, Keys: keys})
	}
	for _, m := range isoDateScan.FindAllStringSubmatchIndex(text) {
		y, mo, d := atoi(text[m[2]:m[3]]), atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]])
		if validDate(y, mo, d) {
			add(KindDate, m[0], m[1], []string{dateKey(y, mo, d)})
		}
	}
	for _, m := range dmyScan.FindAllStringSubmatchIndex(text) {
		d, mo, y := atoi(text[m[2]:m[3]]), months[strings.ToLower(text[m[4]:m[5]])], atoi(text[m[6]:m[7]])
		if validDate(y, mo, d) {
			add(KindDate, m[0], m[1], []string{dateKey(y, mo, d)})
		}
	}
	for _, m := range mdyScan.FindAllStringSubmatchIndex(text) {
		mo, d, y := months[strings.ToLower(text[m[2]:m[3]])], atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]])
		if validDate(y, mo, d) {
			add(KindDate, m[0], m[1], []string{dateKey(y, mo, d)})
		}
	}
	for _, m := range dotDateScan.FindAllStringSubmatchIndex(text) {
		d, mo, y := atoi(text[m[2]:m[3]]), atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]])
		if validDate(y, mo, d) {
			add(KindDate, m[0], m[1], []string{dateKey(y, mo, d)})
		}
	}
	amountKeys := func(cur, num, sc string) []string {
		mult := 1.0
		if sc != "" {
			mult = scales[strings.ToLower(sc)]
		}
		var keys []string
		for _, v := range numbers(num) {
			keys = append(keys, KindAmount+":"+normCurrency(cur)+":"+numKey(v*mult))
		}
		return keys
	}
	for _, m := range amountPreScan.FindAllStringSubmatchIndex(text) {
		sc := ""
		if m[6] >= 0 {
			sc = text[m[6]:m[7]]
		}
		add(KindAmount, m[0], m[1], amountKeys(text[m[2]:m[3]], text[m[4]:m[5]], sc))
	}
	for _, m := range amountPostScan.FindAllStringSubmatchIndex(text) {
		sc, cur := "", ""
		if m[4] >= 0 {
			sc = text[m[4]:m[5]]
		}
		if m[6] >= 0 {
			cur = text[m[6]:m[7]]
		} else if m[8] >= 0 {
			cur = text[m[8]:m[9]]
		}
		add(KindAmount, m[0], m[1], amountKeys(cur, text[m[2]:m[3]], sc))
	}
	for _, m := range percentScan.FindAllStringSubmatchIndex(text) {
		var keys []string
		for _, v := range numbers(text[m[2]:m[3]]) {
			keys = append(keys, KindPercent+":"+numKey(v))
		}
		add(KindPercent, m[0], m[1], keys)
	}
	for _, sc := range codeScans {
		for _, m := range sc.FindAllStringIndex(text) {
			add(KindCode, m[0], m[1], []string{KindCode + ":" + foldCode(text[m[0]:m[1]])})
		}
	}
	for _, r := range structure.ParseReferences(text) {
		if r.Weak {
			continue
		}
		add(KindClause, r.Start, r.End, []string{KindClause + ":" + strings.ToLower(r.Number)})
	}
	for _, m := range groupMatches(numberScan, text, numberFree) {
		var keys []string
		for _, v := range numbers(text[m[2]:m[3]]) {
			keys = append(keys, KindNumber+":"+numKey(v))
		}
		add(KindNumber, m[2], m[3], keys)
	}
	for _, m := range wordNumScan.FindAllStringSubmatchIndex(text) {
		v := wordNums[strings.ToLower(text[m[2]:m[3]])]
		if m[4] >= 0 {
			v += wordNums[strings.ToLower(text[m[4]:m[5]])]
		}
		if m[6] >= 0 { // five thousand is 5000, not 5
			v *= int(wordScales[strings.ToLower(text[m[6]:m[7]])])
		}
		add(KindNumber, m[0], m[1], []string{KindNumber + ":" + strconv.Itoa(v)})
	}
	sortFacts(out)
	return out
}

func validDate(y, m, d int) bool {
	return y >= 1000 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// foldCode is a code's key: lower case, separators dropped, so that
// "AT-44" and "AT 44", "pacs.008" and "PACS 008" compare equal.
func foldCode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func sortFacts(fs []Fact) {
	slices.SortStableFunc(fs, func(a, b Fact) int { return cmp.Compare(a.Start, b.Start) })
}

// index is what a passage offers to match facts against: every key of its
// facts, and every number it writes (also inside dates, amounts and
// percentages, so "in 2026" matches "4 November 2026"), with clause
// numbers as numbers too. Each key keeps the byte span in the passage
// where it was first found, facts before the numbers inside them, so that
// a check can say where it matched.
type index struct {
	keys    map[string][2]int
	passage string
	text    string // lower-cased passage
}

func indexOf(passage string) index {
	ix := index{keys: map[string][2]int{}, passage: passage, text: strings.ToLower(passage)}
	for _, f := range Facts(passage) {
		for _, k := range f.Keys {
			ix.add(k, f.Start, f.End)
		}
	}
	// Numbers inside other facts, but not the tail of a dotted number:
	// the 2 of clause 1.1.2 is no number 2 (a year after a dotted date is).
	for _, at := range groupMatches(anyNumberScan, passage, nil) {
		m := passage[at[2]:at[3]]
		if dottedTail(passage, at[2]) && len(m) != 4 {
			continue
		}
		for _, v := range numbers(m) {
			ix.add(KindNumber+":"+numKey(v), at[2], at[3])
		}
	}
	for _, sc := range codeScans {
		for _, m := range sc.FindAllStringIndex(passage) {
			ix.add(KindCode+":"+foldCode(passage[m[0]:m[1]]), m[0], m[1])
		}
	}
	return ix
}

// add records key k at bytes [a, b) of the passage unless it is known.
func (ix index) add(k string, a, b int) {
	if _, ok := ix.keys[k]; !ok {
		ix.keys[k] = [2]int{a, b}
	}
}

// groupMatches is FindAllStringSubmatchIndex for a pattern whose group 1
// is followed by a guard character, going on from the group's end so that
// the guard can stand before the next match (the slash of 12/23/2013 leads
// into 23). A match whose group the byte before does not allow (before
// reports false) is passed over.
func groupMatches(re *rescan.Scan, text string, before func(prev byte) bool) [][]int {
	var out [][]int
	for pos := 0; pos < len(text); {
		m := re.FindStringSubmatchIndex(text[pos:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		if before != nil && m[2] > 0 && !before(text[m[2]-1]) {
			pos = m[2] + 1
			continue
		}
		out = append(out, m)
		pos = max(m[3], pos+1)
	}
	return out
}

// numberFree reports whether a number may start after prev: not inside a
// word or a longer number.
func numberFree(prev byte) bool { return !isWordByte(prev) && prev != '.' && prev != ',' }

// dottedTail reports whether the number at offset a of s continues a
// number before it, as 2 does in 1.1.2.
func dottedTail(s string, a int) bool {
	return a >= 2 && (s[a-1] == '.' || s[a-1] == ',') && s[a-2] >= '0' && s[a-2] <= '9'
}

// holds reports whether the passage index holds fact f, and where: the
// byte span in the passage of what matched. A clause reference matches its
// number written anywhere in the passage; an amount matches the same value
// in the same currency.
func (ix index) holds(f Fact) ([2]int, bool) {
	for _, k := range f.Keys {
		if at, ok := ix.keys[k]; ok {
			return at, true
		}
		if kind, num, ok := strings.Cut(k, ":"); ok && kind == KindClause {
			if a := tokenAt(ix.text, num); a >= 0 {
				return [2]int{originalOffset(ix.passage, ix.text, a), originalOffset(ix.passage, ix.text, a+len(num))}, true
			}
		}
	}
	return [2]int{}, false
}

// originalOffset maps byte off of lower, strings.ToLower(s), to the byte
// of s where the same rune stands (ToLower maps rune for rune, but a few
// runes change length, as the Kelvin sign does).
func originalOffset(s, lower string, off int) int {
	i, j := 0, 0
	for i < len(s) && j < off {
		_, w := utf8.DecodeRuneInString(s[i:])
		_, lw := utf8.DecodeRuneInString(lower[j:])
		i, j = i+w, j+lw
	}
	return i
}

// tokenAt returns where tok first occurs in s not inside a longer number
// or word, or -1: "7.2" is in "7.2 notice" but not in "17.2" or "7.21".
func tokenAt(s, tok string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], tok)
		if j < 0 {
			return -1
		}
		a, b := i+j, i+j+len(tok)
		before := a == 0 || !isWordByte(s[a-1])
		after := b == len(s) || !isWordByte(s[b]) && !(s[b] == '.' && b+1 < len(s) && s[b+1] >= '0' && s[b+1] <= '9')
		if before && after {
			return a
		}
		i = a + 1
	}
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// unitRe is a unit of time or measure written after a number, in English
// or German: "13 days", "5 business days", "30 Tagen", "2 GB".
var unitRe = regexp.MustCompile(`^[ \t\x{00a0}]?(?i:(?:(?:business|working|calendar|banking)\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|quarters?|years?)|(?:bank)?(?:arbeits|werk|kalender)?(?:tage?n?|tag)|wochen?|monate?n?|monat|jahre?n?|quartale?n?|stunden?|minuten?|sekunden?)\b|^[ \t\x{00a0}]?(?:ms|KB|MB|GB|TB|kB|km|kg|bytes?|pages?|times|lines?|characters?|tokens?)\b`)

// withUnit returns where fact f of text ends with the unit written after
// it: a number followed by a unit ends after the unit; any other fact ends
// where it ends.
func withUnit(text string, f Fact) int {
	if f.Kind != KindNumber {
		return f.End
	}
	if m := unitRe.FindStringIndex(text[f.End:]); m != nil {
		return f.End + m[1]
	}
	return f.End
}
