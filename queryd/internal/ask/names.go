// Package ask holds strata_ask's own rules, apart from retrieval: the names
// a question asks about and whether the passages hold them, the token
// estimate and how passages and named clauses share ANSWER_TOKEN_BUDGET.
// It is pure: no database, no model, no transport.
package ask

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratakb/stratakb/queryd/internal/scrub"
	"github.com/stratakb/stratakb/structure"
)

// MaxNames is how many names a question is checked for; later ones are
// ignored.
const MaxNames = 10

// Name is one name a question asks about.
type Name struct {
	// Text is the name as the question writes it ("PEP 8", "AC04").
	Text string
	// Start and End are its byte offsets in the question.
	Start, End int
	// key is Text folded for matching (see fold).
	key string
}

var (
	// asyncio.TaskPool, os.path.join, pacs.008, config.yaml: parts joined
	// by dots with no space; at least one part holds a letter.
	dottedRe = regexp.MustCompile(`[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)+`)
	// __init__, __dunder__ names.
	dunderRe = regexp.MustCompile(`__[A-Za-z0-9][A-Za-z0-9_]*__`)
	// max_batch_size, EMBEDDING_TIMEOUT.
	snakeRe = regexp.MustCompile(`[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+`)
	// TaskPool, getElementById, iPhone: a lower-case letter followed by a
	// capital inside one word.
	camelRe = regexp.MustCompile(`[A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*`)
	// config["timeout"], settings['db'], env[KEY].
	bracketRe = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.]*\[\s*(?:"[^"\]]{1,64}"|'[^'\]]{1,64}'|[A-Za-z0-9_]{1,64})\s*\]`)
	// AC04, AT-44, W123, T4: letters then digits, with an optional hyphen,
	// and an optional trailing letter.
	codeRe = regexp.MustCompile(`[A-Za-z]{1,6}-?[0-9]{1,6}[A-Za-z]?`)
	// PYTHONHASHSEED, HEALTHCHECK: eight or more capitals.
	capsRe = regexp.MustCompile(`[A-Z][A-Z0-9]{7,}`)
	// PEP 8, RFC 2119, ISO 20022: a series in capitals, a space, a number.
	numberedRe = regexp.MustCompile(`([A-Za-z]{2,6}) ([0-9]{1,6})`)
	// A word, a space, then one capital and one or two digits: "zone Z9".
	shortCodeRe = regexp.MustCompile(`([A-Za-z]+) ([A-Z][0-9]{1,2})\b`)
	// A word, a space, then two to eight capitals or digits with a capital
	// first: "code XOF", "status RJCT", "currency NOK".
	capsCodeRe = regexp.MustCompile(`([A-Za-z]+) ([A-Z][A-Z0-9]{1,7})\b`)
	// v1.2, 3.11.4: versions, not names.
	versionRe = regexp.MustCompile(`^[vV]?[0-9]+(?:\.[0-9]+)+$`)
)

// identifierWords introduce a short code that names one thing of a list
// ("zone Z3", "grade B2", "gate A4"); clause and section references are
// never among them.
var identifierWords = map[string]bool{
	"zone": true, "code": true, "class": true, "grade": true, "tier": true, "band": true,
	"category": true, "type": true, "model": true, "form": true, "status": true, "plan": true,
	"area": true, "region": true, "item": true, "unit": true, "gate": true, "route": true,
	"codes": true, "currency": true, "country": true, "language": true,
}

// seriesWords are document series people write in lower case too ("pep 8",
// "rfc 2119"); any other series counts only when written in capitals.
var seriesWords = map[string]bool{
	"pep": true, "rfc": true, "iso": true, "iec": true, "ieee": true,
	"din": true, "en": true, "bs": true, "cve": true, "cwe": true,
}

// currencies are ISO 4217 codes: "EUR 1000" is an amount, not a numbered
// reference.
var currencies = map[string]bool{
	"EUR": true, "USD": true, "GBP": true, "CHF": true, "JPY": true, "CNY": true, "SEK": true, "NOK": true,
	"DKK": true, "PLN": true, "CZK": true, "HUF": true, "RON": true, "BGN": true, "ISK": true, "TRY": true,
	"CAD": true, "AUD": true, "NZD": true, "SGD": true, "HKD": true, "INR": true, "KRW": true, "BRL": true,
	"MXN": true, "ZAR": true, "RUB": true, "AED": true, "SAR": true, "ILS": true, "THB": true, "IDR": true,
	"MYR": true, "PHP": true, "TWD": true, "ARS": true, "CLP": true, "COP": true, "UAH": true, "XAU": true,
}

