package ask

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

func TestNamesPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		text string
		want bool
	}{
		{"HotApp", "entered into by HOTAPP International", true},
		{"HotApp", "Hot App Ltd. (\"Developer\")", true},
		// The pattern finds candidates only; the folded text decides.
		{"HotApp", "a hot application", false},
		{"PEP 8", "see pep-0008 for the style", true},
		{"pacs.008", "the PACS 8 message", true},
		{"AC04", "code AC-04 applies", true},
	} {
		key := fold(c.name)
		re := regexp.MustCompile(`(?i)` + namesPattern(key, false))
		matched := re.MatchString(c.text)
		if c.want && !matched {
			t.Errorf("%q in %q: the pattern %s misses it", c.name, c.text, re)
		}
		if got := matched && foldText(c.text).contains(key); got != c.want {
			t.Errorf("%q in %q: %v, want %v", c.name, c.text, got, c.want)
		}
		// The SQL form differs only in how it writes the gap.
		if sql := namesPattern(key, true); strings.Count(sql, "[^[:alnum:]]*") != strings.Count(re.String(), `[^\pL\pN]*`) {
			t.Errorf("%q: SQL pattern %s does not match the Go one %s", c.name, sql, re)
		}
	}
}

func TestNamesWindow(t *testing.T) {
	t.Parallel()
	text := "Exhibit 10.1\n\n   SUPPLY AGREEMENT made this day between UmbrellaCorp Ltd and Initech Corp, " +
		strings.Repeat("for the supply of parts and services as set out below, ", 10) + "\nSigned."
	c := namesCandidate{hit: store.Hit{Text: text, DocumentID: 7, LineStart: 5, LineEnd: 7, Start: 100}, at: strings.Index(text, "UmbrellaCorp")}
	if s, e, ok := c.window(len(text) + 10); !ok || s != 0 || e != len(text) {
		t.Errorf("room for all: %d %d %v", s, e, ok)
	}
	if _, _, ok := c.window(minNamesChars - 1); ok {
		t.Errorf("under %d characters of room: a window", minNamesChars)
	}
	s, e, ok := c.window(250)
	if !ok {
		t.Fatal("no window in 250 characters")
	}
	part := text[s:e]
	if !strings.HasPrefix(part, "SUPPLY AGREEMENT") || len([]rune(part)) > 250 || !strings.Contains(part, "UmbrellaCorp") {
		t.Errorf("window %q", part)
	}
	p := c.passage("S3", s, e, store.DocInfo{})
	if p.Citation.Lines != "7-7" || p.Match != MatchNames || p.Text != part {
		t.Errorf("passage %+v", p)
	}
	r, err := schema.ParseRef(p.Ref)
	if err != nil || r.Start != 100+s || r.End != 100+e {
		t.Errorf("ref %s for window %d-%d", p.Ref, s, e)
	}

	// A preamble on one long line, the name far into it: the window
	// starts within the line, at a word, and holds the name.
	long := "Exhibit 10.22   DEVELOPMENT AGREEMENT   This Agreement " + strings.Repeat("is entered into and effective as of the date ", 8) +
		"by and between Initech Corp and HotWidget Ltd, each a party. " + strings.Repeat("The parties agree as follows. ", 6)
	c = namesCandidate{hit: store.Hit{Text: long, LineStart: 1, LineEnd: 1}, at: strings.Index(long, "Initech")}
	s, e, ok = c.window(240)
	if !ok {
		t.Fatal("no window in 240 characters of a long line")
	}
	part = long[s:e]
	if !strings.Contains(part, "Initech Corp and HotWidget") || len([]rune(part)) > 240 || s == 0 || long[s-1] != ' ' {
		t.Errorf("long line: window %d-%d %q", s, e, part)
	}
	if p := c.passage("S2", s, e, store.DocInfo{}); p.Citation.Lines != "1-1" {
		t.Errorf("long line: lines %s", p.Citation.Lines)
	}
}

// agreements are two supply agreements whose assignment clauses read
// alike; the parties are named only in each preamble, far from the clause.
var agreements = map[string]string{
	"globex-supply.md": "# Supply Agreement\n\nThis supply agreement is made between HotWidget Limited and Globex Trading.\n\n" +
		"## 1 Scope\n\n" + strings.Repeat("The seller delivers the parts listed in the schedule to the buyer's warehouse. ", 4) + "\n\n" +
		"## 9 Assignment\n\nNeither party may assign or transfer this agreement without the written consent of the other party.\n",
	"initech-supply.md": "# Supply Agreement\n\nThis supply agreement is made between Initech Corp and UmbrellaCorp.\n\n" +
		"## 1 Scope\n\n" + strings.Repeat("The seller delivers the parts listed in the schedule to the buyer's warehouse. ", 4) + "\n\n" +
		"## 9 Assignment\n\nNeither party may assign this agreement without consent.\n",
	// A long report: one name in its first chunk, one past the chunks the
	// names search reads.
	"long-report.md": "# Station report\n\nNearStartCorp runs the stations.\n\n" +
		strings.Repeat("The weather station readings for the northern valley region are listed in the table below this line.\n\n", 2*store.NamesScanChunks) +
		"FarEndCorp audits the readings.\n",
}

