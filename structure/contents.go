package structure

import (
	"regexp"
	"strings"
)

// pageRefRe matches the end of a table-of-contents entry: dot leaders
// and a page number ("Introduction ........ 3"), or a page number alone
// after the title ("Introduction 3", "Scope iv").
var (
	leaderRe  = regexp.MustCompile(`(?:\.{2,}|(?:\. ){2,}\.?|…+|_{3,})[ \t]*(?:[0-9]{1,4}|[ivxlc]{1,6})$`)
	pageEndRe = regexp.MustCompile(`[^ \t0-9.][ \t]+(?:[0-9]{1,4}|[ivxlc]{1,6})$`)
)

// markContents marks the lines of a table of contents, so that its entries
// never become clauses: a clause taken from the contents would both be false
// and, its number being used, block the real heading of that number and
// every number the sequence then refuses after it. An entry is a numbered
// line whose title ends in a page number; a line with dot leaders is an
// entry on its own, a bare page number needs a run of three entries
// (blank lines allowed between them) with page numbers that do not go down.
func (p *parser) markContents() {
	var run []contentsEntry
	flush := func() {
		n := 0
		for k, e := range run {
			if k > 0 && e.page >= 0 && run[k-1].page >= 0 && e.page < run[k-1].page {
				n = 0 // pages go down: not one contents
				break
			}
			n++
		}
		for _, e := range run {
			if e.leader || n >= 3 {
				p.code[e.line] = true
			}
		}
		run = run[:0]
	}
	blanks := 0
	for i, l := range p.lines {
		if l.blank {
			blanks++
			if blanks > 1 {
				flush()
			}
			continue
		}
		blanks = 0
		e, ok := p.contentsEntry(i)
		if !ok {
			flush()
			continue
		}
		run = append(run, e)
	}
	flush()
}

// contentsEntry is a table-of-contents line: its index, its page number
// (-1 for a roman one) and whether it has dot leaders.
type contentsEntry struct {
	line, page int
	leader     bool
}

// contentsEntry reads line i as a table-of-contents entry.
func (p *parser) contentsEntry(i int) (contentsEntry, bool) {
	var e contentsEntry
	if p.code[i] {
		return e, false
	}
	s := strings.TrimLeft(p.lines[i].s, "*_ ")
	s = strings.TrimRight(s, "*_ ")
	ld, ok := parseLead(s)
	if !ok || ld.rest == "" {
		return e, false
	}
	e.line = i
	switch {
	case leaderRe.MatchString(ld.rest):
		e.leader = true
	case pageEndRe.MatchString(ld.rest):
	default:
		return e, false
	}
	f := strings.Fields(ld.rest)
	e.page = -1
	if v, ok := atoiSmall(strings.TrimLeft(f[len(f)-1], ".…_")); ok {
		e.page = v
	}
	return e, true
}

// atoiSmall reads a page number of up to four digits.
func atoiSmall(s string) (int, bool) {
	if s == "" || len(s) > 4 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}
