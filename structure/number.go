package structure

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/stratakb/stratakb/schema"
)

// lead is a clause number found at the start of a line or heading text.
type lead struct {
	kind   string // one of the schema Kind constants
	number string // as it is stored: "7.2", "7(2)(b)", "II", "A.1"
	// parts are comparable values of the number's parts (7.2.1 → 7,2,1);
	// letters count from 1 (a → 1); -1 marks a part without an order
	// (a roman numeral in parentheses).
	parts []int
	// family groups numbers that follow one sequence: "" for the body's
	// clauses, "A" for Annex A's clauses "A.1", "A.2"; the kind for
	// Article, Section, §, Annex, Appendix and Schedule.
	family string
	numEnd int    // byte offset in the line just past the number
	rest   string // what follows the number and its separator
	// restOff is the byte offset of rest in the line (len(line) when rest
	// is empty).
	restOff  int
	trailDot bool // written "7." rather than "7"
	keyword  bool // Article, Section, §, Annex, Appendix or Schedule
}

var (
	// The keyword must be capitalised: "section 4 of" at the start of a
	// wrapped line is running text, not a heading.
	keywordRe = regexp.MustCompile(`^(Article|ARTICLE|Art\.|ART\.|Section|SECTION|Sect\.|Sec\.|Annex|ANNEX|Appendix|APPENDIX|Schedule|SCHEDULE)[ \t]+([0-9]{1,3}(?:\.[0-9]{1,3}){0,7}[a-z]?|[IVXLC]{1,7}|[A-Z])(?:[^\p{L}\p{N}_.]|\.(?:[^0-9]|$)|$)`)
	paraRe    = regexp.MustCompile(`^(§§?|¶)[ \t]*([0-9]{1,3}(?:\.[0-9]{1,3}){0,7}[a-z]?)(?:[^\p{L}\p{N}_.]|\.(?:[^0-9]|$)|$)`)
	numRe     = regexp.MustCompile(`^([0-9]{1,3}(?:\.[0-9]{1,3}){0,7})(\.?)((?:\([0-9a-z]{1,4}\)){0,4})(?:[ \t]|$)`)
	letterRe  = regexp.MustCompile(`^([A-Z])\.([0-9]{1,3}(?:\.[0-9]{1,3}){0,7})(\.?)(?:[ \t]|$)`)
)

