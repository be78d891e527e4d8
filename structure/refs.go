package structure

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/internal/rescan"
	"github.com/stratakb/stratakb/schema"
)

// Reference is a clause or section a question names: "clause 7.2",
// "Art. 12", "§ 4", "Annex II", or a bare "4.3.2" or "7(2)(b)".
type Reference struct {
	// Kind is the schema Kind constant the reference names: KindClause for
	// "clause 7.2" and bare numbers, KindSection, KindArticle, KindPara
	// for "§ 4" and "paragraph 4", KindAnnex, KindAppendix, KindSchedule.
	Kind string
	// Number is the number as a section stores it: "7.2", "7(2)(b)", "12",
	// "II", "A.1" (spaces removed, a trailing full stop dropped).
	Number string
	// Raw is the reference as the question writes it ("Art. 12"); for the
	// later numbers of a list ("clauses 7.2 and 7.3") it is the number
	// alone.
	Raw string
	// Start and End are the byte offsets of Raw in the question.
	Start, End int
	// Weak marks a bare number with a single dot ("7.2") or a part over
	// 99: it may be a version or an amount, so it counts only when a
	// section with that number exists. A number the words around it make
	// a version, an amount, a quantity or a date ("version 7.2", "EUR 7.2
	// million", "7.2 kg") is no reference at all.
	Weak bool
	// sign is set for "§ 4", which names a section or a paragraph; bare
	// for a number without a keyword.
	sign, bare bool
}

// Explicit reports whether the reference names its kind ("Article 12",
// "§ 4", "clause 7.2") rather than being a bare number ("4.3.2"): a bare
// number that matches nothing may be anything, an explicit reference that
// matches nothing names a section the documents do not have.
func (r Reference) Explicit() bool { return !r.bare }

// Key kinds: the prefix of a lookup key, one per section kind.
const (
	keyClause    = "clause"
	keySection   = "section"
	keyParagraph = "paragraph"
	keyArticle   = "article"
	keyAnnex     = "annex"
	keyAppendix  = "appendix"
	keySchedule  = "schedule"
)

// SectionKey returns the lookup key of a section: its kind and number in
// lower case, "clause:7.2", "article:12", "paragraph:4", "annex:ii",
// "appendix:a", "schedule:1", "clause:a.1". A section without a number has
// no key (""). The query side stores the key with each section and finds
// the sections a question names with one indexed equality
// (key = ANY(reference keys)).
func SectionKey(s schema.Section) string {
	if s.Number == "" {
		return ""
	}
	var kind string
	switch s.Kind {
	case schema.KindClause, schema.KindHeading:
		kind = keyClause
	case schema.KindSection:
		kind = keySection
	case schema.KindPara:
		kind = keyParagraph
	case schema.KindArticle:
		kind = keyArticle
	case schema.KindAnnex:
		kind = keyAnnex
	case schema.KindAppendix:
		kind = keyAppendix
	case schema.KindSchedule:
		kind = keySchedule
	default:
		return ""
	}
	return kind + ":" + keyNumber(s.Kind, s.Number)
}

// keyNumber is a number as a key holds it: normNumber's form, and an
// Article's or Section's roman numeral as its value, so "Article 2" finds
// "ARTICLE II" and "Article II" finds "Article 2".
func keyNumber(kind, number string) string {
	n := normNumber(number)
	if kind == schema.KindArticle || kind == schema.KindSection {
		if v := articleRoman(strings.ToUpper(n)); v > 0 {
			return strconv.Itoa(v)
		}
	}
	return n
}

