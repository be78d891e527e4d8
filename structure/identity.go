package structure

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// A document's identity is what a question may call it by: its own number
// in a series ("PEP 572", "RFC 5321", "T.81") and its title. The numbers
// are kept as keys, "<series> <number>" in lower case with the number's
// leading zeros dropped ("pep 572", "rfc 5321", "t 81", "go 1.13"), so that
// a question's "PEP 572", "pep-0572" and "PEP572" meet a file pep-0572.rst
// or a header "PEP: 572". A document that only mentions another's number
// never holds that number as a key: the keys come from the document's name,
// its header fields and its own front page, not from its text.

var (
	// seriesNumberRe is a series of one to six letters, an optional
	// separator, and a number that may have dotted parts ("pep-0572",
	// "RFC 5321", "T.81", "go1.13"). The letters must start a word; the
	// caller checks that (Go's regexp has no look-behind).
	seriesNumberRe = regexp.MustCompile(`(?i)([a-z]{1,6})[-_ .]?([0-9]{1,6}(?:\.[0-9]{1,4})*)`)
	// rfcHeadRe is an RFC's own number on its front page.
	rfcHeadRe = regexp.MustCompile(`(?m)^Request for Comments:\s*([0-9]{1,5})\b`)
	// idFieldRe is a header field that holds the document's own number in
	// a series: "PEP: 572", "RFC: 5321", "BCP: 14".
	idFieldRe = regexp.MustCompile(`^(?i)(pep|rfc|bcp|std|fyi|adr|kep|jep|rep)$`)
)

// notSeries are words before a number that name a part of a document, a
// quantity or a version, never a document.
var notSeries = map[string]bool{
	"section": true, "sections": true, "sec": true, "clause": true, "clauses": true, "cl": true,
	"article": true, "articles": true, "art": true, "annex": true, "annexes": true, "appendix": true,
	"schedule": true, "chapter": true, "part": true, "para": true, "paras": true, "page": true,
	"pages": true, "p": true, "pp": true, "figure": true, "fig": true, "table": true, "tables": true,
	"step": true, "item": true, "items": true, "line": true, "lines": true, "version": true, "v": true,
	"no": true, "nr": true, "number": true, "rule": true, "level": true, "class": true, "type": true,
	"phase": true, "stage": true, "day": true, "days": true, "week": true, "weeks": true, "month": true,
	"months": true, "year": true, "years": true, "hour": true, "hours": true, "minute": true,
	"minutes": true, "second": true, "seconds": true, "port": true, "ports": true, "and": true,
	"or": true, "of": true, "to": true, "in": true, "the": true, "a": true, "an": true, "at": true,
	"for": true, "by": true, "on": true, "is": true, "are": true, "was": true, "from": true,
	"than": true, "top": true, "over": true, "under": true, "about": true, "with": true, "x": true,
	"s": true, "th": true, "nd": true, "rd": true, "st": true, "k": true, "kb": true, "mb": true,
	"gb": true, "ms": true, "px": true, "pt": true, "utf": true, "ipv": true, "sha": true, "md": true,
	"base": true, "int": true, "uint": true, "float": true, "q": true, "h": true,
}

// NumberKey is the key of a series and number: "pep 572".
func NumberKey(series, number string) string {
	first, rest, _ := strings.Cut(number, ".")
	first = strings.TrimLeft(first, "0")
	if first == "" {
		first = "0"
	}
	if rest != "" {
		first += "." + rest
	}
	return strings.ToLower(series) + " " + first
}

// NamedNumber is a document number a question writes: "PEP 572".
type NamedNumber struct {
	Key        string // "pep 572"
	Raw        string // as written
	Start, End int    // byte offsets in the question
}

// NamedNumbers returns the series-and-number names in text, in order, each
// key once: the candidates for documents a question names by number.
// Section words ("section 4.1") and quantities ("30 days") are not among
// them.
func NamedNumbers(text string) []NamedNumber {
	var out []NamedNumber
	seen := map[string]bool{}
	for _, m := range seriesNumberRe.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if start > 0 && wordByte(text[start-1]) || end < len(text) && wordByte(text[end]) {
			continue
		}
		raw := text[m[2]:m[3]]
		series := strings.ToLower(raw)
		if notSeries[series] || spaced(text[m[3]:m[4]]) && len(raw) > 4 && !upperByte(raw[0]) {
			// "period 30": a long lower-case word and a number after a
			// space is prose, not a document's name.
			continue
		}
		k := NumberKey(series, text[m[4]:m[5]])
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, NamedNumber{Key: k, Raw: text[start:end], Start: start, End: end})
	}
	return out
}

