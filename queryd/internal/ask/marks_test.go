package ask

import (
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/lrank"
)

// TestMarks: the offline reranker brings its measured marks, a reranker
// without any gets the defaults, and marks given in Options win.
func TestMarks(t *testing.T) {
	t.Parallel()
	measured, ok := lrank.MeasuredMarks[lrank.Default.Version]
	if !ok {
		t.Fatalf("the shipped model %s has no measured marks (lrank.MeasuredMarks)", lrank.Default.Version)
	}
	if measured.Medium <= 0 || measured.Medium >= measured.High || measured.High > 1 {
		t.Fatalf("marks %+v", measured)
	}
	if h, m := New(Options{Reranker: Offline{Model: lrank.Default}}).Marks(); h != measured.High || m != measured.Medium {
		t.Errorf("offline reranker: marks %v / %v, want %+v", h, m, measured)
	}
	unknown := lrank.Default
	unknown.Version = "lrank-unmeasured"
	if h, m := New(Options{Reranker: Offline{Model: unknown}}).Marks(); h != RerankHigh || m != RerankMedium {
		t.Errorf("unmeasured model: marks %v / %v, want the defaults", h, m)
	}
	if h, m := New(Options{Reranker: Texts{overlap{}}}).Marks(); h != RerankHigh || m != RerankMedium {
		t.Errorf("text reranker: marks %v / %v, want the defaults", h, m)
	}
	// Reranking off: the offline sentence scorer's marks.
	if h, m := New(Options{Sentences: OfflineSentences{Model: lrank.Default}}).Marks(); h != measured.High || m != measured.Medium {
		t.Errorf("offline sentence scorer: marks %v / %v, want %+v", h, m, measured)
	}
	if h, m := New(Options{Reranker: Offline{Model: lrank.Default}, RerankHigh: 0.9, RerankMedium: 0.3}).Marks(); h != 0.9 || m != 0.3 {
		t.Errorf("marks given: %v / %v", h, m)
	}
}
