package chunker

import (
	"sort"
	"strings"

	"github.com/stratakb/stratakb/schema"
)

// chunkTable cuts a table (schema.FormatTable), whose text holds one row per
// line: a chunk holds whole rows and never rows of two sheets. Each sheet
// (a section) is cut on its own; its heading and header row (the section's
// heading span) stay with the first rows after them, and a CSV file's first
// line, its header row, likewise. Rows are packed as paragraphs are: up to
// size bytes, ending at the gap whose content scores best, so inserting a
// row moves only the boundaries near it. A row longer than size is a chunk
// of its own.
func chunkTable(doc *schema.ParsedDoc, sections []schema.Section, size int) []schema.Chunk {
	text := doc.Text
	n := len(text)
	body := min(max(doc.BodyStart, 0), n)
	secs := append([]schema.Section(nil), sections...)
	sort.SliceStable(secs, func(i, j int) bool { return secs[i].Start < secs[j].Start })

	type block struct{ start, end, headEnd int }
	var blocks []block
	at := body
	for _, s := range secs {
		st, en := min(max(s.Start, at), n), min(max(s.End, 0), n)
		if st > at {
			blocks = append(blocks, block{at, st, -1})
		}
		if en <= st {
			continue
		}
		blocks = append(blocks, block{st, en, min(max(s.HeadingEnd, st), en)})
		at = en
	}
	if at < n {
		blocks = append(blocks, block{at, n, -1})
	}

	var spans [][2]int
	for _, b := range blocks {
		var atoms []atom
		for pos := b.start; pos < b.end; {
			le := strings.IndexByte(text[pos:b.end], '\n')
			next := b.end
			if le < 0 {
				le = b.end
			} else {
				le += pos
				next = le + 1
			}
			s, e := pos, le
			for e > s && isSpaceByte(text[e-1]) {
				e--
			}
			for s < e && isSpaceByte(text[s]) {
				s++
			}
			if e > s {
				a := atom{start: s, end: e, rank: rankPara, kind: atomPara, from: pos}
				if b.headEnd >= 0 {
					a.glue = s < b.headEnd
				} else if len(atoms) == 0 && len(secs) == 0 {
					a.glue = true // a CSV file's header row
				}
				atoms = append(atoms, a)
			}
			pos = next
		}
		if len(atoms) == 0 {
			continue
		}
		atoms[len(atoms)-1].glue = false
		spans = append(spans, pack(text, atoms, size)...)
	}
	return makeChunks(doc, sections, spans)
}