// Keys returns the section keys the reference may match, the most likely
// first: "clause 4" matches clause 4 or Section 4; "section 4" also a § 4;
// "§ 4" only a section marked with § (a paragraph), never another
// document's clause 4; "paragraph 3" a § 3 or a clause 3; a bare number a
// clause, a Section or a §; Article, Annex, Appendix and Schedule only
// their own kind, except that "Article 13(2)" falls back to Article 13.
func (r Reference) Keys() []string {
	n := keyNumber(r.Kind, r.Number)
	if n == "" {
		return nil
	}
	var kinds []string
	switch r.Kind {
	case schema.KindClause:
		kinds = []string{keyClause, keySection}
		if r.bare {
			kinds = append(kinds, keyParagraph)
		}
	case schema.KindSection:
		kinds = []string{keySection, keyClause, keyParagraph}
	case schema.KindPara:
		if r.sign {
			// "§ 4" names a section marked with §, never another
			// document's clause 4 or Section 4.
			kinds = []string{keyParagraph}
		} else {
			kinds = []string{keyParagraph, keyClause}
		}
	case schema.KindArticle:
		kinds = []string{keyArticle}
		// "Article 13(2)" is a paragraph of Article 13, which is the
		// section a document has.
		if i := strings.IndexByte(n, '('); i > 0 {
			return []string{keyArticle + ":" + n, keyArticle + ":" + n[:i]}
		}
	case schema.KindAnnex:
		kinds = []string{keyAnnex}
	case schema.KindAppendix:
		kinds = []string{keyAppendix}
	case schema.KindSchedule:
		kinds = []string{keySchedule}
	default:
		return nil
	}
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k + ":" + n
	}
	return out
}

// normNumber lower-cases a number and drops white space and a trailing
// full stop: "7 (2)(b)." → "7(2)(b)", "II" → "ii".
func normNumber(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	return strings.TrimRight(s, ".")
}

