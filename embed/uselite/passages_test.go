package uselite

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestWindows(t *testing.T) {
	for _, tc := range []struct {
		n, size, stride int
		want            []window
	}{
		{0, 64, 64, []window{{0, 0}}},
		{64, 64, 64, []window{{0, 64}}},
		{65, 64, 64, []window{{0, 64}, {1, 65}}},
		{200, 64, 64, []window{{0, 64}, {64, 128}, {128, 192}, {136, 200}}},
		{200, 128, 64, []window{{0, 128}, {64, 192}, {72, 200}}},
		{256, 128, 128, []window{{0, 128}, {128, 256}}},
	} {
		if got := windows(tc.n, tc.size, tc.stride); !slices.Equal(got, tc.want) {
			t.Errorf("windows(%d, %d, %d) = %v, want %v", tc.n, tc.size, tc.stride, got, tc.want)
		}
	}
}

func TestEmbedPassagesShortEqualsEmbed(t *testing.T) {
	m := testModel(t)
	texts := []string{"", "The lease ends on 31 March.", "Backups are kept for ninety days and tested monthly."}
	p, err := m.EmbedPassages(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if c := cosine(p[i], e[i]); c < 0.99999 {
			t.Errorf("%q: EmbedPassages and Embed differ (cosine %.6f)", texts[i], c)
		}
	}
}

// TestEmbedPassagesSeesTheWholeChunk: a topic that only appears after the
// model's 128th piece still pulls the passage vector towards a query about it,
// which truncation (Embed) cannot do.
func TestEmbedPassagesSeesTheWholeChunk(t *testing.T) {
	m := testModel(t)
	head := strings.Repeat("The buyer pays each invoice within thirty days of receipt by bank transfer. ", 8)
	tail := "In case of fire, staff leave by the nearest exit and gather at the car park for a roll call."
	passage := head + tail
	if n := len(m.Tokenize(head)); n <= MaxPieces {
		t.Fatalf("head has %d pieces, want more than %d", n, MaxPieces)
	}
	ctx := context.Background()
	pv, err := m.EmbedPassages(ctx, []string{passage})
	if err != nil {
		t.Fatal(err)
	}
	tv, err := m.Embed(ctx, []string{passage})
	if err != nil {
		t.Fatal(err)
	}
	q, err := m.Embed(ctx, []string{"fire evacuation assembly point"})
	if err != nil {
		t.Fatal(err)
	}
	whole, truncated := cosine(q[0], pv[0]), cosine(q[0], tv[0])
	if whole <= truncated+0.02 {
		t.Errorf("query about the tail: cosine %.3f with EmbedPassages, %.3f with Embed; want the passage vector clearly closer", whole, truncated)
	}
	t.Logf("query about the tail: cosine %.3f with EmbedPassages, %.3f with Embed", whole, truncated)
	var norm float64
	for _, x := range pv[0] {
		norm += float64(x) * float64(x)
	}
	if norm < 0.9999 || norm > 1.0001 {
		t.Errorf("passage vector has squared norm %.5f, want 1", norm)
	}
}
