package verifyeval

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// rewrite is a window of a passage with one fact written in another form.
type rewrite struct {
	text string
	note string
}

var (
	wordNumAlt = `(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety)`
	units      = `(days|months|years|weeks|hours|business days|calendar days|times|copies)`
	percentRe  = regexp.MustCompile(`(?i)(?:^|[^0-9.,])(([0-9]{1,3})(?:\.[0-9]+)?)(\s?%|\s(?:percent|per cent)\b)`)
	wordParen  = regexp.MustCompile(`(?i)\b` + wordNumAlt + `\s*\(([0-9]{1,3})\)`)
	wordUnit   = regexp.MustCompile(`(?i)\b` + wordNumAlt + `\s+` + units + `\b`)
	digitUnit  = regexp.MustCompile(`(?:^|[^0-9.,()$€£])([0-9]{1,2})\s+` + units + `\b`)
	mdyDate    = regexp.MustCompile(`\b(January|February|March|April|May|June|July|August|September|October|November|December)\s+([0-9]{1,2}),\s+([0-9]{4})\b`)
	dmyDate    = regexp.MustCompile(`\b([0-9]{1,2})\s+(January|February|March|April|May|June|July|August|September|October|November|December)\s+([0-9]{4})\b`)
	isoDate    = regexp.MustCompile(`\b([0-9]{4})-([0-9]{2})-([0-9]{2})\b`)
	dollarRe   = regexp.MustCompile(`\$\s?([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(\.[0-9]{2})?\b`)
	monthNames = []string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

func monthNum(name string) int {
	for i, m := range monthNames {
		if m == name {
			return i
		}
	}
	return 0
}

// otherForms returns, for each kind of fact the passage has in a form that
// can be written otherwise, a window of the passage with its first such
// fact rewritten: 30 days ↔ thirty days, thirty (30) days → 30 days,
// 10 % ↔ ten percent, dates between ISO and written forms, $1,000.00 →
// USD 1.000,00. The value never changes; only its writing does.
func otherForms(p string) []rewrite {
	var out []rewrite
	try := func(m []int, from, to, note string) {
		w := windowAround(p, token{text: from, start: m[0], end: m[1]})
		if w == "" || to == from {
			return
		}
		out = append(out, rewrite{text: strings.Replace(w, from, to, 1), note: note + ": " + from + " → " + to})
	}
	if m := percentRe.FindStringSubmatchIndex(p); m != nil {
		num, mark := p[m[2]:m[3]], p[m[6]:m[7]]
		from := p[m[2]:m[7]]
		to := num + " percent"
		if strings.Contains(strings.ToLower(mark), "per") {
			to = num + " %"
		}
		if v, err := strconv.Atoi(num); err == nil {
			if w, ok := numberWord(v); ok {
				to = w + " percent"
			}
		}
		try([]int{m[2], m[7]}, from, to, "percentage")
	}
	if m := wordParen.FindStringSubmatchIndex(p); m != nil {
		word, num := strings.ToLower(p[m[2]:m[3]]), p[m[4]:m[5]]
		if v, _ := strconv.Atoi(num); numberWords[v] == word {
			try(m[:2], p[m[0]:m[1]], num, "number word and digits to digits")
		}
	}
	if m := wordUnit.FindStringSubmatchIndex(p); m != nil && !strings.HasPrefix(strings.TrimLeft(p[m[1]:], " "), "(") {
		word := strings.ToLower(p[m[2]:m[3]])
		for v, w := range numberWords {
			if w == word {
				try(m[2:4], p[m[2]:m[3]], strconv.Itoa(v), "number word to digits")
			}
		}
	}
	if m := digitUnit.FindStringSubmatchIndex(p); m != nil {
		v, _ := strconv.Atoi(p[m[2]:m[3]])
		if w, ok := numberWord(v); ok {
			try(m[2:4], p[m[2]:m[3]], w, "digits to number word")
		}
	}
	if m := mdyDate.FindStringSubmatchIndex(p); m != nil {
		mo, d, y := monthNum(p[m[2]:m[3]]), atoi(p[m[4]:m[5]]), p[m[6]:m[7]]
		if d >= 1 && d <= 31 {
			try(m[:2], p[m[0]:m[1]], fmt.Sprintf("%s-%02d-%02d", y, mo, d), "written date to ISO")
		}
	}
	if m := dmyDate.FindStringSubmatchIndex(p); m != nil {
		d, mo, y := atoi(p[m[2]:m[3]]), monthNum(p[m[4]:m[5]]), p[m[6]:m[7]]
		if d >= 1 && d <= 31 {
			try(m[:2], p[m[0]:m[1]], fmt.Sprintf("%s-%02d-%02d", y, mo, d), "written date to ISO")
		}
	}
	if m := isoDate.FindStringSubmatchIndex(p); m != nil {
		y, mo, d := p[m[2]:m[3]], atoi(p[m[4]:m[5]]), atoi(p[m[6]:m[7]])
		if mo >= 1 && mo <= 12 && d >= 1 && d <= 31 {
			try(m[:2], p[m[0]:m[1]], fmt.Sprintf("%d %s %s", d, monthNames[mo], y), "ISO date to written")
		}
	}
	if m := dollarRe.FindStringSubmatchIndex(p); m != nil {
		whole := strings.ReplaceAll(p[m[2]:m[3]], ",", "")
		cents := ",00"
		if m[4] >= 0 {
			cents = "," + p[m[4]+1:m[5]]
		}
		try(m[:2], p[m[0]:m[1]], "USD "+groupDots(whole)+cents, "amount in the other decimal convention")
	}
	return out
}

// groupDots writes digits with dots between thousands: 1000000 → 1.000.000.
func groupDots(digits string) string {
	var b strings.Builder
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}
