package retrieve

import "testing"

// TestSameText is the rule issue 12 class 7 drops duplicates by: a chunk and
// an exact section hold the same text when one contains the other or they
// overlap by at least half of the shorter one.
func TestSameText(t *testing.T) {
	tests := []struct {
		a, b [2]int
		want bool
	}{
		{[2]int{100, 200}, [2]int{100, 200}, true}, // the same span
		{[2]int{120, 180}, [2]int{100, 200}, true}, // chunk inside the section
		{[2]int{0, 900}, [2]int{100, 200}, true},   // chunk holding the section
		{[2]int{150, 260}, [2]int{100, 200}, true}, // 50 of 100 overlap
		{[2]int{170, 400}, [2]int{100, 200}, false},
		{[2]int{200, 300}, [2]int{100, 200}, false}, // touching only
		{[2]int{0, 50}, [2]int{100, 200}, false},
	}
	for _, tt := range tests {
		if got := sameText(tt.a[0], tt.a[1], tt.b[0], tt.b[1]); got != tt.want {
			t.Errorf("sameText(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := sameText(tt.b[0], tt.b[1], tt.a[0], tt.a[1]); got != tt.want {
			t.Errorf("sameText(%v, %v) = %v, want %v (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestNotReturnedSkipsOrdinaryResults: a matching section left out of the
// exact results but whose text came back as an ordinary result is not
// counted as not returned.
func TestNotReturnedSkipsOrdinaryResults(t *testing.T) {
	rest := []Section{
		{DocumentID: 1, SectionStart: 100, SectionEnd: 200},
		{DocumentID: 2, SectionStart: 100, SectionEnd: 200},
		{DocumentID: 3, SectionStart: 100, SectionEnd: 200},
	}
	cands := []Candidate{
		{DocumentID: 1, Start: 0, End: 400},   // holds document 1's section
		{DocumentID: 2, Start: 500, End: 900}, // another part of document 2
	}
	if got := notReturned(rest, cands); got != 2 {
		t.Errorf("notReturned = %d, want 2 (documents 2 and 3)", got)
	}
}