// TestNamesSelectTheDocument: a question that names a party whose name
// only the preamble holds gets, in a grounded answer, the part of the
// preamble that names it as a passage of its own, and, in an extractive
// answer, sentences from the named party's agreement, not from the other
// agreement whose clause shares more of the question's words.
func TestNamesSelectTheDocument(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	root := writeFolder(t, "agreements", agreements)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "agreements", Root: root, ChunkSize: 200},
		ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})})
	ctx := context.Background()
	st, err := store.OpenCorpus(ctx, dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	led, err := store.OpenLedger(ctx, dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(led.Close)
	a := New(Options{Engine: retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1}), Docs: st,
		Reranker: Texts{overlap{}}, Receipts: led})
	body := func(ref string) string {
		t.Helper()
		r, err := schema.ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		if err := pool.QueryRow(ctx, `SELECT substring(convert_to(body, 'UTF8') FROM $2::int + 1 FOR $3::int - $2::int) FROM strata.documents WHERE id = $1`,
			r.DocumentID, r.Start, r.End).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const question = "May UmbrellaCorp assign or transfer the agreement without written consent?"

	t.Run("ScanBound", func(t *testing.T) {
		var id int64
		var chunks int
		if err := pool.QueryRow(ctx, `SELECT d.id, count(*) FROM strata.documents d JOIN strata.chunks c ON c.document_id = d.id
			WHERE d.path = 'long-report.md' GROUP BY d.id`).Scan(&id, &chunks); err != nil {
			t.Fatal(err)
		}
		if chunks <= store.NamesScanChunks {
			t.Fatalf("the report has %d chunks, want more than %d", chunks, store.NamesScanChunks)
		}
		for name, want := range map[string]int{"NearStartCorp": 1, "FarEndCorp": 0} {
			hits, err := st.ChunksMatching(ctx, []int64{id}, []string{namesPattern(fold(name), true)}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != want {
				t.Errorf("%s: %d chunks, want %d", name, len(hits), want)
			}
		}
	})

	t.Run("Grounded", func(t *testing.T) {
		r := ask(t, a, Request{Question: question, Layers: []string{"agreements"}, TopK: 2, ResponseFormat: FormatDetailed})
		var names *Passage
		for i, p := range r.Passages {
			if p.Match == MatchNames {
				names = &r.Passages[i]
			}
		}
		if names == nil {
			t.Fatalf("no names passage: %s %q, passages %q", r.AnswerStatus, r.Notes, files(r))
		}
		if names.Citation.File != "initech-supply.md" || !strings.Contains(names.Text, "UmbrellaCorp") {
			t.Errorf("names passage %+v", names)
		}
		if got := body(names.Ref); got != names.Text {
			t.Errorf("names passage text %q, the stored span is %q", names.Text, got)
		}
		if r.AnswerStatus == string(NotFound) {
			t.Errorf("not_found although the name is in a returned passage: %q", r.Notes)
		}
		if !strings.Contains(strings.Join(r.Notes, " "), `"UmbrellaCorp" is named in `+names.ID) {
			t.Errorf("notes %q", r.Notes)
		}
		// The note says which passages come from the named agreement, told
		// apart from the other agreement's passage ranked with them.
		var same, other []string
		for _, p := range r.Passages {
			switch {
			case p.Match == MatchNames:
			case p.Citation.File == "initech-supply.md":
				same = append(same, p.ID)
			default:
				other = append(other, p.ID)
			}
		}
		if len(same) != 1 || len(other) == 0 {
			t.Fatalf("passages %q: want one of initech-supply.md besides the names passage and one of another file", files(r))
		}
		if want := "from the document " + same[0] + " comes from."; !strings.Contains(strings.Join(r.Notes, " "), want) {
			t.Errorf("notes %q, want %q", r.Notes, want)
		}
	})

	t.Run("WithinTheBudget", func(t *testing.T) {
		// Over a range of budgets, the answer with its names passage stays
		// within the budget and keeps the first passage; at some budget a
		// weaker passage gives way to the names passage.
		full := ask(t, a, Request{Question: question, Layers: []string{"agreements"}, TopK: 2})
		gaveWay := false
		for budget := 40; budget <= 400; budget += 10 {
			b := New(Options{Engine: a.opt.Engine, Docs: st, Reranker: Texts{overlap{}}, Budget: budget})
			r := ask(t, b, Request{Question: question, Layers: []string{"agreements"}, TopK: 2})
			tokens, ordinary, names := 0, 0, 0
			for _, p := range r.Passages {
				tokens += Tokens(p.Text) + (overhead(p.ID, p.Ref, p.Citation)+CharsPerToken-1)/CharsPerToken
				if p.Match == MatchNames {
					names++
				} else {
					ordinary++
				}
			}
			if len(r.Passages) == 0 || r.Passages[0].Ref != full.Passages[0].Ref {
				t.Fatalf("budget %d: the first passage changed: %+v", budget, r.Passages)
			}
			if len(r.Passages) > 1 && tokens > budget {
				t.Errorf("budget %d: %d tokens handed back", budget, tokens)
			}
			if names == 1 && ordinary < len(full.Passages)-1 {
				gaveWay = true
			}
		}
		if !gaveWay {
			t.Errorf("no budget made a passage give way to the names passage")
		}
	})

	t.Run("NameNowhere", func(t *testing.T) {
		r := ask(t, a, Request{Question: "May WayneCorp assign or transfer the agreement without written consent?",
			Layers: []string{"agreements"}, TopK: 2, ResponseFormat: FormatDetailed})
		for _, p := range r.Passages {
			if p.Match == MatchNames {
				t.Errorf("a names passage for a name no document holds: %+v", p)
			}
		}
		if r.AnswerStatus != string(NotFound) || !strings.Contains(strings.Join(r.Notes, " "), `"WayneCorp"`) {
			t.Errorf("WayneCorp: %s %q", r.AnswerStatus, r.Notes)
		}
	})

	t.Run("Extractive", func(t *testing.T) {
		r := ask(t, a, Request{Question: question, Layers: []string{"agreements"}, Mode: ModeExtractive, ResponseFormat: FormatDetailed})
		if len(r.Answer) == 0 {
			t.Fatalf("no sentences: %s %q", r.AnswerStatus, r.Notes)
		}
		byID := map[string]Passage{}
		for _, p := range r.Passages {
			byID[p.ID] = p
		}
		for _, s := range r.Answer {
			if f := byID[s.Passage].Citation.File; f != "initech-supply.md" {
				t.Errorf("sentence %q from %s, want the named party's agreement", s.Text, f)
			}
		}
		if r.AnswerStatus == string(NotFound) {
			t.Errorf("not_found: %q", r.Notes)
		}
	})
}

func TestFromDocument(t *testing.T) {
	t.Parallel()
	ref := func(doc int64) string { return schema.Ref{DocumentID: doc, Start: 0, End: 10}.String() }
	ps := []Passage{{ID: "S1", Ref: ref(7)}, {ID: "S2", Ref: ref(3)}, {ID: "S3", Ref: ref(7)}, {ID: "S4", Ref: ref(7)}, {ID: "S5", Ref: ref(5)}}
	for _, c := range []struct {
		doc  int64
		n    int
		want string
	}{
		{9, 5, "a document no other returned passage comes from"},
		{3, 5, "the document S2 comes from"},
		{7, 3, "the document S1 and S3 come from"},
		{7, 5, "the document S1, S3 and S4 come from"},
	} {
		if got := fromDocument(ps[:c.n], c.doc); got != c.want {
			t.Errorf("document %d of %d passages: %q, want %q", c.doc, c.n, got, c.want)
		}
	}
}

// TestNamesPassageCap: the names passage never takes an answer past
// MaxPassages. With 50 passages the weakest gives way to it; when none
// may, it is left out.
func TestNamesPassageCap(t *testing.T) {
	t.Parallel()
	const q = "What does the agreement with UmbrellaCorp say about notice?"
	hit := store.Hit{DocumentID: 1, ChunkID: 99, Start: 0, End: 63, LineStart: 1, LineEnd: 1, File: "supply.md", Layer: "contracts",
		Text: "This supply agreement is made between UmbrellaCorp and Initech."}
	full := func() *Response {
		r := &Response{}
		for i := range MaxPassages {
			r.Passages = append(r.Passages, Passage{ID: "S" + strconv.Itoa(i+1),
				Ref: schema.Ref{DocumentID: 1, Start: 100 + i, End: 101 + i}.String(), Text: "notice"})
		}
		return r
	}
	for _, yield := range []bool{true, false} {
		resp := full()
		gaveWay := 0
		giveWay := func() bool {
			if !yield {
				return false
			}
			gaveWay++
			resp.Passages = resp.Passages[:len(resp.Passages)-1]
			return true
		}
		n := len(resp.Passages)
		nextID := func() string { n++; return "S" + strconv.Itoa(n) }
		chunk, note, err := (&Asker{}).addNamesPassage(context.Background(), Names(q), resp, passageSources(resp.Passages),
			[]store.Hit{hit}, []int64{1}, map[int64]bool{}, map[int64]store.DocInfo{},
			func() int { return 100000 }, giveWay, nextID)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Passages) > MaxPassages {
			t.Errorf("may give way %v: %d passages, at most %d", yield, len(resp.Passages), MaxPassages)
		}
		last := resp.Passages[len(resp.Passages)-1]
		if yield && (chunk != 99 || gaveWay != 1 || last.Match != MatchNames || !strings.Contains(note, "UmbrellaCorp")) {
			t.Errorf("one may give way: chunk %d, %d gave way, last %+v, note %q", chunk, gaveWay, last, note)
		}
		if !yield && (chunk != 0 || note != "" || last.Match == MatchNames) {
			t.Errorf("none may give way: chunk %d, note %q, last %+v", chunk, note, last)
		}
	}
}
