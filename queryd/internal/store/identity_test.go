package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
)

// TestDocumentsNamed: the documents of the searched layers whose identity
// holds any of the keys, each once however many keys it holds, by path, at
// most limit; another layer's documents are not returned.
func TestDocumentsNamed(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	ctx := context.Background()
	write := func(dir string, files map[string]string) {
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	peps, other := t.TempDir(), t.TempDir()
	write(peps, map[string]string{
		"pep-0572.md": "# Assignment Expressions\n\nThe walrus operator.\n",
		"pep-0008.md": "# Style Guide for Python Code\n\nIndent with four spaces.\n",
		"notes.md":    "# Assignment Expressions\n\nNotes on the operator.\n",
		"pep-0020.md": "# The Zen of Python\n\nBeautiful is better than ugly.\n",
	})
	write(other, map[string]string{"pep-0572.md": "# Assignment Expressions\n\nA copy elsewhere.\n"})
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "peps", Root: peps}, ingesttest.Options{})
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "other", Root: other}, ingesttest.Options{})
	c, err := NewCorpus(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var layer int64
	if err := pool.QueryRow(ctx, `SELECT id FROM strata.layers WHERE name = 'peps'`).Scan(&layer); err != nil {
		t.Fatal(err)
	}
	// pep-0572.md holds two of the keys; the title key also names notes.md.
	keys := []string{"pep 572", "t:assignment expressions", "t:style guide for python code", "t:no such title", "pep 9999"}
	files := func(limit int) []string {
		docs, err := c.DocumentsNamed(ctx, []int64{layer}, keys, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range docs {
			if d.Layer != "peps" || d.LayerID != layer {
				t.Errorf("%s from layer %s (%d), want peps", d.File, d.Layer, d.LayerID)
			}
			out = append(out, d.File)
		}
		return out
	}
	if got, want := files(10), []string{"notes.md", "pep-0008.md", "pep-0572.md"}; !slices.Equal(got, want) {
		t.Errorf("documents named: %v, want %v", got, want)
	}
	if got, want := files(2), []string{"notes.md", "pep-0008.md"}; !slices.Equal(got, want) {
		t.Errorf("documents named, at most 2: %v, want %v", got, want)
	}
	docs, err := c.DocumentsNamed(ctx, []int64{layer}, []string{"t:nothing here"}, 10)
	if err != nil || len(docs) != 0 {
		t.Errorf("no key held: %v, %v", docs, err)
	}
}
