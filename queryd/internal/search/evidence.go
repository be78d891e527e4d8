package search

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Evidence is a reason, other than similarity, to trust that the first
// passages answer the question. Each is decided on the returned passages'
// text (not on a score), and each raises the confidence level (judge):
// an exact section to high; a phrase or a code in the first result to at
// least medium, and to high when the similarity also reaches the medium
// mark. The response lists the evidence that raised its level.
type Evidence string

const (
	// EvidenceExactSection: the question names a section ("clause 7.2")
	// and that section came back verbatim.
	EvidenceExactSection Evidence = "exact_section"
	// EvidencePhrase: the first result holds verbatim a distinctive run of
	// the question's words (phraseEvidence).
	EvidencePhrase Evidence = "phrase"
	// EvidenceCode: the first result holds, as a whole token, a code or
	// identifier the question names (codeEvidence).
	EvidenceCode Evidence = "code"
	// EvidenceNamedDocument: the first result is from a document the
	// question names ("PEP 380", "the Telework policy";
	// retrieve.NamedDocuments), by its own number or its title.
	EvidenceNamedDocument Evidence = "named_document"
)

// PhraseRun is the least number of the question's content words a run
// must hold for phrase evidence: stop words left out of both sides, each
// word the same up to a plural or -ed/-ing ending, in the question's
// order, skipping at most one word of either side between two of them
// ("unused leave days ... carried" against "unused days may be carried").
// Chosen on the answer-quality evaluation's train split (TestEvidenceRules,
// docs/retrieval.md "Evidence"): runs of 2 lifted a quarter of the
// unanswerable questions out of low; 3 is the shortest that kept the
// unanswerable-low floor.
const PhraseRun = 3

// CodeMinCaps is the least length of a code of capitals alone (RJCT's
// four letters are not enough: JPEG, JSON and HTTP are as often named by
// questions the passages do not answer). Chosen with PhraseRun.
const CodeMinCaps = 5

// maxEvidenceWords bounds the question words compared (a 2000-character
// query against a long passage stays cheap).
const maxEvidenceWords = 64

// phraseRule is how phrase evidence matches: run is the least number of
// content words a run holds; skipStops compares the content words alone
// (stop words dropped from both sides) rather than the words as written;
// stem compares words up to a plural or -ed/-ing ending.
type phraseRule struct {
	run             int
	skipStops, stem bool
	// gap lets a run skip one word of the question or of the passage
	// between two of its words ("unused leave days" against "unused
	// days").
	gap bool
	// cover is the least share of the question's content words the run
	// must hold (0: any run of run words).
	cover float64
}

// defaultPhraseRule is the rule strata_search uses.
var defaultPhraseRule = phraseRule{run: PhraseRun, skipStops: true, stem: true, gap: true}

// evidenceOf returns the phrase and code evidence the first result (its
// text and file) gives for query q, in that order.
func evidenceOf(q, first, file string) []Evidence {
	var out []Evidence
	if phraseEvidence(q, first, defaultPhraseRule) {
		out = append(out, EvidencePhrase)
	}
	if codeEvidenceRule(q, first, file, nil, defaultCodeRule) {
		out = append(out, EvidenceCode)
	}
	return out
}

// phraseEvidence reports whether text holds a distinctive run of q's
// words: a phrase q quotes (two words or more) as written, case and
// spacing folded; or a run of rule.run of q's content words (see
// phraseRule).
func phraseEvidence(q, text string, rule phraseRule) bool {
	tw := words(text)
	for _, p := range quoted(q) {
		if pw := words(p); len(pw) >= 2 && holdsRun(tw, pw) {
			return true
		}
	}
	qw := words(q)
	if len(qw) > maxEvidenceWords {
		qw = qw[:maxEvidenceWords]
	}
	n := longestRun(qw, tw, rule)
	return n >= rule.run && float64(n) >= rule.cover*float64(contentCount(qw))
}

// contentCount is how many of ws are not stop words.
func contentCount(ws []string) int {
	n := 0
	for _, w := range ws {
		if !stopWord(w) {
			n++
		}
	}
	return n
}

