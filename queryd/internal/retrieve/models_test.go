package retrieve

import "testing"

func TestPickModel(t *testing.T) {
	ids := []int64{1, 2, 3}
	for _, tc := range []struct {
		name   string
		models map[int64][]string
		def    string
		want   string
	}{
		{"none complete", map[int64][]string{}, "bge@1", ""},
		{"all on the default", map[int64][]string{1: {"bge@1"}, 2: {"bge@1"}}, "bge@1", "bge@1"},
		{"old layers keep their model", map[int64][]string{1: {"use-lite-512@1"}, 2: {"use-lite-512@1"}, 3: {"bge@1"}}, "bge@1", "use-lite-512@1"},
		{"newest complete model counts", map[int64][]string{1: {"bge@1", "use-lite-512@1"}}, "use-lite-512@1", "bge@1"},
		{"the default wins a tie", map[int64][]string{1: {"e5@1"}, 2: {"bge@1"}}, "bge@1", "bge@1"},
		{"then the first name", map[int64][]string{1: {"e5@1"}, 2: {"bge@1"}}, "x@1", "bge@1"},
	} {
		if got := pickModel(tc.models, ids, tc.def); got != tc.want {
			t.Errorf("%s: pickModel = %q, want %q", tc.name, got, tc.want)
		}
	}
}
