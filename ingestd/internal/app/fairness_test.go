package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeProcedures writes n Markdown files of a few paragraphs each to dir.
func writeProcedures(t *testing.T, dir, topic string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s %d\n\n", topic, i)
		for p := 0; p < 4; p++ {
			fmt.Fprintf(&b, "Step %d of %s %d: the operator checks valve %d-%d, writes the pressure in the log, "+
				"and waits for the second operator to confirm the reading before the line is opened again. "+
				"Deviations above five percent are reported to the shift lead of site %d on the same day.\n\n", p, topic, i, i, p, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.md", topic, i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSmallLayerDoesNotWaitForAnotherLayersEmbedding is the fairness test
// (issue 32, item 1): while a large layer embeds through a slow endpoint, a
// 3-file `add --wait` of another layer walks, parses and embeds in seconds,
// long before the large layer is done. On a single queue it waited for the
// large layer's whole backlog.
func TestSmallLayerDoesNotWaitForAnotherLayersEmbedding(t *testing.T) {
	c := newCLI(t)
	bigDir, smallDir := t.TempDir(), t.TempDir()
	writeProcedures(t, bigDir, "procedure", 48)
	writeProcedures(t, smallDir, "checklist", 3)
	srv, _ := slowEmbedder(t, 800*time.Millisecond)
	pool := c.pool()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	big, bigOut := c.child(ctx, srv.URL, "add", bigDir, "--layer", "big", "--wait")
	if err := big.Start(); err != nil {
		t.Fatal(err)
	}
	bigDone := make(chan error, 1)
	go func() { bigDone <- big.Wait() }()

	// Wait until the big layer is parsed and embedding, with most of its
	// chunks still pending.
	pendingBig := func() (stored, pending int, err error) {
		err = pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id WHERE l.name = 'big'
				AND EXISTS (SELECT 1 FROM strata.embeddings e WHERE e.model = $1 AND e.content_hash = c.content_hash)),
			(SELECT count(*) FROM strata.chunks c JOIN strata.layers l ON l.id = c.layer_id WHERE l.name = 'big'
				AND NOT EXISTS (SELECT 1 FROM strata.embeddings e WHERE e.model = $1 AND e.content_hash = c.content_hash))`,
			fakeModel).Scan(&stored, &pending)
		return stored, pending, err // an error until the child has migrated
	}
	for {
		if stored, pending, err := pendingBig(); err == nil && stored > 0 && pending > 40 {
			t.Logf("big layer embedding: %d chunks stored, %d pending", stored, pending)
			break
		}
		select {
		case err := <-bigDone:
			t.Fatalf("the big layer finished (%v) before the test could start the small one:\n%s", err, bigOut)
		case <-time.After(50 * time.Millisecond):
		}
	}

	// status shows the big layer's embedding rate and time left.
	code, status, errOut := c.run("status")
	if code != 0 {
		t.Fatalf("status exited %d: %s", code, errOut)
	}
	if !strings.Contains(status, "big: embedding with "+fakeModel) || !strings.Contains(status, " left") {
		t.Errorf("status during the big layer's embedding shows no progress for it:\n%s", status)
	}

	start := time.Now()
	small, smallOut := c.child(ctx, srv.URL, "add", smallDir, "--layer", "small", "--wait")
	if err := small.Run(); err != nil {
		t.Fatalf("add --wait of the small layer failed: %v\n%s", err, smallOut)
	}
	took := time.Since(start)
	_, pendingAfter, err := pendingBig()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("small layer done in %s with %d chunks of the big layer pending:\n%s", took.Round(time.Millisecond), pendingAfter, smallOut)
	// The big layer alone needs 48 files x ~2.5 chunks / 4 per request x
	// 0.8s = about 24s of embedding, one request at a time; the small one 2
	// requests (about 2s in all here). The bound is generous: what matters
	// is that the small layer did not wait for the big one's backlog.
	if took > 15*time.Second {
		t.Errorf("the 3-file layer took %s beside the big layer's embedding, want well under 15s", took)
	}
	if pendingAfter == 0 {
		t.Errorf("the big layer was embedded before the small layer finished: the small layer waited for it")
	}
	if !strings.Contains(smallOut.String(), "small: every chunk has a vector of "+fakeModel) ||
		!strings.Contains(smallOut.String(), "small: 3 added") {
		t.Errorf("the small layer's output:\n%s", smallOut)
	}

	if err := <-bigDone; err != nil {
		t.Fatalf("the big layer's add --wait failed: %v\n%s", err, bigOut)
	}
	// Piped, the big layer's embedding printed progress lines with the
	// percentage, the rate and the time left.
	if !strings.Contains(bigOut.String(), "chunks/s, about") {
		t.Errorf("the big layer's output has no progress line with a rate:\n%s", bigOut)
	}
}
