package retrieve

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
)

// payments is a fixture layer for class 3 of issue 12: a code list and an
// error table where each code stands once among many, and documents that
// repeat the questions' generic words (reason code, credit transfer, status
// code, request). The standard's name, ISO 20022, is in every document.
var payments = map[string]string{
	"codes.md": "# Reason codes\n\nISO 20022 reason codes, one per row.\n\n| Code | Meaning |\n|---|---|\n" +
		"| AC01 | Account identifier incorrect or invalid |\n| AC04 | Account closed at the creditor bank |\n" +
		"| AC06 | Account blocked for the moment |\n| AG01 | Transaction forbidden on this kind of account |\n" +
		"| AM04 | Insufficient funds on the debtor side |\n| AM05 | Duplicate of an earlier instruction |\n" +
		"| BE05 | Unrecognised initiating party |\n| FF01 | Invalid file format |\n" +
		"| MD07 | Debtor deceased |\n| MS02 | Not specified, by the customer |\n| MS03 | Not specified, by the agent |\n" +
		"| NARR | Free text explains the cause |\n| RC01 | Bank identifier incorrect |\n| TM01 | Received after the cut-off time |\n",
	"errors.md": "# Gateway errors\n\nThe ISO 20022 gateway answers with these values.\n\n| Value | Meaning |\n|---|---|\n" +
		"| 400 | Malformed body |\n| 401 | Missing or expired token |\n| 403 | Token lacks the scope |\n" +
		"| 404 | Unknown payment identifier |\n| 409 | Same end-to-end identifier submitted twice |\n" +
		"| 422 | Schema valid but rules broken |\n| 429 | Too many calls per minute |\n| 503 | Maintenance window |\n",
	"transfer.md": "# Credit transfers\n\nUnder ISO 20022 a credit transfer that fails carries a reason code. " +
		"The reason code of a credit transfer tells the debtor why the credit transfer failed, and the reason code " +
		"decides whether the credit transfer may be sent again. What a reason code means for a credit transfer is " +
		"agreed in the scheme rulebook.\n",
	"returns.md": "# Returns\n\nA returned credit transfer names its reason code in the ISO 20022 return message. " +
		"Each reason code of a return means the credit transfer was not booked; the reason code is kept with the " +
		"credit transfer for audit.\n",
	"requests.md": "# Requests\n\nEvery request to the ISO 20022 gateway gets a status code. The status code of a " +
		"request tells the client what happened to the credit transfer request; a status code means success or " +
		"failure, and a failed request may be sent again after the status code says so.\n",
}

// ingestFixture writes the files to a folder, ingests them as one layer
// through the real jobs (bag-of-words vectors) and returns its layer.
func ingestFixture(t *testing.T, files map[string]string, layer jobs.Layer) (*store.Corpus, store.Layer) {
	t.Helper()
	pool, url := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	root := filepath.Join(t.TempDir(), layer.Name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	layer.Root = root
	ingesttest.Ingest(t, pool, layer, ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	st, err := store.OpenCorpus(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	layers, err := st.Layers(context.Background())
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v %v", layers, err)
	}
	return st, layers[0]
}

// TestCodesAreExactTerms: a question naming a letters-only code (NARR) or a
// three-digit status code (409) gets the one chunk holding it first, ahead
// of the chunks that repeat its generic words, and the standard's name
// found in every document gets no boost. With the code treated like any
// other exact term (CodeBoost 0) the generic chunks win, so the fixture
// reproduces the issue.
func TestCodesAreExactTerms(t *testing.T) {
	t.Parallel()
	st, layer := ingestFixture(t, payments, jobs.Layer{Name: "payments"})
	ctx := context.Background()
	eng := New(st, Options{Embedder: bow{}, KeywordSlots: 1})
	ids := []int64{layer.ID}
	chunkFile := func(id int64) string {
		h, err := st.Chunks(ctx, []int64{id})
		if err != nil {
			t.Fatal(err)
		}
		return h[id].File
	}
	for _, c := range []struct{ q, code, file string }{
		{"What does reason code NARR mean for a credit transfer under ISO 20022?", "NARR", "codes.md"},
		{"What does status code 409 mean for a credit transfer request?", "409", "errors.md"},
	} {
		def := DefaultParams()
		lex, err := eng.Query(Query{Text: c.q, TopK: 3, Params: &def}).Lexical(ctx, ids, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(lex.Hits) == 0 || chunkFile(lex.Hits[0].ChunkID) != c.file {
			t.Errorf("%q: the chunk holding %s (%s) should rank first, got %+v", c.q, c.code, c.file, lex.Hits)
		}
		found := false
		for i, term := range lex.Terms {
			switch term {
			case c.code:
				found = true
				if lex.Boosts[i] <= 0 {
					t.Errorf("%q: the rare code %s gets a boost, got %g", c.q, term, lex.Boosts[i])
				}
			case "ISO 20022":
				if lex.Boosts[i] != 0 {
					t.Errorf("%q: ISO 20022 is in every document: no boost, got %g", c.q, lex.Boosts[i])
				}
			}
		}
		if !found {
			t.Errorf("%q: %s should be an exact term, got %q", c.q, c.code, lex.Terms)
		}

		old := DefaultParams()
		old.CodeBoost = 0
		lexOld, err := eng.Query(Query{Text: c.q, TopK: 3, Params: &old}).Lexical(ctx, ids, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(lexOld.Hits) > 0 && chunkFile(lexOld.Hits[0].ChunkID) == c.file {
			t.Errorf("%q: without CodeBoost the generic chunks should win here (the fixture no longer shows the issue)", c.q)
		}

		// Hybrid: the keyword slot keeps the code's chunk in a top_k of 1
		// whatever the vector channel thinks.
		out, err := eng.Query(Query{Text: c.q, TopK: 1}).Search(ctx, []store.Layer{layer})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Candidates) != 1 || out.Candidates[0].File != c.file ||
			!strings.Contains(strings.Join(out.Candidates[0].ExactTerms, " "), c.code) {
			t.Errorf("%q: hybrid top 1 should be %s holding %s, got %+v", c.q, c.file, c.code, out.Candidates)
		}
		// The keyword slot alone does not do it: it keeps the best lexical
		// match, which without CodeBoost is a generic chunk.
		old.KeywordSlots = 1
		out, err = eng.Query(Query{Text: c.q, TopK: 1, Params: &old}).Search(ctx, []store.Layer{layer})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Candidates) == 1 && out.Candidates[0].File == c.file {
			t.Errorf("%q: without CodeBoost the slot should keep a generic chunk (the fixture no longer shows the issue)", c.q)
		}
	}
}
