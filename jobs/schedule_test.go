package jobs

import (
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		next time.Time
	}{
		{"6h", at.Add(6 * time.Hour)},
		{"daily 02:30", time.Date(2026, 11, 30, 2, 30, 0, 0, time.UTC)},
		{"00:15", time.Date(2026, 12, 1, 0, 15, 0, 0, time.UTC)},
		{"daily 01:00", time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)},
	} {
		s, err := ParseSchedule(c.in)
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", c.in, err)
			continue
		}
		if got := s.Next(at); !got.Equal(c.next) {
			t.Errorf("ParseSchedule(%q).Next(%s) = %s, want %s", c.in, at, got, c.next)
		}
	}
	for _, bad := range []string{"", "soon", "25:00", "daily 7", "10s"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) accepted a bad schedule", bad)
		}
	}
}
