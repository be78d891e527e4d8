package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// The fixture: a layer with a chunk size of 200 characters, whose
// document is mostly two-byte characters, and a long section.
const notice = "# Kündigung\n\n## 7 Fristen\n\n### 7.2 Frist\n\nDie Kündigung ist mit einer Frist von 30 Tagen möglich. Zahlungen gehen an DE89 3704 0044 0532 0130 00.\n\n" +
	"## 8 Gebühren\n\n"

func TestVerifyService(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	root := t.TempDir()
	long := strings.Repeat("Für jede Übertragung fällt eine Gebühr von EUR 1.000,00 an. ", 12) // ~720 characters, ~760 bytes
	body := notice + long + "\n"
	if err := os.WriteFile(filepath.Join(root, "agb.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "agb", Root: root, ChunkSize: 200}, ingesttest.Options{})
	qurl := dbtest.QuerydURL(t, url)
	st, err := store.OpenCorpus(context.Background(), qurl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	ledger, err := store.OpenLedger(context.Background(), qurl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ledger.Close)
	var doc int64
	var secStart, secEnd int
	if err := pool.QueryRow(context.Background(), `SELECT d.id, s.start_off, s.end_off FROM strata.documents d
		JOIN strata.sections s ON s.document_id = d.id WHERE s.number = '8'`).Scan(&doc, &secStart, &secEnd); err != nil {
		t.Fatal(err)
	}
	at := func(s string) (int, int) {
		i := strings.Index(body, s)
		if i < 0 {
			t.Fatalf("%q not in the fixture", s)
		}
		return i, i + len(s)
	}
	ref := func(a, b int) string { return schema.Ref{DocumentID: doc, Start: a, End: b}.String() }
	v := New(Options{Spans: st, Receipts: ledger, Budget: 1500})
	receipt := func(id string) *ReceiptResponse {
		t.Helper()
		r, err := v.GetReceipt(context.Background(), ReceiptRequest{ReceiptID: id})
		if err != nil {
			t.Fatalf("receipt %s: %v", id, err)
		}
		return r
	}
	run := func(draft string, refs ...string) *Response {
		t.Helper()
		r, err := v.Verify(context.Background(), Request{Draft: draft, Passages: refs})
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		return r
	}

	a, b := at("Die Kündigung ist mit einer Frist von 30 Tagen möglich.")
	r := run(`Die Frist beträgt 30 Tage [S1]; "mit einer Frist von 30 Tagen" [S1].`, ref(a, b))
	if r.Status != Verified || r.ReceiptID == "" {
		t.Fatalf("verified: %+v", r)
	}
	// The receipt holds what the server read, and the span still reads the
	// same.
	rc := receipt(r.ReceiptID)
	if rc.Status != Verified || len(rc.Passages) != 1 || rc.Passages[0].Text != body[a:b] || !rc.Passages[0].Unchanged ||
		rc.Passages[0].File != "agb.md" || rc.Checked != 3 {
		t.Fatalf("receipt %+v", rc)
	}
	// It records each quote and fact checked, in the draft's order, where
	// it matched in the passage (bytes of two-byte-heavy text).
	type check struct{ kind, text, passage, matched string }
	var got []check
	for _, c := range rc.Checks {
		if c.Start < 0 || c.End > len(rc.Passages[0].Text) || rc.Passages[0].Text[c.Start:c.End] != c.Matched || body[a+c.Start:a+c.End] != c.Matched {
			t.Errorf("check %+v: the passage reads %q there", c, body[a+c.Start:a+c.End])
		}
		got = append(got, check{c.Kind, c.Text, c.Passage, c.Matched})
	}
	// The quote's number is checked as a fact too (issue 27, item 5).
	if want := []check{{KindNumber, "30", "S1", "30"}, {"quote", "mit einer Frist von 30 Tagen", "S1", "mit einer Frist von 30 Tagen"},
		{KindNumber, "30", "S1", "30"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("receipt checks %+v, want %+v", got, want)
	}
	if rc.Checks[0].Start != len("Die Kündigung ist mit einer Frist von ") || rc.Checks[0].Sentence != 1 {
		t.Errorf("the 30 at bytes %d..%d of sentence %d", rc.Checks[0].Start, rc.Checks[0].End, rc.Checks[0].Sentence)
	}
	for _, id := range []string{"rcpt_1", "nope"} {
		if _, err := v.GetReceipt(context.Background(), ReceiptRequest{ReceiptID: id}); qerr.KindOf(err) != qerr.Invalid {
			t.Errorf("receipt id %q: %v, want invalid", id, err)
		}
	}
	if _, err := v.GetReceipt(context.Background(), ReceiptRequest{ReceiptID: "rcpt_" + strings.Repeat("0", 32)}); qerr.KindOf(err) != qerr.NotFound {
		t.Errorf("unknown receipt: %v, want not found", err)
	}
	if r := run("Die Frist beträgt 13 Tage [S1].", ref(a, b)); r.Status != Flagged || r.ReceiptID != "" {
		t.Errorf("13 days: %+v", r)
	}

	// Limits are in characters although refs are bytes: 380 two-byte-heavy
	// characters (over 400 bytes) are within twice the chunk size.
	c0 := strings.Index(body, long)
	end := c0
	for n := 0; n < 380; n++ {
		_, size := decodeRune(body[end:])
		end += size
	}
	if end-c0 <= 400 {
		t.Fatalf("fixture: %d bytes for 380 characters, want over 400", end-c0)
	}
	if r := run("Die Gebühr beträgt EUR 1.000,00 [S1].", ref(c0, end)); len(r.PassageFlags) != 0 || r.Status != Verified {
		t.Errorf("380 characters in %d bytes: %+v", end-c0, r)
	}
	// Over twice the chunk size from a point that is no section's start.
	if r := run("Die Gebühr beträgt EUR 1.000,00 [S1].", ref(c0, c0+len(long))); len(r.PassageFlags) != 1 || r.PassageFlags[0].Problem != RefTooWide {
		t.Errorf("720 characters: %+v", r)
	}
	// The same length from the section's start is an exact clause: allowed.
	if r := run("Die Gebühr beträgt EUR 1.000,00 [S1].", ref(secStart, secEnd)); len(r.PassageFlags) != 0 {
		t.Errorf("exact clause span: %+v", r.PassageFlags)
	}
	// A ref inside a character, past the end, and of a document not held.
	ue := strings.Index(body, "ü") + 1
	for _, c := range []struct {
		ref     string
		problem string
	}{
		{ref(ue, ue+10), RefSplitsChar},
		{ref(len(body)-5, len(body)+20), RefOutside},
		{schema.Ref{DocumentID: doc + 999, Start: 0, End: 5}.String(), RefNotFound},
	} {
		r := run("Die Frist beträgt 30 Tage [S1].", c.ref)
		if r.Status != Flagged || len(r.PassageFlags) != 1 || r.PassageFlags[0].Problem != c.problem {
			t.Errorf("%s: %+v, want %s", c.ref, r, c.problem)
		}
	}
	// Malformed refs and drafts are argument errors.
	for _, req := range []Request{{Draft: "x [S1]", Passages: []string{"nope"}}, {Draft: "", Passages: []string{ref(a, b)}}, {Draft: "x", Passages: nil}} {
		if _, err := v.Verify(context.Background(), req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
	// The receipt's draft is scrubbed.
	ia, ib := at("Zahlungen gehen an DE89 3704 0044 0532 0130 00.")
	r = run("Zahlungen gehen an DE89 3704 0044 0532 0130 00 [S1]; die Frist ist 30 Tage [S2].", ref(ia, ib), ref(a, b))
	if r.ReceiptID == "" {
		t.Fatalf("IBAN draft not verified: %+v", r)
	}
	rc = receipt(r.ReceiptID)
	if got := rc.Draft; strings.Contains(got, "3704") || !strings.Contains(got, "Frist ist 30 Tage") {
		t.Errorf("receipt draft not scrubbed: %q", got)
	}
	// So is the IBAN the draft states as a fact; where it matched is the
	// passage's own text, which the receipt holds as read.
	if len(rc.Checks) != 2 || rc.Checks[0].Kind != KindCode || rc.Checks[0].Text != "[IBAN]" || rc.Checks[0].Passage != "S1" ||
		rc.Checks[0].Matched != "DE89 3704 0044 0532 0130 00" || rc.Passages[0].Text[rc.Checks[0].Start:rc.Checks[0].End] != rc.Checks[0].Matched ||
		rc.Checks[1].Text != "30" || rc.Checks[1].Passage != "S2" || rc.Checks[1].Sentence != 1 {
		t.Errorf("receipt checks of the IBAN draft: %+v", rc.Checks)
	}
	// Kept raw when raw queries are.
	raw := New(Options{Spans: st, Receipts: ledger, RawQueries: true})
	r, err = raw.Verify(context.Background(), Request{Draft: "Zahlungen gehen an DE89 3704 0044 0532 0130 00 [S1].", Passages: []string{ref(ia, ib)}})
	if err != nil || r.ReceiptID == "" {
		t.Fatalf("raw: %+v %v", r, err)
	}
	if rc := receipt(r.ReceiptID); len(rc.Checks) != 1 || rc.Checks[0].Text != "DE89 3704 0044 0532 0130 00" {
		t.Errorf("raw receipt checks: %+v", rc.Checks)
	}

	// A receipt stored before checks were kept (no checks column written)
	// reads with none.
	old := "rcpt_" + strings.Repeat("ab", 16)
	passages := fmt.Sprintf(`[{"id": "S1", "ref": %q, "layer": "agb", "file": "agb.md", "text": %q, "sha256": ""}]`, ref(a, b), body[a:b])
	if _, err := pool.Exec(context.Background(), `INSERT INTO strata.receipts (id, tool, status, draft, passages, checked)
		VALUES ($1, 'strata_verify', 'verified', 'Die Frist beträgt 30 Tage [S1].', $2::jsonb, 1)`, old, passages); err != nil {
		t.Fatal(err)
	}
	rc = receipt(old)
	if rc.Checks == nil || len(rc.Checks) != 0 || rc.Checked != 1 || len(rc.Passages) != 1 || rc.Passages[0].Unchanged {
		t.Errorf("old receipt: %+v", rc)
	}
	if b, _ := json.Marshal(rc); !strings.Contains(string(b), `"checks":[]`) {
		t.Errorf("old receipt JSON has no empty checks: %s", b)
	}
}

func decodeRune(s string) (rune, int) {
	for i, r := range s {
		if i == 0 {
			return r, len(string(r))
		}
	}
	return 0, 0
}
