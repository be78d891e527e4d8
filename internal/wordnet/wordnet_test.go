package wordnet

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A tiny database in WordNet's format: offsets are the byte offsets of the
// data lines.
func writeDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	l1 := "00000000 03 n 02 car 0 auto 0 000 | a motor vehicle\n"
	l2 := "00000052 03 n 02 car 1 railcar 0 000 | a wheeled vehicle on rails\n"
	noun := l1 + l2
	if len(l1) != 52 {
		t.Fatalf("first line is %d bytes", len(l1))
	}
	files := map[string]string{
		"index.noun": "  1 licence text\ncar n 2 0 2 1 00000000 00000052  \nauto n 1 0 1 0 00000000  \nrailcar n 1 0 1 0 00000052  \n",
		"data.noun":  noun,
		"index.verb": "end v 1 0 1 0 00000000  \nterminate v 1 0 1 0 00000000  \n",
		"data.verb":  "00000000 30 v 03 end 0 terminate 0 stop_working 0 000 | bring to an end\n",
		"index.adj":  "", "data.adj": "", "index.adv": "", "data.adv": "",
		"verb.exc": "ended end\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSynonyms(t *testing.T) {
	db, err := Load(writeDB(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		word  string
		first bool
		want  []string
	}{
		{"car", true, []string{"auto"}},
		{"car", false, []string{"auto", "railcar"}},
		{"cars", false, []string{"auto", "railcar"}}, // noun suffix rule
		{"Ended", true, []string{"terminate"}},       // exception list; stop_working is a collocation
		{"ending", true, []string{"terminate"}},      // verb suffix rule
		{"zebra", false, nil},
	} {
		if got := db.Synonyms(c.word, c.first); !slices.Equal(got, c.want) {
			t.Errorf("Synonyms(%q, %v) = %q, want %q", c.word, c.first, got, c.want)
		}
	}
}

// TestDebianDatabase reads the real database when it is installed.
func TestDebianDatabase(t *testing.T) {
	if _, err := os.Stat(filepath.Join(DefaultDir, "index.noun")); err != nil {
		t.Skip("wordnet-base is not installed")
	}
	db, err := Load(DefaultDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Synonyms("terminate", false); !slices.Contains(got, "end") {
		t.Errorf("terminate: %q, want end among them", got)
	}
	if got := db.Synonyms("car", true); !slices.Contains(got, "automobile") {
		t.Errorf("car, first sense: %q, want automobile", got)
	}
}
