package route

import (
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

func TestAffinityRoutes(t *testing.T) {
	all := []store.Layer{
		{ID: 1, Name: "handbook", Description: "Staff handbook: leave, notice periods, payroll."},
		{ID: 2, Name: "sepa", Description: "SEPA rulebooks."},
		{ID: 3, Name: "codes", RoutingPatterns: []string{"/\\b[A-Z]{2}[0-9]{2}\\b/"}},
	}
	learned := []store.LayerAffinity{
		{Term: "sct", Layer: "sepa", Evidence: 2}, {Term: "reject", Layer: "sepa", Evidence: 1},
		{Term: "code", Layer: "sepa", Evidence: 1}, {Term: "code", Layer: "codes", Evidence: 1},
		{Term: "leave", Layer: "sepa", Evidence: 1}, {Term: "gone", Layer: "deleted", Evidence: 9},
	}
	// Without affinity the descriptions do not route this question.
	if d := Decide("SCT reject codes", all); d.Routed {
		t.Fatalf("without affinity: %+v", d)
	}
	d := DecideLearned("SCT reject codes", all, learned)
	if !d.Routed || len(d.Layers) != 1 || d.Layers[0].Name != "sepa" || d.Why[0].By != "affinity" || d.Why[0].Score != 2.5 {
		t.Fatalf("with affinity: %+v", d)
	}
	if w := d.Why[0].Words; len(w) != 3 || w[0] != "code" || w[2] != "sct" {
		t.Errorf("words %q", w)
	}
	// A pattern still routes first.
	if d := DecideLearned("SCT reject code AB12", all, learned); d.Why[0].By != "pattern" || d.Layers[0].Name != "codes" {
		t.Errorf("pattern first: %+v", d.Why)
	}
	// Too little evidence: one term, or a small share of a long question.
	if _, ok := Affinity("reject", all, learned); ok {
		t.Error("one term routed")
	}
	if _, ok := Affinity("SCT reject rules for instant payments in euro across borders", all, learned); ok {
		t.Error("2 of 8 terms routed")
	}
	// A layer that no longer exists is ignored; descriptions route then.
	if d := DecideLearned("gone leave payroll", all, learned); d.Routed && d.Why[0].By == "affinity" {
		t.Errorf("routed by a deleted layer's affinity: %+v", d.Why)
	}
}
