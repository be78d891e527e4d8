package chunker

import (
	"testing"

	"github.com/stratakb/stratakb/schema"
)

func fuzzSeeds(f *testing.F, add func(string)) {
	add("")
	add("One. Two! Three? (Four.) \"Five.\"\n\nSix e.g. seven No. 8.")
	add("# Title\n\n## 1 Scope\n\n### 1.1 Who\n\nEveryone.\n\n2 Terms\n=======\n\n- a\n- b\n\n1. x\n2. y\n")
	add("---\ntitle: t\n---\nBody 7.2 text v1.2 and 1.000,00.\nwrapped line\n\n```\ncode\n```\n")
	add("=====\nTitle\n=====\n\nA line without end marks\nanother line\n\n\f\fPage two. \u00a0 これは。\r\n\r\nEnd")
	add("Article 12\n\nAnnex II\n\n§ 4 Rules\n\n7(2)(b) Notice\n\nIV. Part\n\nA. Part")
}

// FuzzChunk chunks arbitrary text at sizes from 50 to 3000, with a random
// body start, the test heading detector's sections and up to three pages,
// and checks every invariant.
func FuzzChunk(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s, uint16(100), uint16(0), uint8(0)) })
	f.Add("---\na: b\n---\n"+prose("x", 40), uint16(2000), uint16(14), uint8(3))
	f.Fuzz(func(t *testing.T, text string, size, body uint16, pages uint8) {
		sz := 50 + int(size)%2951
		doc := &schema.ParsedDoc{Text: text, BodyStart: int(body) % (len(text) + 1)}
		if n := int(pages) % 4; n > 0 {
			for i := range n {
				doc.Pages = append(doc.Pages, schema.Page{Number: i + 1, Start: i * len(text) / n, End: (i + 1) * len(text) / n})
			}
		}
		secs := testSections(text, doc.BodyStart)
		for _, ss := range [][]schema.Section{secs, nil} {
			cs := Chunk(doc, ss, Options{Size: sz})
			if err := invariantErr(doc, ss, sz, cs); err != nil {
				t.Fatalf("size %d body %d pages %d: %v", sz, doc.BodyStart, len(doc.Pages), err)
			}
		}
	})
}

// FuzzSentences splits arbitrary text over an arbitrary range and checks
// that spans stay in the range, in order, trimmed, cover every non-space
// byte (with separator lines), and that SentenceAt finds each sentence of
// the whole text again; and splits it as a draft with DraftSentences.
func FuzzSentences(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s, uint16(0), uint16(len(s))) })
	f.Fuzz(func(t *testing.T, text string, a, b uint16) {
		start, end := int(a)%(len(text)+1), int(b)%(len(text)+1)
		if start > end {
			start, end = end, start
		}
		if err := spansErr(text, start, end, Sentences(text, start, end)); err != nil {
			t.Fatalf("range [%d,%d): %v", start, end, err)
		}
		for _, s := range Sentences(text, 0, len(text)) {
			if got := SentenceAt(text, s.Start); got != s {
				t.Fatalf("SentenceAt(%d) = %v, want %v (%q)", s.Start, got, s, text[s.Start:s.End])
			}
		}
		if err := draftSpansErr(text, DraftSentences(text)); err != nil {
			t.Fatalf("draft: %v", err)
		}
		for _, s := range Touching(text, start, end) {
			if s.Start < 0 || s.End > len(text) || s.Start >= s.End {
				t.Fatalf("Touching(%d,%d) gave %v", start, end, s)
			}
		}
	})
}