// protocols are acronyms whose number is a status code or a version
// ("HTTP 404", "SMTP 550", "HTTP 2"), not a document of a series.
var protocols = map[string]bool{
	"http": true, "https": true, "smtp": true, "ftp": true, "sip": true, "imap": true, "pop": true,
	"rtsp": true, "ldap": true, "tls": true, "ssl": true, "ssh": true, "dns": true, "tcp": true, "udp": true,
}

var (
	// A number's continuation after numberedRe's digits: "EUR 7.2",
	// "TLS 1.3", "EUR 1.000".
	moreDigitsRe = regexp.MustCompile(`^[.,'][0-9]`)
	// What makes the number before it an amount or a share: "1000 EUR",
	// "19%", "5 percent", "7 million".
	amountAfterRe = regexp.MustCompile(`^\s?(?:[%€$£¥]|(?i:percent|per cent|million|thousand|billion|bn)\b|([A-Z]{3})\b)`)
	// A group shaped like a code of its own (AC02), which no account's
	// group after the first is.
	codeShapeRe = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}$`)
	// A spaced IBAN, whole or begun: country, check digits, then groups of
	// four ("DE89 3704 0044 0532 0130 00", "DE89 3704"); begunIBAN says
	// whether the groups are an account's.
	spacedIBANRe = regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}((?: [A-Z0-9]{4})+)(?: [A-Z0-9]{1,3})?\b`)
)

// numberedReference reports whether numberedRe's match m of q is a
// numbered reference in the spec's sense (PEP 8, RFC 2119, ISO 20022): a
// known series in any case, or another series in capitals, but never a
// currency amount (EUR 1000, USD 500, the EUR 7 of EUR 7.2 million), a
// year (SEPA 2025) or a protocol's status code or version (HTTP 404).
func numberedReference(q string, m []int, shouting bool) bool {
	series, num, after := q[m[2]:m[3]], q[m[4]:m[5]], q[m[5]:]
	if moreDigitsRe.MatchString(after) || currencies[strings.ToUpper(series)] {
		return false
	}
	if a := amountAfterRe.FindStringSubmatchIndex(after); a != nil && (a[2] < 0 || currencies[after[a[2]:a[3]]]) {
		return false
	}
	if seriesWords[strings.ToLower(series)] {
		return true
	}
	if !isUpper(series) || shouting || protocols[strings.ToLower(series)] {
		return false
	}
	if len(num) == 4 && num >= "1900" && num <= "2099" { // a year
		return false
	}
	return true
}

