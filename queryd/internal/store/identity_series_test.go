package store

import (
	"fmt"
	"slices"
	"testing"
)

func TestNumberKeysSeriesHeld(t *testing.T) {
	nk := NumberKeys{Docs: 20, Keys: [][]string{{"pep 8"}, {"pep 572", "pep 8"}, {"rfc 5321"}, {"go 1.24"}}}
	for i := 10; i < 20; i++ {
		nk.Keys = append(nk.Keys, []string{fmt.Sprintf("pep %d", 3000+i)})
	}
	got := nk.SeriesHeld([]string{"pep", "rfc", "iso", "pep"})
	if _, ok := got["iso"]; ok || len(got) != 2 {
		t.Fatalf("series held: %v, want pep and rfc only", got)
	}
	pep := got["pep"]
	// Twelve distinct PEP numbers in twelve documents: the first eight in
	// order, "pep 8" once although two documents have it.
	want := []string{"pep 3010", "pep 3011", "pep 3012", "pep 3013", "pep 3014", "pep 3015", "pep 3016", "pep 3017"}
	if !slices.Equal(pep.Keys, want) || pep.Share != 12.0/20 {
		t.Errorf("pep: %v, share %v; want %v, 0.6", pep.Keys, pep.Share, want)
	}
	if rfc := got["rfc"]; !slices.Equal(rfc.Keys, []string{"rfc 5321"}) || rfc.Share != 1.0/20 {
		t.Errorf("rfc: %+v", rfc)
	}
	// "go" is no prefix of "golang 1": a series is its whole first word.
	nk2 := NumberKeys{Docs: 0, Keys: [][]string{{"golang 1"}}}
	if g := nk2.SeriesHeld([]string{"go"}); len(g) != 0 {
		t.Errorf("go matched %v", g)
	}
	if g := nk2.SeriesHeld([]string{"golang"}); g["golang"].Share != 1 {
		t.Errorf("no documents counted: share %v, want 1 (one over at least one)", g["golang"].Share)
	}
}
