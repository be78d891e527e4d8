// Package golden holds what golden-file tests share: a line diff of the
// expected and the actual text.
package golden

import (
	"fmt"
	"strings"
)

// context is how many unchanged lines the diff shows around a change.
const context = 2

// maxCells bounds the table of the longest-common-subsequence diff; a
// changed middle larger than it is shown as all of want's lines, then all of
// got's.
const maxCells = 4_000_000

// maxShown bounds the lines of a diff; the rest is counted.
const maxShown = 200

// Diff returns a line diff of want and got: "- " marks a line only want
// has, "+ " a line only got has, "  " an unchanged line near a change, and
// each hunk starts with "@@ line N", N the line of want it starts at
// (counted from 1). It returns "" when the two are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	// The common head and tail are matched without the table.
	head := 0
	for head < len(w) && head < len(g) && w[head] == g[head] {
		head++
	}
	tw, tg := len(w), len(g)
	for tw > head && tg > head && w[tw-1] == g[tg-1] {
		tw--
		tg--
	}
	var ops []op
	for k := range head {
		ops = append(ops, op{' ', k, w[k]})
	}
	ops = append(ops, middle(w[head:tw], g[head:tg], head)...)
	for k := tw; k < len(w); k++ {
		ops = append(ops, op{' ', k, w[k]})
	}
	return render(ops)
}

// op is one line of the diff: kind ' ', '-' or '+', and the index in want
// of the line (of the next want line, for '+').
type op struct {
	kind byte
	at   int
	line string
}

// middle diffs the changed middle, x from want and y from got, x starting
// at want's line off.
func middle(x, y []string, off int) []op {
	n, m := len(x), len(y)
	var ops []op
	if n*m > maxCells {
		for i, l := range x {
			ops = append(ops, op{'-', off + i, l})
		}
		for _, l := range y {
			ops = append(ops, op{'+', off + n, l})
		}
		return ops
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', off + i, x[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', off + i, x[i]})
			i++
		default:
			ops = append(ops, op{'+', off + i, y[j]})
			j++
		}
	}
	return ops
}

// render writes the changed lines and their context.
func render(ops []op) string {
	var b strings.Builder
	shown, last := 0, -2
	for k, o := range ops {
		near := false
		for d := -context; d <= context; d++ {
			if k+d >= 0 && k+d < len(ops) && ops[k+d].kind != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if shown == maxShown {
			fmt.Fprintf(&b, "… and more\n")
			break
		}
		if k != last+1 {
			fmt.Fprintf(&b, "@@ line %d\n", o.at+1)
		}
		fmt.Fprintf(&b, "%c %s\n", o.kind, o.line)
		shown, last = shown+1, k
	}
	return b.String()
}