// longestRun is the most content words of a run of a that b holds, as
// rule compares them.
func longestRun(a, b []string, rule phraseRule) int {
	norm := func(ws []string) (out []string, content []bool) {
		for _, w := range ws {
			stop := stopWord(w)
			if rule.skipStops && stop {
				continue
			}
			if rule.stem {
				w = stemWord(w)
			}
			out = append(out, w)
			content = append(content, !stop)
		}
		return out, content
	}
	a, ac := norm(a)
	b, _ = norm(b)
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	// Longest common run by dynamic programming, counting content words.
	best := 0
	prevLen, prevCnt := make([]int, len(b)+1), make([]int, len(b)+1)
	curLen, curCnt := make([]int, len(b)+1), make([]int, len(b)+1)
	if rule.gap {
		return longestGappedRun(a, ac, b)
	}
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				curLen[j+1] = prevLen[j] + 1
				curCnt[j+1] = prevCnt[j]
				if ac[i] {
					curCnt[j+1]++
				}
				best = max(best, curCnt[j+1])
			} else {
				curLen[j+1], curCnt[j+1] = 0, 0
			}
		}
		prevLen, curLen = curLen, prevLen
		prevCnt, curCnt = curCnt, prevCnt
	}
	return best
}

// longestGappedRun is longestRun where a run may skip one word of a or of
// b (not of both) between two of its matched words.
func longestGappedRun(a []string, ac []bool, b []string) int {
	// cnt[i][j]: content words of the best run ending with a[i] = b[j].
	cnt := make([][]int, len(a))
	best := 0
	for i := range a {
		cnt[i] = make([]int, len(b))
		for j := range b {
			if a[i] != b[j] {
				continue
			}
			prev := 0
			for _, d := range [][2]int{{1, 1}, {2, 1}, {1, 2}} {
				if pi, pj := i-d[0], j-d[1]; pi >= 0 && pj >= 0 {
					prev = max(prev, cnt[pi][pj])
				}
			}
			c := prev
			if ac[i] {
				c++
			}
			cnt[i][j] = c
			best = max(best, c)
		}
	}
	return best
}

