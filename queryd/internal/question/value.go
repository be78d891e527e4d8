package question

import (
	"regexp"
	"strings"
)

// Value is a kind of value a question asks for whose written form can be
// recognised in a passage: an amount of money, a percentage, a frequency
// in hertz, a data rate, or how much faster or smaller one thing is than
// another. A question asking for one is not answered by passages that
// state none, however close their topic (issue 26: "What percentage of
// each paycheck is withheld for FERS?" over a page that only says "a
// percentage of each paycheck is withheld").
type Value int

// The values recognised; ValueNone for a question that asks for none of
// them, or for something whose form cannot be told from text (a date, a
// name).
const (
	ValueNone Value = iota
	ValueMoney
	ValuePercent
	ValueFrequency
	ValueRate
	ValueRatio
	ValueNumbered
	ValueCount
)

// String says what the value is, for notes.
func (v Value) String() string {
	switch v {
	case ValueMoney:
		return "an amount of money"
	case ValuePercent:
		return "a percentage"
	case ValueFrequency:
		return "a frequency (in hertz)"
	case ValueRate:
		return "a data rate (such as bit/s)"
	case ValueRatio:
		return "how much faster, slower, larger or smaller (a percentage or a factor)"
	}
	return "nothing in particular"
}

// The questions' forms that ask for each value, in lower case. They are
// narrow on purpose: a form that also asks for something else ("how
// often", "what frequency of reviews") is left out, since a wrong guess
// turns an answered question not_found.
var wants = []struct {
	v  Value
	re *regexp.Regexp
}{
	{ValueRatio, regexp.MustCompile(`\b(?:how much|by how much|how many times) (?:faster|slower|smaller|larger|bigger|quicker|cheaper|shorter|longer|lower|higher|less|more)\b`)},
	{ValuePercent, regexp.MustCompile(`\b(?:what|which|by what) (?:percentage|percent|proportion|share)\b|\bhow many percent\b`)},
	{ValueMoney, regexp.MustCompile(`\bhow much (?:money|does|do|did|will|would)\b[^?]*\b(?:cost|costs|charge|charged|pay|paid)\b|\bdollar amount\b|\bin (?:us )?(?:dollars|euros)\b|\bhow many (?:dollars|euros)\b|\bhow much money\b|\bwhat (?:does|do|did|would|will) [^?]*\bcost\b|\bwhat (?:is|are|was|were) the (?:[a-z-]+ ){0,3}(?:cost|costs|price|prices|fee|fees|salary|salaries|wage|wages|premium|premiums)\b`)},
	{ValueFrequency, regexp.MustCompile(`\b(?:carrier|clock|sampling|sample|signal|signalling|signaling|radio|tone|centre|center|operating|transmit|transmission) frequenc(?:y|ies)\b`)},
	{ValueRate, regexp.MustCompile(`\b(?:transmission|data|bit|signalling|signaling|line|baud|modem|link|network|connection|download|upload|transfer) (?:speed|speeds|rate|rates)\b`)},
}

// numberedRE is a question for the number of a thing that is known by
// one ("What CMVP certificate number …", "Which port …"); its groups are
// the word before the thing, when there is one, and the thing.
var numberedRE = regexp.MustCompile(`(?i)\b(?:what|which)(?: [a-z0-9-]+)??(?: ([a-z0-9-]+))? (certificate|serial|registration|licen[cs]e|phone|telephone|fax|account|case|docket|ticket|form|invoice|order|tracking|patent|port) number\b|\b(?:what|which) (?:tcp |udp )?(port)\b`)

// countRE is a question for a limit on how many of a thing there may be
// ("the maximum number of fields"); its group is the thing. A plain "how
// many" is left out: its answer often names the thing in other words
// ("How many members …?" over "five people"), which the check, reading
// the thing's own word, would miss.
var countRE = regexp.MustCompile(`\b(?:maximum|minimum|max|min|largest|smallest) number of ([a-z][a-z-]+)`)

// countWords are the written forms of a count next to its thing: a
// number, a number word, or a word that says how many without one.
const countWords = `(?:\d[\d.,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|single|both|dozen|no|none|zero|unlimited|any number)`

// Want is what a question asks for: a kind of value, and for
// ValueNumbered the thing whose number it is.
type Want struct {
	Value Value
	Noun  string
	// Issuer, for ValueNumbered, is the acronym the question writes
	// before the thing ("cmvp" of "CMVP certificate number"): the number
	// must be stated beside it, since another body's number ("CAVP
	// certificate A6650") is not the one asked for.
	Issuer string
	// stated, for ValueNumbered and ValueCount, is the form that states
	// the thing's number or count, built once by Wants.
	stated *regexp.Regexp
}

// String says what is asked for, for notes.
func (w Want) String() string {
	switch w.Value {
	case ValueNumbered:
		return "a " + w.Noun + " number"
	case ValueCount:
		return "how many " + w.Noun + " there may be"
	}
	return w.Value.String()
}

