package route

import (
	"reflect"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

var layers = []store.Layer{
	{ID: 1, Name: "payments", RoutingPatterns: []string{"credit transfer", `/\bpacs\.\d+/`}},
	{ID: 2, Name: "handbook", RoutingPatterns: []string{"leave"}},
	{ID: 3, Name: "broken", RoutingPatterns: []string{"/[unclosed/"}},
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"What is a pacs.008?":                 {"payments"},
		"Credit   Transfer limits":            {"payments"},
		"unused leave days":                   {"handbook"},
		"cleaver sharpening":                  nil, // "leave" only as a whole word
		"leave during a credit transfer run?": {"payments", "handbook"},
		"[unclosed":                           nil, // an invalid expression never matches
	} {
		var got []string
		for _, l := range Match(q, layers) {
			got = append(got, l.Name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Match(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	d := Decide("unused leave days", layers)
	if !d.Routed || !reflect.DeepEqual(d.Chosen(), []string{"handbook"}) || len(d.All) != 3 {
		t.Fatalf("leave routes to handbook alone, got %+v", d)
	}
	if d.InRouted(1) || !d.InRouted(2) {
		t.Errorf("only handbook is in the routed set")
	}
	none := Decide("cleaver sharpening", layers)
	if none.Routed || len(none.Layers) != 3 || none.Chosen() != nil || !none.InRouted(1) {
		t.Errorf("nothing matched: every layer is searched unrouted, got %+v", none)
	}
	two := []store.Layer{layers[0], layers[1]}
	if all := Decide("leave during a credit transfer run?", two); all.Routed {
		t.Errorf("routing to every layer is no routing, got %+v", all)
	}
}

func TestFallback(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    Outcome
		want Reason
	}{
		{Outcome{Found: 2, Wanted: 5, Judged: true}, InsufficientResults},
		{Outcome{Found: 2, Wanted: 5, Low: true, Judged: true}, InsufficientResults},
		{Outcome{Found: 5, Wanted: 5, Low: true, Judged: true}, LowConfidence},
		{Outcome{Found: 5, Wanted: 5, Low: true}, ""}, // words only: low is no verdict
		{Outcome{Found: 6, Wanted: 5, Judged: true}, ""},
	} {
		if got := Fallback(c.o); got != c.want {
			t.Errorf("Fallback(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