var (
	// refKeywordRe finds a keyword and the first number after it.
	refKeywordRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(clauses?|cl\.|sections?|sect?\.|articles?|arts?\.?|paragraphs?|paras?\.|annex(?:es)?|appendix|appendices|app\.|schedules?|sch\.)[ \t\x{00a0}]*(?:no\.?[ \t]*)?`)
	signRe       = regexp.MustCompile(`(§§?|¶)[ \t\x{00a0}]*`)
	// A clause number: 7, 7.2, 7.2.1, 7(2)(b), 12a, A.1.
	clauseNumRe = regexp.MustCompile(`^(?:[A-Z]\.[0-9]{1,3}(?:\.[0-9]{1,3})*|[0-9]{1,4}(?:\.[0-9]{1,3})*[a-z]?(?:[ ]?\([0-9a-z]{1,4}\))*)`)
	// An annex number: II, A, 2, and A.1 for a clause of the annex.
	// An Article's or Section's roman numeral (checked by articleRoman).
	romanNumRe = regexp.MustCompile(`^[IVXLC]{1,7}`)
	annexNumRe = regexp.MustCompile(`^(?:[A-Z]\.[0-9]{1,3}(?:\.[0-9]{1,3})*|[IVXLCivxlc]{1,7}|[A-Z]|[0-9]{1,3})`)
	// A list separator: "7.2 and 7.3", "4, 5 or 6", "3 to 5".
	listSepRe = regexp.MustCompile(`^(?:[ \t]*,[ \t]*(?:and[ \t]+|or[ \t]+)?|[ \t]+(?:and|or|to|through|&)[ \t]+|[ \t]*[-–][ \t]*)`)
	// Bare numbers.
	bareDottedRe = regexp.MustCompile(`[0-9]{1,4}(?:\.[0-9]{1,4})+`)
	bareParenRe  = regexp.MustCompile(`[0-9]{1,3}(?:\.[0-9]{1,3})*(?:\([0-9a-z]{1,4}\))+`)
	// A bare annex clause: a capital and two or more numbers, "B.1.1.1",
	// "G.1.2". One number ("T.81", "H.264") is a standard's name, not a
	// clause.
	bareAnnexRe = regexp.MustCompile(`[A-Z]\.[0-9]{1,3}(?:\.[0-9]{1,3})+`)
)

// The patterns above that search whole texts are read with scans (package
// rescan), which find what the patterns find but try them only where a
// match can start; each need is what stands where a match starts, and
// TestRefScansAgree checks the scans against the patterns.
var (
	// A keyword starts at the character, or after it.
	refKeywordScan = rescan.New(refKeywordRe, func(t string, i int) bool {
		_, size := utf8.DecodeRuneInString(t[i:])
		return keywordPrefix(t, i) || keywordPrefix(t, i+size)
	})
	signScan = rescan.New(signRe, nil)
	// A capital, a full stop and a digit.
	bareAnnexScan = rescan.New(bareAnnexRe, func(t string, i int) bool {
		return len(t)-i >= 3 && t[i+1] == '.' && isDigit(t[i+2])
	})
	// Up to three digits, then a full stop or a bracket.
	bareParenScan = rescan.New(bareParenRe, func(t string, i int) bool {
		j := digitsEnd(t, i)
		return j-i <= 3 && j < len(t) && (t[j] == '.' || t[j] == '(')
	})
	// Up to four digits, a full stop and a digit.
	bareDottedScan = rescan.New(bareDottedRe, func(t string, i int) bool {
		j := digitsEnd(t, i)
		return j-i <= 4 && len(t)-j >= 2 && t[j] == '.' && isDigit(t[j+1])
	})
)

// keywordPrefix reports whether a keyword of refKeywordRe may start at
// byte i of t: every one starts with one of these, case aside.
func keywordPrefix(t string, i int) bool {
	if i >= len(t) {
		return false
	}
	if c := t[i] | 0x20; t[i] < utf8.RuneSelf && c != 'c' && c != 's' && c != 'a' && c != 'p' {
		return false // the common case, at once
	}
	return rescan.HasFoldPrefix(t, i, "cl", "sec", "art", "par", "annex", "app", "sch")
}

// digitsEnd returns where the digits at byte i of t end.
func digitsEnd(t string, i int) int {
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	return i
}

// versionWords are words after which a bare number is a version (or a
// standard's number), never a reference.
var versionWords = words("version versions ver v release releases rel revision rev build patch " +
	"python go golang rfc pep iso iec en din node nodejs npm java jdk tls ssl http ubuntu debian " +
	"fedora rhel centos alpine linux kernel postgresql postgres pg mysql ip ipv php ruby rust perl " +
	"kotlin swift android ios macos windows chrome firefox safari api sdk firmware protocol " +
	"unicode utf html css ecmascript es bluetooth usb wifi")

// amountWords are words before a bare number that make it an amount: a
// currency ("EUR 7.2", "USD 1.5").
var amountWords = words("eur usd gbp chf jpy cny aud cad sek nok dkk pln czk huf inr brl " +
	"zar rub try mxn sgd hkd nzd krw")

// unitWords are words after a bare number that make it an amount or a
// quantity: "7.2 million", "7.2 %", "7.2 kg", "7.2 days".
var unitWords = words("% ‰ percent per pct pp million millions mio mn m bn billion billions " +
	"mrd trillion trillions thousand thousands k eur usd gbp chf euro euros dollar dollars pound pounds " +
	"kg g mg t tonne tonnes ton tons lb lbs oz km cm mm nm µm mi mile miles ft feet inch inches yd " +
	"l ml cl hl gal m² m2 m³ m3 km² ha sqm kwh mwh gwh kw mw gw w v kv mv ma mah hz khz mhz ghz " +
	"kb mb gb tb pb kib mib gib tib bytes bit bits kbps mbps gbps ms µs ns s sec secs second seconds " +
	"min mins minute minutes h hr hrs hour hours day days week weeks month months year years " +
	"°c °f ° degrees x times points pts")

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// notReference reports whether the bare number q[start:end] reads as a
// version, an amount, a quantity or a date by the words around it.
func notReference(q string, start, end int) bool {
	before := strings.TrimLeft(strings.ToLower(tokenBefore(q, start)), "([{\"'")
	if versionWords[before] || amountWords[before] || versionWords[strings.TrimSuffix(before, ".")] {
		return true
	}
	if before == "€" || before == "$" || before == "£" || before == "¥" {
		return true
	}
	// A version series: "2.3.x", "1.4.X", "3.2.*".
	if rest := q[end:]; len(rest) >= 2 && rest[0] == '.' && strings.ContainsRune("xX*", rune(rest[1])) {
		if r, _ := utf8.DecodeRuneInString(rest[2:]); len(rest) == 2 || !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return true
		}
	}
	after := strings.ToLower(tokenAfter(q, end))
	if unitWords[after] || unitWords[strings.TrimRight(after, ".,;:!?)")] {
		return true
	}
	// A year and a month: "2024.03", "2024.3".
	if parts := strings.Split(q[start:end], "."); len(parts) == 2 {
		y, _ := strconv.Atoi(parts[0])
		mo, _ := strconv.Atoi(parts[1])
		if y >= 1900 && y <= 2199 && mo >= 1 && mo <= 12 {
			return true
		}
	}
	return false
}

// tokenBefore returns the run of characters other than white space that
// ends before offset i, skipping white space.
func tokenBefore(q string, i int) string {
	j := i
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(q[:j])
		if !unicode.IsSpace(r) {
			break
		}
		j -= size
	}
	k := j
	for k > 0 {
		r, size := utf8.DecodeLastRuneInString(q[:k])
		if unicode.IsSpace(r) {
			break
		}
		k -= size
	}
	return q[k:j]
}

// tokenAfter returns the run of characters other than white space that
// starts after offset i, skipping white space.
func tokenAfter(q string, i int) string {
	j := i
	for j < len(q) {
		r, size := utf8.DecodeRuneInString(q[j:])
		if !unicode.IsSpace(r) {
			break
		}
		j += size
	}
	k := j
	for k < len(q) {
		r, size := utf8.DecodeRuneInString(q[k:])
		if unicode.IsSpace(r) {
			break
		}
		k += size
	}
	return q[j:k]
}

// wordStart reports whether offset i starts a word: the rune before it is
// not a letter, a digit or an underscore.
func wordStart(q string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(q[:i])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
}

// ParseReferences returns the clause references in question q, in the order
// they are written; a reference repeated with the same kind and number is
// returned once, where it first appears. The caller decides how many to
// look up.
func ParseReferences(q string) []Reference {
	var refs []Reference
	taken := func(start, end int) bool {
		for _, r := range refs {
			if start < r.End && end > r.Start {
				return true
			}
		}
		return false
	}
	// Matches may not overlap, so a keyword that reads no number ("the
	// termination clause Article 12") must not swallow the keyword after
	// it: the search goes on from the end of each keyword.
	for pos := 0; pos < len(q); {
		m := refKeywordScan.FindStringSubmatchIndex(q[pos:])
		if m == nil {
			break
		}
		for k := range m {
			m[k] += pos
		}
		next := m[3]
		if m[2] == pos && pos > 0 && !wordStart(q, pos) {
			// "^" matched inside a word that the last keyword ended in.
			pos++
			continue
		}
		kw := strings.ToLower(q[m[2]:m[3]])
		kind := keywordKind(kw)
		refs = appendList(refs, q, m[2], m[1], kind, false)
		pos = next
	}
	for _, m := range signScan.FindAllStringIndex(q) {
		if taken(m[0], m[1]) {
			continue
		}
		refs = appendList(refs, q, m[0], m[1], schema.KindPara, true)
	}
	// Bare annex clauses: "B.1.1.1 of T.81" names the annex clause as
	// surely as "clause B.1.1.1" does.
	for _, m := range bareAnnexScan.FindAllStringIndex(q) {
		start, end := m[0], m[1]
		if taken(start, end) || !bareBoundary(q, start, end) || notReference(q, start, end) {
			continue
		}
		num := q[start:end]
		refs = append(refs, Reference{Kind: schema.KindClause, Number: num, Raw: num, Start: start, End: end, bare: true})
	}
	// Bare numbers: 4.3.2 and 7(2)(b) are clauses, 7.2 may be one.
	for _, sc := range []*rescan.Scan{bareParenScan, bareDottedScan} {
		for _, m := range sc.FindAllStringIndex(q) {
			start, end := m[0], m[1]
			if taken(start, end) || !bareBoundary(q, start, end) {
				continue
			}
			num := q[start:end]
			r := Reference{Kind: schema.KindClause, Number: num, Raw: num, Start: start, End: end, bare: true}
			if sc == bareDottedScan {
				parts := strings.Split(num, ".")
				ok := true
				for i, p := range parts {
					if len(p) > 1 && p[0] == '0' || len(p) > 3 || i > 0 && p == "0" {
						ok = false // 1.000.000, 2026.11.30, 3.0
					}
				}
				if !ok {
					continue
				}
				if len(parts) == 2 {
					r.Weak = true
				}
				for _, p := range parts {
					if n, _ := strconv.Atoi(p); n > 99 {
						r.Weak = true
					}
				}
			}
			// A number that reads as a version, an amount, a quantity
			// or a date is not a reference, even where a section of
			// that number exists: "version 7.2", "EUR 7.2 million",
			// "7.2 %", "7.2 kg".
			if notReference(q, start, end) {
				continue
			}
			refs = append(refs, r)
		}
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].Start < refs[j].Start })
	// A clause named twice is looked up once, where it is first named.
	seen := map[string]bool{}
	out := refs[:0]
	for _, r := range refs {
		k := r.Kind + ":" + keyNumber(r.Kind, r.Number)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

func keywordKind(kw string) string {
	kw = strings.TrimSuffix(kw, ".")
	switch {
	case strings.HasPrefix(kw, "cl"):
		return schema.KindClause
	case strings.HasPrefix(kw, "sec"):
		return schema.KindSection
	case strings.HasPrefix(kw, "art"):
		return schema.KindArticle
	case strings.HasPrefix(kw, "par"):
		return schema.KindPara
	case strings.HasPrefix(kw, "annex"):
		return schema.KindAnnex
	case strings.HasPrefix(kw, "app"):
		return schema.KindAppendix
	default:
		return schema.KindSchedule
	}
}

// appendList reads the number at q[numAt:] after a keyword that starts at
// kwStart, and any further numbers of a list ("§§ 3 and 4").
func appendList(refs []Reference, q string, kwStart, numAt int, kind string, sign bool) []Reference {
	first := true
	pos := numAt
	for {
		num, ok := readNumber(q[pos:], kind)
		if !ok {
			return refs
		}
		end := pos + len(num)
		if !numberBoundary(q, end) {
			return refs
		}
		if len(num) == 1 && !isDigit(num[0]) && (kind == schema.KindArticle || kind == schema.KindSection) &&
			!unicode.IsUpper(rune(q[kwStart])) {
			return refs // "the article I read", not Article I
		}
		r := Reference{Kind: kind, Number: strings.ReplaceAll(num, " ", ""), Start: pos, End: end, sign: sign}
		if first {
			r.Start = kwStart
		}
		// "Annex A.1" names clause A.1 of Annex A.
		if (kind == schema.KindAnnex || kind == schema.KindAppendix) && strings.Contains(num, ".") {
			r.Kind = schema.KindClause
		}
		r.Raw = q[r.Start:r.End]
		refs = append(refs, r)
		first = false
		sep := listSepRe.FindString(q[end:])
		if sep == "" {
			return refs
		}
		pos = end + len(sep)
	}
}

// readNumber reads the number a keyword of kind is followed by.
func readNumber(s, kind string) (string, bool) {
	var num string
	switch kind {
	case schema.KindAnnex, schema.KindAppendix, schema.KindSchedule:
		num = annexNumRe.FindString(s)
		if num != "" && !isDigit(num[0]) && !strings.Contains(num, ".") && len(num) > 1 {
			if romanValue(strings.ToUpper(num)) == 0 || toRoman(romanValue(strings.ToUpper(num))) != strings.ToUpper(num) {
				return "", false
			}
		}
		if len(num) == 1 && num[0] >= 'a' && num[0] <= 'z' && num != "i" && num != "v" && num != "x" {
			return "", false // "appendix a" is too easily an article
		}
	default:
		num = clauseNumRe.FindString(s)
		if num != "" && !isDigit(num[0]) && kind != schema.KindClause && kind != schema.KindSection {
			return "", false
		}
		if num == "" && (kind == schema.KindArticle || kind == schema.KindSection) {
			// "Article IV", "SECTION II": a roman numeral in capitals.
			if r := romanNumRe.FindString(s); articleRoman(r) > 0 {
				num = r
			}
		}
	}
	num = strings.TrimRight(num, " ")
	return num, num != ""
}

// numberBoundary reports whether a number ending at end is whole: not
// followed by a letter, a digit, or a dot and a digit.
func numberBoundary(q string, end int) bool {
	if end >= len(q) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(q[end:])
	if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
		return false
	}
	if (r == '.' || r == ',') && end+1 < len(q) && isDigit(q[end+1]) {
		return false
	}
	return true
}

// bareBoundary reports whether the bare number q[start:end] stands alone:
// not part of a longer number, a word, a version ("v1.2.3"), an address
// or an amount ("1,000.00").
func bareBoundary(q string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(q[:start])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._,-/:$€£¥#@", r) {
			return false
		}
	}
	if end < len(q) {
		r, _ := utf8.DecodeRuneInString(q[end:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-/%€$£:", r) {
			return false
		}
		if (r == '.' || r == ',') && end+1 < len(q) && isDigit(q[end+1]) {
			return false
		}
	}
	return true
}

// toRoman writes n (1–399) as a roman numeral in upper case.
func toRoman(n int) string {
	if n <= 0 || n >= 400 {
		return ""
	}
	var b strings.Builder
	for _, p := range []struct {
		v int
		s string
	}{{100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
		for n >= p.v {
			b.WriteString(p.s)
			n -= p.v
		}
	}
	return b.String()
}
