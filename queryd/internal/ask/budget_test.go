package ask

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "äöüß": 1, "日本語の文書": 2} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestPack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		costs  []int
		budget int
		max    int
		keep   []int
		used   int
	}{
		{[]int{100, 200, 300}, 1500, 0, []int{0, 1, 2}, 600},
		// The first passage comes back even alone over the budget.
		{[]int{2000, 10}, 1500, 0, []int{0}, 2000},
		// One that does not fit is skipped; a smaller later one still fits.
		{[]int{1000, 600, 400}, 1500, 0, []int{0, 2}, 1400},
		{[]int{1, 1, 1}, 1500, 2, []int{0, 1}, 2},
	}
	for _, c := range cases {
		keep, used := Pack(c.costs, c.budget, c.max, true)
		if !reflect.DeepEqual(keep, c.keep) || used != c.used {
			t.Errorf("Pack(%v, %d, %d) = %v, %d; want %v, %d", c.costs, c.budget, c.max, keep, used, c.keep, c.used)
		}
	}
	// After named clauses, the first passage is not forced in.
	if keep, _ := Pack([]int{2000, 10}, 1500, 0, false); !reflect.DeepEqual(keep, []int{1}) {
		t.Errorf("Pack without the first forced: %v, want [1]", keep)
	}
	many := make([]int, 80)
	if keep, _ := Pack(many, 1500, 0, true); len(keep) != MaxPassages {
		t.Errorf("Pack kept %d zero-cost passages, want at most %d", len(keep), MaxPassages)
	}
}

// words returns a clause of n characters made of five-letter words.
func words(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString("abcde ")
	}
	return b.String()[:n]
}

func TestCutAtWord(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		max  int
		want string
	}{
		{"one two three", 100, "one two three"},
		{"one two three", 9, "one two"},
		{"one two three", 7, "one two"},
		{"one two three", 8, "one two"},
		{"onetwothree", 5, "onetw"},
		{"été à Zürich ouvert", 12, "été à Zürich"},
	}
	for _, c := range cases {
		if got := cutAtWord(c.text, c.max); got != c.want {
			t.Errorf("cutAtWord(%q, %d) = %q, want %q", c.text, c.max, got, c.want)
		}
	}
}

func TestFitClauses(t *testing.T) {
	t.Parallel()
	n := utf8.RuneCountInString
	t.Run("all fit whole", func(t *testing.T) {
		fits, used := FitClauses([]Clause{{Text: words(300)}, {Text: words(500)}}, 6000)
		if fits[0].Cut || fits[1].Cut || fits[0].LeftOut || fits[1].LeftOut || used != 800 {
			t.Fatalf("fits %+v used %d", fits, used)
		}
	})
	t.Run("a long clause is cut at a word", func(t *testing.T) {
		fits, _ := FitClauses([]Clause{{Text: words(9000)}}, 6000)
		if !fits[0].Cut || n(fits[0].Text) > 6000 || n(fits[0].Text) < 5990 || strings.HasSuffix(fits[0].Text, " ") {
			t.Fatalf("cut to %d chars", n(fits[0].Text))
		}
		if !strings.HasSuffix(fits[0].Text, "abcde") {
			t.Fatalf("not cut at a word: ...%q", fits[0].Text[len(fits[0].Text)-8:])
		}
	})
	t.Run("the budget is shared in order", func(t *testing.T) {
		// Three long clauses share 6,000 characters about equally.
		fits, used := FitClauses([]Clause{{Text: words(5000)}, {Text: words(5000)}, {Text: words(5000)}}, 6000)
		for i, f := range fits {
			if !f.Cut || n(f.Text) < 1900 || n(f.Text) > 2010 {
				t.Errorf("clause %d: %d chars, cut %v", i, n(f.Text), f.Cut)
			}
		}
		if used > 6000 {
			t.Errorf("used %d of 6000", used)
		}
	})
	t.Run("a short first clause leaves its share to the others", func(t *testing.T) {
		fits, _ := FitClauses([]Clause{{Text: words(100)}, {Text: words(5000)}}, 2000)
		if fits[0].Cut || !fits[1].Cut || n(fits[1].Text) < 1890 {
			t.Fatalf("fits %d/%v, %d/%v", n(fits[0].Text), fits[0].Cut, n(fits[1].Text), fits[1].Cut)
		}
	})
	t.Run("a clause of 200 characters or less is never cut", func(t *testing.T) {
		fits, _ := FitClauses([]Clause{{Text: words(200)}}, 100)
		if fits[0].Cut || n(fits[0].Text) != 200 {
			t.Fatalf("first short clause: %+v", fits[0])
		}
		fits, _ = FitClauses([]Clause{{Text: words(150)}, {Text: words(150)}, {Text: words(100)}}, 390)
		if fits[0].Cut || fits[1].Cut || fits[1].LeftOut || !fits[2].LeftOut {
			t.Fatalf("short clauses: %+v", fits)
		}
	})
	t.Run("a clause that cannot keep its head is left out with all after it", func(t *testing.T) {
		fits, _ := FitClauses([]Clause{{Text: words(5000)}, {Text: words(5000)}, {Text: words(5000)}}, 500)
		if !fits[0].Cut || fits[0].LeftOut {
			t.Fatalf("first: %+v", fits[0])
		}
		if !fits[1].Cut && !fits[1].LeftOut {
			t.Fatalf("second neither cut nor left out")
		}
		if !fits[2].LeftOut || fits[2].Text != "" {
			t.Fatalf("third should be left out: %d chars", n(fits[2].Text))
		}
		for i := 1; i < len(fits)-1; i++ {
			if fits[i].LeftOut && !fits[i+1].LeftOut {
				t.Fatalf("clause %d left out but %d kept", i, i+1)
			}
		}
	})
	t.Run("the first clause comes back even over the budget", func(t *testing.T) {
		fits, _ := FitClauses([]Clause{{Text: words(5000), Overhead: 80}}, 50)
		if fits[0].LeftOut || n(fits[0].Text) < 190 {
			t.Fatalf("first clause: %d chars, left out %v", n(fits[0].Text), fits[0].LeftOut)
		}
	})
	t.Run("citations count", func(t *testing.T) {
		fits, used := FitClauses([]Clause{{Text: words(1000), Overhead: 100}}, 600)
		if n(fits[0].Text) > 500 || used > 600 {
			t.Fatalf("%d chars, used %d", n(fits[0].Text), used)
		}
	})
}