// parseLead reads a clause number at the start of s (already trimmed on the
// left). It reports false when s does not start with one.
func parseLead(s string) (lead, bool) {
	var l lead
	// Most lines start with a word: rule them out before any regexp runs.
	if s == "" {
		return lead{}, false
	}
	switch c := s[0]; {
	case isDigit(c), c == 0xC2: // "§" and "¶" start with the byte 0xC2
	case c >= 'A' && c <= 'Z':
		if len(s) > 1 && s[1] == '.' {
			break
		}
		switch c {
		case 'A', 'S':
		default:
			return lead{}, false
		}
	default:
		return lead{}, false
	}
	if m := keywordRe.FindStringSubmatchIndex(s); m != nil {
		kw := s[m[2]:m[3]]
		l.number = s[m[4]:m[5]]
		l.numEnd = m[5]
		l.keyword = true
		switch strings.ToLower(strings.TrimSuffix(kw, ".")) {
		case "article", "art":
			l.kind = schema.KindArticle
		case "section", "sect", "sec":
			l.kind = schema.KindSection
		case "annex":
			l.kind = schema.KindAnnex
		case "appendix":
			l.kind = schema.KindAppendix
		default:
			l.kind = schema.KindSchedule
		}
		if (l.kind == schema.KindArticle || l.kind == schema.KindSection) && !isDigit(l.number[0]) &&
			articleRoman(l.number) == 0 {
			return lead{}, false
		}
	} else if m := paraRe.FindStringSubmatchIndex(s); m != nil {
		l.kind = schema.KindPara
		l.number = s[m[4]:m[5]]
		l.numEnd = m[5]
		l.keyword = true
	} else if m := letterRe.FindStringSubmatchIndex(s); m != nil {
		l.kind = schema.KindClause
		l.family = s[m[2]:m[3]]
		l.number = s[m[2]:m[5]]
		l.numEnd = m[5]
		l.trailDot = m[7] > m[6]
		if l.trailDot {
			l.numEnd = m[7]
		}
		l.parts = numParts(s[m[4]:m[5]])
	} else if m := numRe.FindStringSubmatchIndex(s); m != nil {
		l.kind = schema.KindClause
		dotted := s[m[2]:m[3]]
		paren := s[m[6]:m[7]]
		l.trailDot = m[5] > m[4]
		if l.trailDot && paren != "" {
			return lead{}, false // "7.(2)" is not a clause number
		}
		l.number = dotted + paren
		l.numEnd = m[7]
		l.parts = append(numParts(dotted), parenParts(paren)...)
		// Leading zeros ("1.05") belong to amounts and versions; a lone 0
		// may open a document ("0 Introduction") but not follow a dot.
		for i, seg := range strings.Split(dotted, ".") {
			if len(seg) > 1 && seg[0] == '0' || i > 0 && seg == "0" {
				return lead{}, false
			}
		}
		for _, v := range l.parts[len(strings.Split(dotted, ".")):] {
			if v == 0 {
				return lead{}, false // "7(0)"
			}
		}
	} else {
		return lead{}, false
	}
	if l.keyword {
		l.family = l.kind
		if v := articleRoman(l.number); v > 0 && (l.kind == schema.KindArticle || l.kind == schema.KindSection) {
			l.parts = []int{v} // "ARTICLE IV" follows "ARTICLE III"
		} else if l.kind == schema.KindArticle || l.kind == schema.KindSection || l.kind == schema.KindPara {
			l.parts = numParts(strings.TrimRight(l.number, "abcdefghijklmnopqrstuvwxyz"))
		}
	}
	// The separator: spaces, then at most one of "–", "—", "--", "-", ":", "."
	// followed by spaces.
	i := l.numEnd
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for _, sep := range []string{"–", "—", "--", "-", ":", "."} {
		if strings.HasPrefix(s[i:], sep) {
			j := i + len(sep)
			if j == len(s) || s[j] == ' ' || s[j] == '\t' {
				i = j
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
			}
			break
		}
	}
	l.restOff = i
	l.rest = dropUnderline(strings.TrimRight(s[i:], " \t"))
	return l, true
}

// maxArticleRoman is the largest roman numeral read as an Article or
// Section number: agreements number their articles I to a few dozen, and
// a larger "Section C" or "Article D" is more likely a letter.
const maxArticleRoman = 60

// articleRoman returns the value of s when it is a roman numeral in
// capitals written the usual way ("IV", not "IIII") and at most
// maxArticleRoman, or 0.
func articleRoman(s string) int {
	v := romanValue(s)
	if v == 0 || v > maxArticleRoman || toRoman(v) != s {
		return 0
	}
	return v
}

// dropUnderline removes an underline that text extraction ran onto its
// title's line ("Description of the Promotion         -------"): a run of
// dashes, equals signs or underscores after two or more spaces.
func dropUnderline(rest string) string {
	i := strings.LastIndex(rest, "  ")
	if i < 0 {
		return rest
	}
	tail := strings.TrimLeft(rest[i:], " ")
	if len(tail) < 3 || strings.Trim(tail, "-=_") != "" {
		return rest
	}
	return strings.TrimRight(rest[:i], " ")
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func numParts(dotted string) []int {
	var out []int
	for _, p := range strings.Split(dotted, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			n = -1
		}
		out = append(out, n)
	}
	return out
}

// parenParts reads "(2)(b)(iv)": digits count as numbers, a single letter by
// its place in the alphabet, anything else has no order (-1).
func parenParts(paren string) []int {
	var out []int
	for paren != "" {
		end := strings.IndexByte(paren, ')')
		if end < 0 {
			break
		}
		p := paren[1:end]
		paren = paren[end+1:]
		if n, err := strconv.Atoi(p); err == nil {
			out = append(out, n)
		} else if len(p) == 1 && p[0] >= 'a' && p[0] <= 'z' && p != "i" && p != "v" && p != "x" {
			out = append(out, int(p[0]-'a')+1)
		} else {
			out = append(out, -1)
		}
	}
	return out
}

// romanValue returns the value of a roman numeral in upper case, or 0.
func romanValue(s string) int {
	val := map[byte]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100}
	total, prev := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		v, ok := val[s[i]]
		if !ok {
			return 0
		}
		if v < prev {
			total -= v
		} else {
			total += v
			prev = v
		}
	}
	return total
}
