package rescan

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// patterns exercise what a scan must get right: \b at the start and the
// end, ^ and $, case folding (ſ is s, K the Kelvin sign is k), classes
// that take anything as a first or final piece, repeats whose greedy
// reading fails, alternations that start differently, and (?m).
var patterns = []string{
	`\b[0-9]{4}-[0-9]{2}\b`,
	`(?i)\b(sek|usd|k)\s?([0-9]+)(?:\s*(thousand|m|k)\b)?`,
	`([0-9]{1,3}(?:[.,' ][0-9]{3})+|[0-9]+)(?:$|[^0-9])`,
	`(-?[0-9]+(?:[.,][0-9]+)?)(?:$|[^0-9A-Za-z])`,
	`(?i)(?:^|[^\p{L}\p{N}_])(clauses?|sect?\.|arts?\.?)[ \t\x{00a0}]*(?:no\.?[ \t]*)?`,
	`(§§?|¶)[ \t\x{00a0}]*`,
	`\b[A-Za-z]{1,3}-[0-9]{1,3}\b`,
	`(?i)\b(one|two|six)(?:[- ](one|two))?(?:\s+(hundred|thousand))?\b`,
	`a+b|a`,
	`x.y`,
	`(?s)x.y`,
	`(?m)^ab$`,
	`[^a]b`,
	`\B[0-9]`,
	`(?i)ß|k\b`,
	`[0-9]+\.?`,
	`(?:ab|a)(?:bc|c)?d?`,
	`\$[0-9]+|€ ?[0-9]+`,
}

// alphabet is what the random texts are made of.
var alphabet = []string{"a", "b", "c", "d", "x", "y", "A", "K", "\u212a", "k", "s", "S", "ſ", "ß", "é", "0", "1", "7", "2026", "-", ".", ",", "'",
	" ", "\t", "\n", "\u00a0", "$", "€", "§", "¶", "_", "\xff", "\xe2\x82", "one", "two", "six", "hundred", "thousand", "sek", "usd",
	"clause", "Sect.", "art", "no.", "m", "(", ")"}

func randomTexts(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	var out []string
	for range n {
		var b strings.Builder
		for range r.IntN(16) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		out = append(out, b.String())
	}
	return out
}

func agree(t *testing.T, s *Scan, text string, tails bool) {
	t.Helper()
	re := s.Regexp()
	if got, want := s.FindAllStringSubmatchIndex(text), re.FindAllStringSubmatchIndex(text, -1); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s on %q: got %v, want %v", re, text, got, want)
	}
	if got, want := s.FindAllStringIndex(text), re.FindAllStringIndex(text, -1); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s on %q: got %v, want %v (FindAllStringIndex)", re, text, got, want)
	}
	if !tails {
		return
	}
	for i := range len(text) {
		if got, want := s.FindStringSubmatchIndex(text[i:]), re.FindStringSubmatchIndex(text[i:]); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on %q: got %v, want %v (first match)", re, text[i:], got, want)
		}
	}
}

// TestAgrees: a scan finds what its pattern finds.
func TestAgrees(t *testing.T) {
	t.Parallel()
	texts := append([]string{"", "1,000,000.5 K", "§§ 4 and ¶\u00a07", "xclause 7 Sect. 4 arts 5", "one-two thousand six", "aaab aa", "ab\nab"},
		randomTexts(5000, 1)...)
	for _, p := range patterns {
		s := New(regexp.MustCompile(p), nil)
		for i, text := range texts {
			agree(t, s, text, i%5 == 0)
		}
	}
}

// FuzzAgrees: a scan finds what its pattern finds, on any text.
func FuzzAgrees(f *testing.F) {
	scans := make([]*Scan, len(patterns))
	for i, p := range patterns {
		scans[i] = New(regexp.MustCompile(p), nil)
	}
	for _, text := range randomTexts(20, 2) {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range scans {
			agree(t, s, text, true)
		}
	})
}

// TestWindow: the window holds what a match consumes between its first
// and its last character, and not what only the first or a final piece
// takes.
func TestWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, in, out string
	}{
		{`([0-9]+)(?:$|[^0-9])`, "0123456789", "x-. "},
		{`(?i)(?:^|[^\p{L}\p{N}_])(clause|sect\.)[ \t]*`, "clauseCLAUSEsect. \t", "(;7-"},
		{`\b[A-Z]{2}[0-9]{2}\b`, "AZ09", "az-"},
		{`€ ?[0-9]+x`, " 0123456789", "€x"},
	} {
		s := New(regexp.MustCompile(c.pattern), nil)
		for _, r := range c.in {
			if !s.InWindow(r) {
				t.Errorf("%s: %q not in the window", c.pattern, r)
			}
		}
		for _, r := range c.out {
			if s.InWindow(r) {
				t.Errorf("%s: %q in the window", c.pattern, r)
			}
		}
	}
	if s := New(regexp.MustCompile(`(?i)\bk`), nil); !s.Boundary() || !s.MayStart('\u212a') || s.MayStart('x') {
		t.Errorf(`(?i)\bk: boundary %v, K %v, x %v`, s.Boundary(), s.MayStart('\u212a'), s.MayStart('x'))
	}
	if s := New(regexp.MustCompile(`\ba|b`), nil); s.Boundary() {
		t.Errorf(`\ba|b: every match starts with \b`)
	}
}

func TestNewRefusesEmptyMatches(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New accepted a pattern that matches the empty string")
		}
	}()
	New(regexp.MustCompile(`a*`), nil)
}

func TestNeeds(t *testing.T) {
	t.Parallel()
	need := LeadWord("may", "sept")
	for text, want := range map[string]bool{"May 1": true, "mayor": false, "SEPT.": true, "ſept": true, "Auguſt": true, "august": false, "sep\u212a": true, "x": false} {
		if got := need(text, 0); got != want {
			t.Errorf("LeadWord on %q: %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]bool{"uſd": true, "USD5": true, "us": false, "noK": true, "no\u212a": true, "nox": false} {
		if got := HasFoldPrefix(text, 0, "usd", "nok"); got != want {
			t.Errorf("HasFoldPrefix on %q: %v, want %v", text, got, want)
		}
	}
}

// TestHasFoldPrefixAgrees: HasFoldPrefix folds case as (?i) does.
func TestHasFoldPrefixAgrees(t *testing.T) {
	t.Parallel()
	texts := randomTexts(3000, 3)
	for _, p := range []string{"sek", "usd", "k", "nok", "cl", "a.", "x1", "s_", "ss"} {
		re := regexp.MustCompile(`^(?i:` + regexp.QuoteMeta(p) + `)`)
		for _, text := range append(texts, strings.ToUpper(p), "ſ"+p[1:], "\u212a") {
			for i := range len(text) {
				if got, want := HasFoldPrefix(text, i, p), re.MatchString(text[i:]); got != want {
					t.Fatalf("HasFoldPrefix(%q, %q): %v, want %v", text[i:], p, got, want)
				}
			}
		}
	}
}
