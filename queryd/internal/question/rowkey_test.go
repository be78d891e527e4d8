package question

import (
	"slices"
	"testing"
)

func TestRowKeys(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string // kind:key
	}{
		{"What does warning 318 say?", []string{"warning:318"}},
		{"Is warning 509 something I need to act on?", []string{"warning:509"}},
		{"What does status RJCT mean, and error E42?", []string{"status:RJCT"}}, // E42: one capital
		{"What does section 318 say?", nil},
		{"What did PEP 572 propose in 2018?", nil},
		{"How many days since 2019?", nil},
		{"What is the fee for 300 pages?", nil},
	} {
		var got []string
		for _, k := range RowKeys(c.q) {
			got = append(got, k.Kind+":"+k.Key)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("RowKeys(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestRowIn(t *testing.T) {
	table := "| Code | Meaning |\n|---|---|\n| 305 | Intermediary bank unknown |\n| 318 | Remittance text too long |\n"
	k := RowKey{Raw: "warning 318", Kind: "warning", Key: "318"}
	for _, c := range []struct {
		text, section string
		want          bool
	}{
		{"## Warning codes\n\n" + table, "", true},
		{table, "Gateway > Warning codes", true},
		{table, "Gateway > Status codes", false},                                       // the kind is named nowhere
		{"## Warnings\n\n| 3180 | Other |\n", "", false},                               // another key
		{"## Warnings\n\nWarning 318 was retired in 2020.\n", "", false},               // no table row
		{"## Warnings\n\n| Code | Meaning |\n|---|---|\n| 318 | Too long |", "", true}, // "warnings"
	} {
		if got := k.RowIn(c.text, c.section); got != c.want {
			t.Errorf("RowIn(%.40q, %q) = %v, want %v", c.text, c.section, got, c.want)
		}
	}
}
