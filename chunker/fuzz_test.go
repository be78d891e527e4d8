package chunker

import (
	"strings"
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

// FuzzChunkTable chunks arbitrary text as a table, its "Sheet: " lines
// making sheet sections (or, with sheets off, none, as for a CSV file): chunks
// are in order, hold whole lines, never cross a sheet boundary, cite their
// lines, and every non-blank line of the body is in exactly one chunk.
func FuzzChunkTable(f *testing.F) {
	f.Add("code | part\ncode: AC01 | part: bolt\n\ncode: AC02 | part: nut\n", uint16(40), uint16(0), true)
	f.Add("Sheet: A\nrow 1 (header) | x\nrow 2 | x: 1\n\nSheet: B\nrow 3 (header) | y\nrow 4 | y: 2\n", uint16(10), uint16(3), true)
	f.Fuzz(func(t *testing.T, text string, size, body uint16, sheets bool) {
		sz := 50 + int(size)%2951
		doc := &schema.ParsedDoc{Text: text, Format: schema.FormatTable, BodyStart: int(body) % (len(text) + 1)}
		var secs []schema.Section
		if sheets {
			for off := 0; off < len(text); {
				nl := len(text)
				if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
					nl = off + i
				}
				if len(text[off:nl]) >= 7 && text[off:off+7] == "Sheet: " {
					if k := len(secs); k > 0 {
						secs[k-1].End = off
					}
					secs = append(secs, schema.Section{Kind: schema.KindSheet, Path: text[off+7 : nl], Start: off, HeadingEnd: nl, End: len(text), Parent: -1, Level: 1})
				}
				off = nl + 1
			}
		}
		cs := Chunk(doc, secs, Options{Size: sz})
		covered := map[int]int{}
		prev := doc.BodyStart
		for _, c := range cs {
			if c.Start < prev || c.End <= c.Start || c.End > len(text) || text[c.Start:c.End] != c.Text {
				t.Fatalf("chunk %d span %d-%d bad (previous end %d, text %d bytes)", c.Ordinal, c.Start, c.End, prev, len(text))
			}
			prev = c.End
			for _, s := range secs {
				if c.Start < s.Start && c.End > s.Start {
					t.Fatalf("chunk %d (%d-%d) crosses into sheet %q at %d", c.Ordinal, c.Start, c.End, s.Path, s.Start)
				}
			}
			if c.LineStart != schema.LineOf(text, c.Start) || c.LineEnd != schema.LineOf(text, c.End-1) {
				t.Fatalf("chunk %d lines %d-%d wrong", c.Ordinal, c.LineStart, c.LineEnd)
			}
			for i := c.Start; i < c.End; i++ {
				if i == c.Start || text[i-1] == '\n' {
					covered[lineStart(text, i)]++
				}
			}
		}
		for off := 0; off < len(text); {
			nl := len(text)
			if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
				nl = off + i
			}
			line := text[off:nl]
			if nl > doc.BodyStart && off >= lineStart(text, doc.BodyStart) && !isBlank(line) && off >= doc.BodyStart && covered[off] != 1 {
				t.Fatalf("line at %d (%q) is in %d chunks", off, line, covered[off])
			}
			off = nl + 1
		}
	})
}

// lineStart is the offset of the start of the line holding off.
func lineStart(text string, off int) int {
	for off > 0 && text[off-1] != '\n' {
		off--
	}
	return off
}
