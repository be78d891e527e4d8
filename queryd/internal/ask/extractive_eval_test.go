package ask

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/chunker"
)

// TestSentenceRankingSciFact measures the offline sentence scorer's word
// part on SciFact's train claims: given the cited abstract, how often the
// sentence BM25 puts an evidence sentence first, against picking a sentence
// at random. SciFact numbers the sentences of its own split; the abstract
// is split here by the chunker, and a claim whose evidence index lies past
// the chunker's sentences is skipped. Where the two splits differ inside an
// abstract the indices are off, which can only lower the figure. It needs
// STRATA_SHARED_DIR and no database. Measured: 0.298 over 953 claims,
// random 0.126 (k1 0.9-2, b 0-0.75 all gave 0.30-0.31).
func TestSentenceRankingSciFact(t *testing.T) {
	dir := os.Getenv("STRATA_SHARED_DIR")
	if dir == "" {
		t.Skip("STRATA_SHARED_DIR is not set")
	}
	base := filepath.Join(dir, "bench", "scifact")
	corpus := map[string]string{}
	f, err := os.Open(filepath.Join(base, "corpus.jsonl"))
	if err != nil {
		t.Skipf("no SciFact corpus: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var d struct{ ID, Text string }
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		d.ID, _ = raw["_id"].(string)
		d.Text, _ = raw["text"].(string)
		corpus[d.ID] = d.Text
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	cf, err := os.Open(filepath.Join(base, "source", "claims_train.csv"))
	if err != nil {
		t.Skipf("no SciFact claims: %v", err)
	}
	defer cf.Close()
	rows, err := csv.NewReader(cf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var n, skipped int
	var hits, random float64
	for _, row := range rows[1:] {
		docID, evid := row[2], strings.Trim(row[4], "[]")
		if docID == "" || evid == "" {
			continue
		}
		text, ok := corpus[docID]
		if !ok {
			continue
		}
		var sents []string
		for _, s := range chunker.Sentences(text, 0, len(text)) {
			if !s.Heading {
				sents = append(sents, text[s.Start:s.End])
			}
		}
		want := map[int]bool{}
		top := 0
		for _, e := range strings.FieldsFunc(evid, func(r rune) bool { return r == ',' || r == ' ' }) {
			i, err := strconv.Atoi(strings.TrimSpace(e))
			if err != nil {
				t.Fatalf("evidence %q: %v", row[4], err)
			}
			want[i] = true
			top = max(top, i)
		}
		if top >= len(sents) || len(sents) < 2 {
			skipped++
			continue
		}
		scores := SentenceBM25(row[1], sents)
		best := 0
		for i, s := range scores {
			if s > scores[best] {
				best = i
			}
		}
		n++
		if want[best] {
			hits++
		}
		random += float64(len(want)) / float64(len(sents))
	}
	if n < 100 {
		t.Fatalf("only %d claims measured (%d skipped)", n, skipped)
	}
	got, chance := hits/float64(n), random/float64(n)
	t.Logf("sentence BM25, evidence sentence first given the cited abstract: %.3f over %d train claims (random %.3f; %d skipped)", got, n, chance, skipped)
	if got < 2*chance {
		t.Errorf("evidence first %.3f, under twice chance %.3f", got, chance)
	}
}