// Wants is what text asks for; its Value is ValueNone when it asks for
// none of the values recognised.
func Wants(text string) Want {
	t := strings.ToLower(text)
	for _, w := range wants {
		if w.re.MatchString(t) {
			return Want{Value: w.v}
		}
	}
	if m := numberedRE.FindStringSubmatch(text); m != nil {
		w := Want{Value: ValueNumbered, Noun: strings.ToLower(m[2] + m[3])}
		if acronym(m[1]) {
			w.Issuer = strings.ToLower(m[1])
		}
		w.stated = numberStatedRE(w.Issuer, w.Noun)
		return w
	}
	if m := countRE.FindStringSubmatch(t); m != nil {
		return Want{Value: ValueCount, Noun: m[1], stated: countStatedRE(m[1])}
	}
	return Want{}
}

// StatedIn reports whether text states what w asks for; true when it
// asks for nothing recognised. A number is stated after its thing's name,
// "number", "no." or "#" between ("port 143", "certificate #4816",
// "certificate A6650").
func (w Want) StatedIn(text string) bool {
	switch w.Value {
	case ValueNumbered:
		return w.stated.MatchString(strings.ToLower(text))
	case ValueCount:
		return w.stated.MatchString(strings.ReplaceAll(strings.ToLower(text), "_", " "))
	}
	return States(w.Value, text)
}

// numberStatedRE is the form that states the number of thing, beside issuer
// when it is not empty.
func numberStatedRE(issuer, thing string) *regexp.Regexp {
	if issuer != "" {
		issuer = `\b` + regexp.QuoteMeta(issuer) + `\b[^.\n]{0,40}?`
	}
	return regexp.MustCompile(issuer + `\b` + regexp.QuoteMeta(thing) + `s?\W{1,3}(?:(?:number|no\.?|nr\.?)[^0-9\n]{1,12}|#\s?)?[a-z]{0,3}-?\d`)
}

// The written forms of each value. A table cell reads "base_fee_eur:
// 4.20", so an underscore counts as a space.
var states = map[Value]*regexp.Regexp{
	ValueMoney: regexp.MustCompile(`[$€£¥]\s?\d|\b\d[\d,.]*\s?(?:dollars?|usd|eur|euros?|gbp|cents?|chf|jpy)\b|\b(?:usd|eur|gbp|chf|jpy|us\$)\s?\d|` +
		`\b(?:fee|fees|price|prices|cost|costs|charge|charges|eur|usd|gbp|dollars?|euros?|premium|premiums|salary|salaries)\b[^0-9\n]{0,24}\d|` +
		`\b(?:free of charge|no cost|no charge|without charge|at no cost|for free|(?:is|are|be) free)\b`),
	ValuePercent:   regexp.MustCompile(`\d\s?%|\b\d[\d.,]*\s?(?:percent|per cent|pct)\b|\b(?:one|two|three)?-?(?:half|halves|thirds?|quarters?|fifths?|tenths?)\b`),
	ValueFrequency: regexp.MustCompile(`\d\s?(?:hz|khz|mhz|ghz|hertz|kilohertz|megahertz|gigahertz)\b`),
	ValueRate:      regexp.MustCompile(`\d\s?(?:bit/s|kbit/s|mbit/s|gbit/s|bps|kbps|mbps|gbps|baud|b/s|kb/s|mb/s|gb/s)|\d\s?(?:bits?|kilobits?|megabits?|gigabits?|bytes?|kilobytes?|megabytes?) (?:per|a|each) second`),
	ValueRatio:     regexp.MustCompile(`\d\s?%|\b\d[\d.,]*\s?(?:percent|per cent|x|×|times)\b|\b(?:twice|double|doubles|doubled|half|halved|halves|triple|tripled|[a-z]+fold)\b`),
}

// States reports whether text states a value of kind v; true for
// ValueNone.
func States(v Value, text string) bool {
	re, ok := states[v]
	if !ok {
		return true
	}
	return re.MatchString(strings.ReplaceAll(strings.ToLower(text), "_", " "))
}

// acronym reports whether word is two or more capitals, digits allowed
// ("CMVP", "FCC", "W2").
func acronym(word string) bool {
	letters := 0
	for _, r := range word {
		switch {
		case r >= 'A' && r <= 'Z':
			letters++
		case r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return letters >= 2
}

// countStatedRE is the form that states a count of thing: a count within 30
// characters of it, in one sentence ("15 days", "days: 15", "at most five
// fields"); the thing matches without a plural s.
func countStatedRE(thing string) *regexp.Regexp {
	n := strings.TrimSuffix(thing, "s")
	if len(n) < 3 {
		n = thing
	}
	t := `\b` + regexp.QuoteMeta(n)
	return regexp.MustCompile(`\b` + countWords + `\b[^.\n]{0,30}` + t + `|` + t + `[^.\n]{0,30}\b` + countWords + `\b`)
}
