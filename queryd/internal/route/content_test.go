package route

import (
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// contentLayers: a large handbook, a large contracts layer and a
// ten-chunk tariff table, none with a pattern, and descriptions that share
// no word with the questions below unless said.
var contentLayers = []store.Layer{
	{ID: 1, Name: "handbook", Description: "Employee handbook"},
	{ID: 2, Name: "contracts", Description: "Supplier agreements"},
	{ID: 3, Name: "tariffs", Description: "Parcel zones"},
}

// layerWords builds LayerWords: chunks per layer and, per lexeme, the chunks
// holding it in each layer (in the order of contentLayers).
func layerWords(chunks [3]int64, df map[string][3]int64) store.LayerWords {
	w := store.LayerWords{Chunks: map[int64]int64{}, DF: map[int64]map[string]int64{}}
	for i, l := range contentLayers {
		w.Chunks[l.ID] = chunks[i]
		w.DF[l.ID] = map[string]int64{}
	}
	for lex, n := range df {
		w.Lexemes = append(w.Lexemes, lex)
		for i, l := range contentLayers {
			if n[i] > 0 {
				w.DF[l.ID][lex] = n[i]
			}
		}
	}
	return w
}

func TestContentRouting(t *testing.T) {
	t.Parallel()
	chunks := [3]int64{1200, 1500, 10}
	// "base fee for a delivery in the same city": the tariff rows hold
	// these words far more often than the long layers do.
	tariff := layerWords(chunks, map[string][3]int64{
		"base": {2, 40, 8}, "fee": {10, 300, 9}, "citi": {5, 20, 4}, "deliveri": {3, 400, 3}})
	// "use string exceptions": one word the tariff table also holds once.
	spread := layerWords(chunks, map[string][3]int64{
		"string": {60, 5, 0}, "except": {80, 60, 1}, "use": {900, 1100, 2}})
	// Words both long layers hold alike: no clear leader.
	tie := layerWords(chunks, map[string][3]int64{"notic": {100, 125, 0}, "period": {90, 110, 0}})

	called := 0
	lazy := func(w store.LayerWords) func() (store.LayerWords, bool) {
		return func() (store.LayerWords, bool) { called++; return w, true }
	}
	d := DecideWith("What is the base fee for a delivery within the same city?", contentLayers, nil, lazy(tariff))
	if !d.Routed || len(d.Layers) != 1 || d.Layers[0].Name != "tariffs" || d.Why[0].By != "content" || !d.Strong() {
		t.Fatalf("tariff question: want tariffs chosen by content, strong; got %+v", d)
	}
	if len(d.Why[0].Words) == 0 || d.Why[0].Score <= 0 {
		t.Errorf("explain should give the words and the score, got %+v", d.Why[0])
	}
	if d := DecideWith("Does this make it impossible to use string exceptions?", contentLayers, nil, lazy(spread)); d.Routed && d.Layers[0].Name == "tariffs" {
		t.Errorf("one shared word must not send a question to the small table: %+v", d)
	}
	if d := DecideWith("What notice period applies?", contentLayers, nil, lazy(tie)); d.Routed {
		t.Errorf("no layer leads: want every layer, got %+v", d)
	}

	// The statistics are read only when nothing else routes.
	called = 0
	pattern := []store.Layer{contentLayers[0], contentLayers[1], {ID: 3, Name: "tariffs", RoutingPatterns: []string{"tariff zone"}}}
	if d := DecideWith("base fee of tariff zone Z1", pattern, nil, lazy(tariff)); !d.Routed || d.Why[0].By != "pattern" || !d.Strong() || called != 0 {
		t.Errorf("a pattern routes first without reading statistics: %+v, read %d times", d, called)
	}
	// Without statistics, content routing does nothing.
	if d := DecideWith("What is the base fee for a delivery within the same city?", contentLayers, nil, nil); d.Routed {
		t.Errorf("no statistics: want every layer, got %+v", d)
	}
	failing := func() (store.LayerWords, bool) { return store.LayerWords{}, false }
	if d := DecideWith("What is the base fee for a delivery within the same city?", contentLayers, nil, failing); d.Routed {
		t.Errorf("statistics unavailable: want every layer, got %+v", d)
	}
}

// A description's word routes, but it is firm evidence only when the
// layer's own chunks agree.
func TestDescriptionStrongOnlyWithContent(t *testing.T) {
	t.Parallel()
	ls := []store.Layer{
		{ID: 1, Name: "handbook", Description: "Employee handbook"},
		{ID: 2, Name: "contracts", Description: "Supplier agreements"},
		{ID: 3, Name: "tariffs", Description: "Parcel zones and shipment exception codes"},
	}
	agree := layerWords([3]int64{1200, 1500, 10}, map[string][3]int64{"parcel": {0, 3, 9}, "cost": {20, 200, 9}})
	d := DecideWith("What does a parcel cost?", ls, nil, func() (store.LayerWords, bool) { return agree, true })
	if !d.Routed || d.Why[0].By != "description" || !d.Strong() {
		t.Errorf("description and content agree: want a strong description route, got %+v", d)
	}
	disagree := layerWords([3]int64{1200, 1500, 10}, map[string][3]int64{"except": {300, 50, 1}, "string": {200, 0, 0}})
	d = DecideWith("How do string exceptions work?", ls, nil, func() (store.LayerWords, bool) { return disagree, true })
	if !d.Routed || d.Why[0].Layer != "tariffs" || d.Strong() {
		t.Errorf("a description word the layer's chunks do not bear out: want a weak route to tariffs, got %+v", d)
	}
	if d := Decide("How do string exceptions work?", ls); !d.Routed || d.Strong() {
		t.Errorf("without statistics a description route is weak, got %+v", d)
	}
}