func spaced(sep string) bool { return sep == " " }

func upperByte(b byte) bool { return b >= 'A' && b <= 'Z' }

func wordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// DocumentKeys returns the identity keys of a document: the series numbers
// of its file name (pep-0572.rst, rfc5321.txt, T4.pdf), of its header
// fields that hold its own number ("PEP: 572") and of its front page's
// "Request for Comments:" line. head is the start of its stored text. A
// title's numbers are not keys: "IEEE 754 Floating Point Special Values"
// is PEP 754, not IEEE 754. The title itself is one key, TitleKey's
// ("t:ieee 754 floating point special values"): a question's word runs
// (TitleKeys) find it through the same index, and TitleNamed decides
// whether the question names the document by it. The keys are sorted and
// unique.
func DocumentKeys(file, title string, meta map[string]string, head string) []string {
	set := map[string]bool{}
	if t := TitleKey(title); t != "" {
		set[t] = true
	}
	stem := strings.TrimSuffix(path.Base(file), path.Ext(file))
	for _, n := range NamedNumbers(stem) {
		set[n.Key] = true
	}
	for k, v := range meta {
		v = strings.TrimSpace(v)
		if idFieldRe.MatchString(k) && v != "" && strings.Trim(v, "0123456789") == "" {
			set[NumberKey(k, v)] = true
		}
	}
	if len(head) > 4000 {
		head = head[:4000]
	}
	if m := rfcHeadRe.FindStringSubmatch(head); m != nil {
		set[NumberKey("rfc", m[1])] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxTitleWords is the longest title, in words, a question can name a
// document by (TitleKeys writes runs up to it).
const maxTitleWords = 16

// TitleKey is a title's identity key: "t:" and the title folded
// (FoldWords); "" for an empty title or one longer than maxTitleWords.
func TitleKey(title string) string {
	t := FoldWords(title)
	if t == "" || strings.Count(t, " ")+1 > maxTitleWords {
		return ""
	}
	return "t:" + t
}

// TitleKeys are the title keys a question may name a document by: every
// run of one to maxTitleWords of its folded words, as TitleKey writes
// them.
func TitleKeys(question string) []string {
	words := strings.Fields(FoldWords(question))
	var out []string
	seen := map[string]bool{}
	for i := range words {
		for j := i + 1; j <= len(words) && j-i <= maxTitleWords; j++ {
			k := "t:" + strings.Join(words[i:j], " ")
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// titleWords are the words that, before or after a one-word title, say
// that the question means the document ("the Telework page").
var titleWords = map[string]bool{
	"page": true, "pages": true, "policy": true, "guide": true, "post": true, "article": true,
	"document": true, "doc": true, "handbook": true, "rfc": true, "pep": true, "spec": true,
	"specification": true, "standard": true, "recommendation": true, "memo": true, "chapter": true,
	"blog": true, "entry": true, "notice": true, "procedure": true, "playbook": true,
}

// TitleNamed reports whether question names a document titled title: the
// title, folded, is a phrase of the folded question, bounded by word
// edges. A title of one word, or of fewer than eight letters, names the
// document only when the question quotes it or puts a word such as "page",
// "policy" or "post" right before or after it.
func TitleNamed(question, title string) bool {
	t := FoldWords(title)
	if t == "" {
		return false
	}
	q := " " + FoldWords(question) + " "
	at := strings.Index(q, " "+t+" ")
	if at < 0 {
		return false
	}
	if strings.Count(t, " ") >= 1 && len(t) >= 8 {
		return true
	}
	if quoted(question, title) {
		return true
	}
	before := strings.Fields(q[:at])
	after := strings.Fields(q[at+len(t)+1:])
	return len(before) > 0 && titleWords[before[len(before)-1]] || len(after) > 0 && titleWords[after[0]]
}

// FoldWords lower-cases s and keeps its runs of letters and digits, one
// space between them, as the store folds a title to find it in a question.
func FoldWords(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && !wordByte(byte(r)) || r >= 128 && !isLetterOrDigit(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// quoted reports whether question holds title between quotation marks.
func quoted(question, title string) bool {
	lq, lt := strings.ToLower(question), strings.ToLower(strings.TrimSpace(title))
	for _, p := range [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}, {"`", "`"}} {
		if strings.Contains(lq, p[0]+lt+p[1]) {
			return true
		}
	}
	return false
}
