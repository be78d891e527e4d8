package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// TestVerifyChangedSpan (issue 27, item 6): a ref handed out with the hash
// of its text names a span that was re-ingested with other words since.
// strata_verify flags the passage as changed and does not tell the client
// that the draft's correct quote is not in it; a ref without a hash, as
// refs were before, is checked as it always was.
func TestVerifyChangedSpan(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	root := t.TempDir()
	const before = "# Fristen\n\nDie Kündigung ist mit einer Frist von 30 Tagen möglich.\n"
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(root, "agb.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		ingesttest.Ingest(t, pool, jobs.Layer{Name: "agb", Root: root, ChunkSize: 200}, ingesttest.Options{})
	}
	write(before)
	st, err := store.OpenCorpus(context.Background(), dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	var doc int64
	if err := pool.QueryRow(context.Background(), `SELECT id FROM strata.documents`).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	const sentence = "Die Kündigung ist mit einer Frist von 30 Tagen möglich."
	a := strings.Index(before, sentence)
	span := schema.Ref{DocumentID: doc, Start: a, End: a + len(sentence)}
	hashed, plain := span.WithText(sentence).String(), span.String()
	v := New(Options{Spans: st})
	const draft = `Die Frist beträgt "30 Tagen" [S1].`
	run := func(ref string) *Response {
		t.Helper()
		r, err := v.Verify(context.Background(), Request{Draft: draft, Passages: []string{ref}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(hashed); r.Status != Verified || len(r.PassageFlags) != 0 {
		t.Fatalf("unchanged: %s %+v %+v", r.Status, r.PassageFlags, r.Flags)
	}

	// The same bytes now say 60 days.
	write(strings.Replace(before, "30 Tagen", "60 Tagen", 1))
	r := run(hashed)
	if r.Status != Flagged || len(r.PassageFlags) != 1 || r.PassageFlags[0].Problem != RefChanged {
		t.Fatalf("changed: %s, passage flags %+v", r.Status, r.PassageFlags)
	}
	if len(r.Flags) != 0 {
		t.Errorf("the draft's quote is flagged against the new text: %+v", r.Flags)
	}
	// A ref without a hash is checked against the text as it is.
	old := run(plain)
	if len(old.PassageFlags) != 0 || len(old.Flags) == 0 {
		t.Errorf("a plain ref: passage flags %+v, flags %+v; want the quote flagged", old.PassageFlags, old.Flags)
	}
	if _, err := schema.ParseRef(hashed + "x"); err == nil {
		t.Errorf("a ref with a malformed hash parses")
	}
}
