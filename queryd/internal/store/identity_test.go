package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
)

// layersOf ingests each layer's files (name to text) into a new database
// and returns a Corpus on it and the layers' ids by name.
func layersOf(t *testing.T, layers map[string]map[string]string) (*Corpus, map[string]int64) {
	t.Helper()
	pool, url := dbtest.NewPool(t)
	ids := map[string]int64{}
	for name, files := range layers {
		root := t.TempDir()
		for file, body := range files {
			if err := os.WriteFile(filepath.Join(root, file), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ingesttest.Ingest(t, pool, jobs.Layer{Name: name, Root: root}, ingesttest.Options{})
		var id int64
		if err := pool.QueryRow(context.Background(), `SELECT id FROM strata.layers WHERE name = $1`, name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	c, err := NewCorpus(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, ids
}

// TestDocumentsNamed: the documents of the searched layers whose identity
// holds any of the keys, each once however many keys it holds, by path, at
// most limit; another layer's documents are not returned.
func TestDocumentsNamed(t *testing.T) {
	ctx := context.Background()
	c, ids := layersOf(t, map[string]map[string]string{
		"peps": {
			"pep-0572.md": "# Assignment Expressions\n\nThe walrus operator.\n",
			"pep-0008.md": "# Style Guide for Python Code\n\nIndent with four spaces.\n",
			"notes.md":    "# Assignment Expressions\n\nNotes on the operator.\n",
			"pep-0020.md": "# The Zen of Python\n\nBeautiful is better than ugly.\n",
		},
		"other": {"pep-0572.md": "# Assignment Expressions\n\nA copy elsewhere.\n"},
	})
	layer := ids["peps"]
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

// TestDocumentsHolding: a document holds a name when its path or its first
// 3,000 characters do, with anything but letters and digits allowed
// between the name's characters, in any case; every name must be held.
func TestDocumentsHolding(t *testing.T) {
	ctx := context.Background()
	c, ids := layersOf(t, map[string]map[string]string{"deals": {
		"glued.md":            "# Sponsorship\n\nBetween CANOPETROLEUM,INC and Boyd & Co.\n",
		"hyphen.md":           "# Supply\n\nThis agreement binds Cano-Petroleum Corp. and A.T.&T. Inc.\n",
		"boyd-agreement.md":   "# Lease\n\nThe tenant, Cano Petroleum, leases the yard.\n",
		"apart.md":            "# Other\n\nCanned oil or petroleum jelly.\n",
		"late.md":             "# Late\n\n" + strings.Repeat("filler words here. ", 200) + "Cano Petroleum and Boyd sign.\n",
		"regex-characters.md": "# Tricky\n\nA name such as c.no here.\n",
		"wildcard.md":         "# Wild\n\nA name such as cXno here.\n",
	}})
	layer := ids["deals"]
	holding := func(limit int, names ...string) []string {
		docs, err := c.DocumentsHolding(ctx, []int64{layer}, names, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range docs {
			out = append(out, d.File)
		}
		return out
	}
	for _, c := range []struct {
		names []string
		want  []string
	}{
		// Glued, hyphenated and spaced names; "boyd" through a path.
		{[]string{"cano", "petroleum"}, []string{"boyd-agreement.md", "glued.md", "hyphen.md"}},
		{[]string{"cano", "petroleum", "boyd"}, []string{"boyd-agreement.md", "glued.md"}},
		{[]string{"att"}, []string{"hyphen.md"}},
		// "Canned oil" holds "cannedoil" but not "canoil": letters between
		// do not count.
		{[]string{"canoil"}, nil},
		{[]string{"cannedoil", "jelly"}, []string{"apart.md"}},
		// A name's characters are not a pattern: "." is not any character.
		{[]string{"c.no"}, []string{"regex-characters.md"}},
		{[]string{"nosuchparty"}, nil},
	} {
		if got := holding(10, c.names...); !slices.Equal(got, c.want) {
			t.Errorf("documents holding %v: %v, want %v", c.names, got, c.want)
		}
	}
	if got := holding(1, "cano", "petroleum"); !slices.Equal(got, []string{"boyd-agreement.md"}) {
		t.Errorf("at most one: %v", got)
	}
}
