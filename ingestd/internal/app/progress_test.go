package app

import (
	"testing"
	"time"
)

func TestTookLineReportsTheWaitApart(t *testing.T) {
	if got, want := tookLine(3*time.Second, 200*time.Millisecond), " in 3s"; got != want {
		t.Errorf("tookLine without a wait = %q, want %q", got, want)
	}
	got := tookLine(21*time.Minute+3*time.Second, 21*time.Minute)
	if want := "; waited 21m0s for other layers' jobs; ingest 3s"; got != want {
		t.Errorf("tookLine = %q, want %q", got, want)
	}
}

func TestEmbedLineShowsPercentRateAndTimeLeft(t *testing.T) {
	got := embedLine("ops: embedding with m", 1200, 28000, time.Minute)
	if want := "ops: embedding with m: 1200/28000 chunks (4%), 20.0 chunks/s, about 22m20s left"; got != want {
		t.Errorf("embedLine = %q, want %q", got, want)
	}
	if got := embedLine("ops", 0, 10, time.Second); got != "ops: 0/10 chunks (0%)" {
		t.Errorf("embedLine before any vector = %q", got)
	}
}