// accountSpans are the byte spans of q that hold an IBAN, a BIC or an
// account number, whole or begun (a spaced IBAN's first groups).
func accountSpans(q string) [][2]int {
	var out [][2]int
	for _, c := range scrub.Find(q) {
		out = append(out, [2]int{c.Start, c.End})
	}
	for _, m := range spacedIBANRe.FindAllStringSubmatchIndex(q, -1) {
		if begunIBAN(strings.Fields(q[m[2]:m[3]])) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

// begunIBAN reports whether the groups of four after an IBAN's country
// and check digits are an account's: one of them all digits, and none
// shaped like a code of its own, as in a list of codes (AC01 AC02 AC03).
func begunIBAN(groups []string) bool {
	digits := false
	for _, g := range groups {
		if codeShapeRe.MatchString(g) {
			return false
		}
		if strings.Trim(g, "0123456789") == "" {
			digits = true
		}
	}
	return digits
}

// Names returns the names question q asks about, in the order written, at
// most MaxNames, each once. Ordinary words, clause references (clause 2.2,
// a bare 7.2.1), versions, amounts and account numbers are never names;
// capitals of fewer than 8 letters are acronyms, and in a question written
// in capitals no word counts for its capitals alone.
func Names(q string) []Name { return namesWith(q, structure.ParseReferences(q)) }

// namesWith is Names of q, whose clause references are refs.
func namesWith(q string, refs []structure.Reference) []Name {
	shouting := writtenInCapitals(q)
	var out []Name
	seen := map[string]bool{}
	taken := func(start, end int) bool {
		for _, n := range out {
			if start < n.End && end > n.Start {
				return true
			}
		}
		return false
	}
	isRef := func(start, end int) bool {
		for _, r := range refs {
			if start < r.End && end > r.Start && !r.Weak {
				return true
			}
		}
		return false
	}
	// IBANs, BICs and account numbers, whole or in part, are never names:
	// not DE89, the first group of a spaced IBAN.
	accounts := accountSpans(q)
	isAccount := func(start, end int) bool {
		for _, a := range accounts {
			if start < a[1] && end > a[0] {
				return true
			}
		}
		return false
	}
	add := func(start, end int) {
		text := strings.TrimRight(q[start:end], ".")
		end = start + len(text)
		if text == "" || taken(start, end) || isRef(start, end) || !bounded(q, start, end) || isAccount(start, end) {
			return
		}
		if scrub.Text(text) != text { // an IBAN, a BIC or an account number
			return
		}
		k := fold(text)
		if k == "" || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, Name{Text: text, Start: start, End: end, key: k})
	}
	// Longer shapes first, so config["timeout"] is one name, not two.
	for _, m := range bracketRe.FindAllStringIndex(q, -1) {
		add(m[0], m[1])
	}
	for _, m := range dunderRe.FindAllStringIndex(q, -1) {
		add(m[0], m[1])
	}
	for _, m := range dottedRe.FindAllStringIndex(q, -1) {
		s := strings.TrimRight(q[m[0]:m[1]], ".")
		if !strings.Contains(s, ".") || versionRe.MatchString(s) || !hasLetter(s) || abbreviation(s) {
			continue
		}
		add(m[0], m[1])
	}
	for _, m := range snakeRe.FindAllStringIndex(q, -1) {
		if hasLetter(q[m[0]:m[1]]) {
			add(m[0], m[1])
		}
	}
	for _, m := range camelRe.FindAllStringIndex(q, -1) {
		add(m[0], m[1])
	}
	for _, m := range codeRe.FindAllStringIndex(q, -1) {
		if code(q[m[0]:m[1]]) {
			add(m[0], m[1])
		}
	}
	// "tariff zone Z9", "grade B2": a short code is a name where the word
	// before it says an identifier follows; alone, "Q3" is a quarter.
	for _, m := range shortCodeRe.FindAllStringSubmatchIndex(q, -1) {
		if identifierWords[strings.ToLower(q[m[2]:m[3]])] {
			add(m[4], m[5])
		}
	}
	// "currency code XQZ", "status RJCT": a code in capitals where the
	// word before it says a code follows (not in a question written in
	// capitals, where every word is).
	if !shouting {
		for _, m := range capsCodeRe.FindAllStringSubmatchIndex(q, -1) {
			if identifierWords[strings.ToLower(q[m[2]:m[3]])] {
				add(m[4], m[5])
			}
		}
	}
	for _, m := range numberedRe.FindAllStringSubmatchIndex(q, -1) {
		if numberedReference(q, m, shouting) {
			add(m[0], m[1])
		}
	}
	if !shouting {
		for _, m := range capsRe.FindAllStringIndex(q, -1) {
			if letters(q[m[0]:m[1]]) >= 8 {
				add(m[0], m[1])
			}
		}
	}
	sortByStart(out)
	if len(out) > MaxNames {
		out = out[:MaxNames]
	}
	return out
}

// code reports whether an AC04-shaped token is a code: its letters are all
// capitals (AC04, AT-44) and it has at least three letters and digits, so
// "mp3" or "top5" in lower case stays an ordinary word and "Q3" a quarter.
func code(s string) bool {
	var lower, upper int
	for _, r := range s {
		switch {
		case unicode.IsLower(r):
			lower++
		case unicode.IsUpper(r):
			upper++
		}
	}
	return upper > 0 && lower == 0 && len(strings.ReplaceAll(s, "-", "")) >= 3
}

// abbreviation reports e.g., i.e., U.S.: one-letter parts.
func abbreviation(s string) bool {
	for _, p := range strings.Split(s, ".") {
		if utf8.RuneCountInString(p) > 1 {
			return false
		}
	}
	return true
}

// bounded reports whether q[start:end] is a whole token: not preceded or
// followed by a letter, digit or underscore.
func bounded(q string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(q[:start])
		if wordRune(r) {
			return false
		}
	}
	if end < len(q) {
		r, _ := utf8.DecodeRuneInString(q[end:])
		if wordRune(r) {
			return false
		}
	}
	return true
}

func wordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

func isUpper(s string) bool {
	return hasLetter(s) && strings.IndexFunc(s, unicode.IsLower) < 0
}

// writtenInCapitals reports whether a question is written in capitals: it
// has at least three words of letters and no word with a lower-case letter.
func writtenInCapitals(q string) bool {
	words := 0
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if strings.IndexFunc(w, unicode.IsLower) >= 0 {
			return false
		}
		words++
	}
	return words >= 3
}

func sortByStart(ns []Name) {
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].Start < ns[j-1].Start; j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
}