// holdsRun reports whether ws holds run as consecutive words.
func holdsRun(ws, run []string) bool {
	for i := 0; i+len(run) <= len(ws); i++ {
		match := true
		for j, w := range run {
			if ws[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// words are s's runs of letters and digits, lower-cased: punctuation,
// hyphens and line breaks only separate words.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

var quotedRe = regexp.MustCompile(`"([^"]{3,200})"|“([^”]{3,200})”|(?:^|\s)'([^']{3,200})'(?:$|[\s.,;:?!])`)

// quoted returns the phrases q puts in quotation marks.
func quoted(q string) []string {
	var out []string
	for _, m := range quotedRe.FindAllStringSubmatch(q, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// stemWord folds a plural and an -ed or -ing ending, crudely: enough for
// "days" and "day", "carried" and "carries", "renewed" and "renewing".
func stemWord(w string) string {
	if utf8.RuneCountInString(w) <= 4 {
		return strings.TrimSuffix(w, "s")
	}
	for _, suf := range []string{"ies", "ied", "ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" || suf == "ied" {
				w += "y"
			}
			return w
		}
	}
	return w
}

// stopWord reports the words a question's subject does not depend on.
func stopWord(w string) bool {
	return evidenceStops[w] || utf8.RuneCountInString(w) == 1 && !unicode.IsDigit([]rune(w)[0])
}

var evidenceStops = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again all also am an and any are as at be because been
		before being below between both but by can could did do does doing done down during each either else
		etc every few for from further get gets got had has have having he her here hers him his how i if in
		into is it its itself just may me might more most much must my no nor not now of off on once only or
		other our ours out over own per please same shall she should so some such than that the their theirs
		them then there these they this those through to too under until up upon us very via was we were
		what when where whether which while who whom whose why will with within without would yes yet you
		your yours many say says said tell mean means meant find give given need needs know s t`) {
		m[w] = true
	}
	return m
}()

var (
	// A token of a question: letters, digits and the joiners a code may
	// hold (T.81, ERR_42, 0x1F, AT-44, os.path.join).
	codeTokenRe = regexp.MustCompile(`[\p{L}\p{N}_]+(?:[._\-/][\p{L}\p{N}_]+)*`)
	hexRe       = regexp.MustCompile(`^0[xX][0-9A-Fa-f]+$`)
)

// codes returns the codes and identifiers q names, as written: a token
// with a capital letter and a digit (T.81, AD4, X.509), capitals of three
// letters or more (XOF, RJCT), a hexadecimal number (0x1F), or an
// identifier joined by underscores or dots (ERR_42, max_batch_size,
// os.path.join). Camel case is no code: it is as often a product's name
// (WebAssembly, VoIP), which every passage about it holds. In a question
// written in capitals, capitals alone make no code.
func codes(q string) []string {
	shouting := writtenInCapitals(q)
	var out []string
	seen := map[string]bool{}
	for _, t := range codeTokenRe.FindAllString(q, -1) {
		if !isCode(t, shouting) || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

func isCode(t string, shouting bool) bool {
	var upper, lower, digit, letter int
	for _, r := range t {
		switch {
		case unicode.IsUpper(r):
			upper++
			letter++
		case unicode.IsLower(r):
			lower++
			letter++
		case unicode.IsLetter(r):
			letter++
		case unicode.IsDigit(r):
			digit++
		}
	}
	switch {
	case letter == 0:
		return false // a number, a date, a version
	case hexRe.MatchString(t):
		return true
	case upper > 0 && digit > 0 && lower == 0:
		return true // T.81, AD4, X.509, ERR_42
	case upper >= 3 && lower == 0 && !shouting:
		return true // XOF, RJCT, PYTHONHASHSEED
	case strings.Contains(t, "_") && (lower > 0 || upper > 0):
		return true // max_batch_size
	case strings.Contains(t, ".") && lower > 0 && !strings.ContainsAny(t, "-/"):
		return dottedIdentifier(t) // os.path.join, pacs.008
	}
	return false
}

// dottedIdentifier: parts joined by dots, none of one letter (not "e.g").
func dottedIdentifier(t string) bool {
	for _, p := range strings.Split(t, ".") {
		if utf8.RuneCountInString(p) < 2 {
			return false
		}
	}
	return true
}

// writtenInCapitals: three or more words of letters and none with a
// lower-case letter.
func writtenInCapitals(q string) bool {
	n := 0
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if strings.IndexFunc(w, unicode.IsLower) >= 0 {
			return false
		}
		n++
	}
	return n >= 3
}

// codeRule is how code evidence matches: minCaps is the least number of
// capitals a code of capitals alone needs; notInFile leaves out a code the
// first result's file name holds (the document's own number, as T.81 in
// itu-t81.pdf: every passage of it holds that); notEverywhere one that
// every other returned passage holds too (two or more).
type codeRule struct {
	minCaps                  int
	notInFile, notEverywhere bool
}

var defaultCodeRule = codeRule{minCaps: CodeMinCaps, notInFile: true}

// codeEvidenceRule reports whether text, the first result's, holds one
// of the codes q names as written, as a whole token (not inside a longer
// word or code), as rule says; file is the result's file, others the other
// results' texts.
func codeEvidenceRule(q, text, file string, others []string, rule codeRule) bool {
	for _, c := range codes(q) {
		if capsOnly(c) && utf8.RuneCountInString(c) < rule.minCaps {
			continue
		}
		if rule.notInFile && strings.Contains(foldKey(file), foldKey(c)) {
			continue
		}
		if !holdsToken(text, c) {
			continue
		}
		if rule.notEverywhere && len(others) >= 2 {
			all := true
			for _, o := range others {
				if !holdsToken(o, c) {
					all = false
					break
				}
			}
			if all {
				continue
			}
		}
		return true
	}
	return false
}

// capsOnly: capitals and nothing else.
func capsOnly(c string) bool {
	for _, r := range c {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// foldKey is s's letters and digits, lower-cased.
func foldKey(s string) string {
	return strings.Join(words(s), "")
}

// holdsToken reports whether tok occurs in text with no letter, digit or
// underscore on either side, and no joiner (. - /) followed by one after.
func holdsToken(text, tok string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], tok)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(tok)
		if boundedToken(text, start, end) {
			return true
		}
		from = start + 1
	}
}

func boundedToken(s string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:start])
		if tokenRune(r) {
			return false
		}
	}
	if end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if tokenRune(r) {
			return false
		}
		if strings.ContainsRune(".-/", r) && end+n < len(s) {
			if r2, _ := utf8.DecodeRuneInString(s[end+n:]); tokenRune(r2) {
				return false // T.81 in T.81.1
			}
		}
	}
	return true
}

func tokenRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
