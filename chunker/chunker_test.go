package chunker

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

// section builds a section whose heading is the line starting with head.
func section(text, head, path string, level, parent int) schema.Section {
	start := strings.Index(text, head)
	if start < 0 {
		panic("no heading " + head)
	}
	he := start + strings.IndexByte(text[start:]+"\n", '\n')
	return schema.Section{Title: head, Kind: schema.KindHeading, Level: level, Start: start, HeadingEnd: he, End: len(text), Path: path, Parent: parent}
}

// closeSections sets each section's End to the start of the next section
// at the same or a higher level.
func closeSections(secs []schema.Section) {
	for i := range secs {
		for j := i + 1; j < len(secs); j++ {
			if secs[j].Level <= secs[i].Level {
				secs[i].End = secs[j].Start
				break
			}
		}
	}
}

// prose makes n distinct sentences of about 60 bytes.
func prose(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "Sentence %d of %s says something worth reading here.", i+1, tag)
	}
	return b.String()
}

// holds reports whether one chunk holds s.
func holds(cs []schema.Chunk, s string) bool {
	for _, c := range cs {
		if strings.Contains(c.Text, s) {
			return true
		}
	}
	return false
}

func texts(cs []schema.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

func TestChunkFrontMatterAndBlankText(t *testing.T) {
	text := "---\ntitle: A policy\ndate: 2026-01-01\n---\n\n\n   \nBody starts here.\n\n\n"
	doc := &schema.ParsedDoc{Text: text, BodyStart: strings.Index(text, "\n\n")}
	cs := Chunk(doc, nil, Options{})
	if got := texts(cs); !reflect.DeepEqual(got, []string{"Body starts here."}) {
		t.Fatalf("chunks %q, want only the body, trimmed", got)
	}
	if c := cs[0]; c.Start != strings.Index(text, "Body") || c.LineStart != 8 || c.LineEnd != 8 || c.Ordinal != 0 || c.Page != 0 {
		t.Errorf("chunk %+v: want start at the body, line 8", c)
	}
	for _, body := range []string{"", "   ", "\n\n\t\n  \n"} {
		if cs := Chunk(&schema.ParsedDoc{Text: "---\na: b\n---\n" + body, BodyStart: 13}, nil, Options{}); len(cs) != 0 {
			t.Errorf("whitespace-only body %q gave chunks %q", body, texts(cs))
		}
	}
	// A body start past the end or before the start is clamped.
	if cs := Chunk(&schema.ParsedDoc{Text: "abc", BodyStart: 10}, nil, Options{}); len(cs) != 0 {
		t.Errorf("body past the end gave %q", texts(cs))
	}
	if cs := Chunk(&schema.ParsedDoc{Text: "abc", BodyStart: -4}, nil, Options{}); len(cs) != 1 {
		t.Errorf("negative body start gave %q", texts(cs))
	}
}

func TestChunkKeepsIndentationTrimsBlankLines(t *testing.T) {
	text := "\n\n    indented code line\n    second line\n\n"
	cs := Chunk(&schema.ParsedDoc{Text: text}, nil, Options{})
	if got := texts(cs); !reflect.DeepEqual(got, []string{"    indented code line\n    second line"}) {
		t.Errorf("chunks %q", got)
	}
}

func TestChunkDefaultSize(t *testing.T) {
	text := prose("default", 60)
	for _, opt := range []Options{{}, {Size: -1}} {
		cs := Chunk(&schema.ParsedDoc{Text: text}, nil, opt)
		if len(cs) < 4 {
			t.Errorf("%d chunks for %d bytes", len(cs), len(text))
		}
		checkInvariants(t, "default", &schema.ParsedDoc{Text: text}, nil, DefaultSize, cs)
	}
}

// TestChunkHeadingStaysWithBody: whatever the size, a section heading and a
// Markdown heading are in the same chunk as the text after them.
func TestChunkHeadingStaysWithBody(t *testing.T) {
	text := "# Guide\n\n" + prose("intro", 3) + "\n\n## 2 Setup\n\n### 2.1 Tools\n\n" + prose("tools", 12) + "\n\nPlain title\n\n" + prose("tail", 6)
	secs := []schema.Section{
		section(text, "# Guide", "Guide", 1, -1),
		section(text, "## 2 Setup", "Guide > 2 Setup", 2, 0),
		section(text, "### 2.1 Tools", "Guide > 2 Setup > 2.1 Tools", 3, 1),
	}
	closeSections(secs)
	for _, size := range []int{120, 200, 400, 800} {
		doc := &schema.ParsedDoc{Text: text}
		cs := Chunk(doc, secs, Options{Size: size})
		checkInvariants(t, "headings", doc, secs, size, cs)
		for _, head := range []string{"## 2 Setup\n\n### 2.1 Tools\n\nSentence 1 of tools", "Plain title\n\nSentence 1 of tail"} {
			found := false
			for _, c := range cs {
				found = found || strings.Contains(c.Text, head)
			}
			if !found {
				t.Errorf("size %d: no chunk holds %q whole: %q", size, head, texts(cs))
			}
		}
	}
}

// TestChunkHeadingNotLastLine: a heading between two paragraphs that
// together overflow the size never ends a chunk, whether Sentences
// recognises it or only the sections passed in name it: it goes with the
// text after it, for every one of 30 headings (where a boundary falls among
// equal gaps depends on a hash of the text, so one heading alone would not
// show a missing rule).
func TestChunkHeadingNotLastLine(t *testing.T) {
	for i := range 30 {
		for _, head := range []string{
			fmt.Sprintf("## Part %d of the guide", i),
			fmt.Sprintf("Part %d of the guide\n=========", i),
			fmt.Sprintf("%d Obligations", i+1),
			fmt.Sprintf("Part %d of the guide", i),
		} {
			text := prose("before", 8) + "\n\n" + head + "\n\n" + prose("after", 8)
			doc := &schema.ParsedDoc{Text: text}
			cs := Chunk(doc, nil, Options{Size: 600})
			checkInvariants(t, head, doc, nil, 600, cs)
			if len(cs) != 2 || !strings.HasPrefix(cs[1].Text, head+"\n\nSentence 1 of after") {
				t.Errorf("heading %q: chunks %q", head, texts(cs))
			}
		}
		// A section heading that reads like a sentence, known only from the
		// sections passed in, after a paragraph too short to end a chunk on
		// its own and before one too long to share it.
		head := fmt.Sprintf("Rights of party %d.", i)
		text := "Guide\n\n" + prose("before", 2) + "\n\n" + head + "\n\n" + prose("after", 9)
		secs := []schema.Section{section(text, "Guide", "Guide", 1, -1), section(text, head, "Guide > "+head, 2, 0)}
		doc := &schema.ParsedDoc{Text: text}
		cs := Chunk(doc, secs, Options{Size: 600})
		checkInvariants(t, head, doc, secs, 600, cs)
		if !holds(cs, head+"\n\nSentence 1 of after") {
			t.Errorf("section heading %q: chunks %q", head, texts(cs))
		}
	}
}

// TestChunkLongHeadingLetsGo: a heading so long that it and the first word
// after it exceed the size gets its own chunk rather than a chunk over size.
func TestChunkLongHeadingLetsGo(t *testing.T) {
	head := "# " + strings.Repeat("very long heading ", 10)
	text := head + "\n\nBody text follows."
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, nil, Options{Size: 100})
	checkInvariants(t, "long heading", doc, nil, 100, cs)
	if last := cs[len(cs)-1]; last.Text != "Body text follows." {
		t.Errorf("chunks %q", texts(cs))
	}
}

// TestChunkHeadingLetGoStaysWhole: when a section heading over size is cut
// into words and the heading after it cannot fit with its own text, that
// second heading is let go whole, not cut into words as if it were text.
func TestChunkHeadingLetGoStaysWhole(t *testing.T) {
	h1 := "### " + strings.Repeat("long heading words ", 6)
	h2 := "  # Second heading, forty-two bytes long xx"
	text := h1 + "\n" + h2 + "\n\n\nBodyword and the rest of the text."
	secs := []schema.Section{section(text, "### ", "Long", 1, -1)}
	secs[0].HeadingEnd = len(h1)
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, secs, Options{Size: 50})
	checkInvariants(t, "let go", doc, secs, 50, cs)
	if !slices.Contains(texts(cs), h2) {
		t.Errorf("no chunk is the second heading whole: %q", texts(cs))
	}
}

// TestChunkTopLevelSections: two top-level sections that would fit in one
// chunk together get one chunk each; small subsections of one parent share.
func TestChunkTopLevelSections(t *testing.T) {
	text := "1 Scope\n\nThis applies to all staff.\n\n2 Terms\n\n2.1 Start\n\nIt starts today.\n\n2.2 End\n\nIt ends in May.\n\n2.3 Renewal\n\nIt renews yearly."
	secs := []schema.Section{
		section(text, "1 Scope", "1 Scope", 1, -1),
		section(text, "2 Terms", "2 Terms", 1, -1),
		section(text, "2.1 Start", "2 Terms > 2.1 Start", 2, 1),
		section(text, "2.2 End", "2 Terms > 2.2 End", 2, 1),
		section(text, "2.3 Renewal", "2 Terms > 2.3 Renewal", 2, 1),
	}
	closeSections(secs)
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, secs, Options{Size: 800})
	checkInvariants(t, "top-level", doc, secs, 800, cs)
	want := []string{
		"1 Scope\n\nThis applies to all staff.",
		"2 Terms\n\n2.1 Start\n\nIt starts today.\n\n2.2 End\n\nIt ends in May.\n\n2.3 Renewal\n\nIt renews yearly.",
	}
	if got := texts(cs); !reflect.DeepEqual(got, want) {
		t.Errorf("chunks %q\nwant %q", got, want)
	}
	if cs[0].ClausePath != "1 Scope" || cs[1].ClausePath != "2 Terms" {
		t.Errorf("clause paths %q, %q", cs[0].ClausePath, cs[1].ClausePath)
	}
	// At a size where the subsections cannot all share, each chunk starts
	// at a subsection and names it.
	cs = Chunk(doc, secs, Options{Size: 40})
	checkInvariants(t, "top-level 40", doc, secs, 40, cs)
	for _, c := range cs[1:] {
		if !strings.HasPrefix(c.Text, "2") || !strings.HasPrefix(c.ClausePath, "2 Terms") {
			t.Errorf("chunk %q path %q: want it to start at a heading of section 2", c.Text, c.ClausePath)
		}
	}
	if cs[len(cs)-1].ClausePath != "2 Terms > 2.3 Renewal" {
		t.Errorf("last chunk path %q", cs[len(cs)-1].ClausePath)
	}
}

// TestChunkTitleOverSections: under a single title heading, the title's
// children count as top-level sections; the title stays with the text that
// follows it; a lone child does not count.
func TestChunkTitleOverSections(t *testing.T) {
	build := func(text string) []schema.Section {
		secs := []schema.Section{
			section(text, "# Policy", "Policy", 1, -1),
			section(text, "## 1 Scope", "Policy > 1 Scope", 2, 0),
			section(text, "## 2 Terms", "Policy > 2 Terms", 2, 0),
		}
		closeSections(secs)
		return secs
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"# Policy\n\nIntro.\n\n## 1 Scope\n\nAll staff.\n\n## 2 Terms\n\nOne year.",
			[]string{"# Policy\n\nIntro.", "## 1 Scope\n\nAll staff.", "## 2 Terms\n\nOne year."}},
		{"# Policy\n\n## 1 Scope\n\nAll staff.\n\n## 2 Terms\n\nOne year.",
			[]string{"# Policy\n\n## 1 Scope\n\nAll staff.", "## 2 Terms\n\nOne year."}},
	} {
		doc := &schema.ParsedDoc{Text: tc.text}
		secs := build(tc.text)
		cs := Chunk(doc, secs, Options{Size: 800})
		checkInvariants(t, "title", doc, secs, 800, cs)
		if got := texts(cs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("chunks %q\nwant %q", got, tc.want)
		}
	}
	// Two roots: their children share chunks again.
	text := "# A\n\n## A.1\n\nOne.\n\n## A.2\n\nTwo.\n\n# B\n\nThree."
	secs := []schema.Section{
		section(text, "# A", "A", 1, -1),
		section(text, "## A.1", "A > A.1", 2, 0),
		section(text, "## A.2", "A > A.2", 2, 0),
		section(text, "# B", "B", 1, -1),
	}
	closeSections(secs)
	cs := Chunk(&schema.ParsedDoc{Text: text}, secs, Options{Size: 800})
	if got, want := texts(cs), []string{"# A\n\n## A.1\n\nOne.\n\n## A.2\n\nTwo.", "# B\n\nThree."}; !reflect.DeepEqual(got, want) {
		t.Errorf("chunks %q\nwant %q", got, want)
	}
}

// TestChunkSplitsAtParagraphs: a long section of short paragraphs is cut
// only between paragraphs.
func TestChunkSplitsAtParagraphs(t *testing.T) {
	var paras []string
	for i := range 12 {
		paras = append(paras, prose(fmt.Sprintf("paragraph %d", i), 3))
	}
	text := strings.Join(paras, "\n\n")
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, nil, Options{Size: 800})
	checkInvariants(t, "paragraphs", doc, nil, 800, cs)
	if len(cs) < 3 {
		t.Fatalf("%d chunks", len(cs))
	}
	for i := 1; i < len(cs); i++ {
		if gap := text[cs[i-1].End:cs[i].Start]; gap != "\n\n" {
			t.Errorf("chunk %d starts after %q, want a paragraph break", i, gap)
		}
	}
}

// TestChunkSplitsAtSentences: one long paragraph is cut between sentences.
func TestChunkSplitsAtSentences(t *testing.T) {
	text := prose("one long paragraph", 30)
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, nil, Options{Size: 500})
	checkInvariants(t, "sentences", doc, nil, 500, cs)
	if len(cs) < 4 {
		t.Fatalf("%d chunks", len(cs))
	}
	for _, c := range cs {
		if !strings.HasPrefix(c.Text, "Sentence ") || !strings.HasSuffix(c.Text, "here.") {
			t.Errorf("chunk %q does not hold whole sentences", c.Text)
		}
	}
}

// TestChunkSplitsAtWords: a sentence with no end mark, and a line without
// breaks, are cut between words; a single word over size stays whole.
func TestChunkSplitsAtWords(t *testing.T) {
	long := strings.Repeat("word ", 200) + "end"
	huge := strings.Repeat("x", 500)
	text := long + "\n\n" + huge + "\n\nafter"
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, nil, Options{Size: 120})
	checkInvariants(t, "words", doc, nil, 120, cs)
	var sawHuge bool
	for _, c := range cs {
		if c.Text == huge {
			sawHuge = true
			continue
		}
		if len(c.Text) > 120 {
			t.Errorf("chunk of %d bytes over size: %q", len(c.Text), c.Text)
		}
		if c.End < len(text) && !isSpaceByte(text[c.End]) || c.Start > 0 && !isSpaceByte(text[c.Start-1]) {
			t.Errorf("chunk [%d,%d) cuts a word", c.Start, c.End)
		}
	}
	if !sawHuge {
		t.Errorf("the 500-byte word is not a chunk of its own: %q", texts(cs))
	}
}

// TestChunkPages: a PDF's chunks never straddle a page, even inside a
// paragraph or a section, and carry the page of their start.
func TestChunkPages(t *testing.T) {
	doc, secs := pdfDoc()
	for _, size := range []int{100, 300, 800, 5000} {
		cs := Chunk(doc, secs, Options{Size: size})
		checkInvariants(t, "pdf", doc, secs, size, cs)
		pages := map[int]bool{}
		for _, c := range cs {
			pages[c.Page] = true
			p := doc.Pages[c.Page-1]
			if c.Start < p.Start || c.End > p.End {
				t.Errorf("size %d: chunk [%d,%d) leaves page %d [%d,%d)", size, c.Start, c.End, c.Page, p.Start, p.End)
			}
		}
		if len(pages) != 3 {
			t.Errorf("size %d: chunks on pages %v", size, pages)
		}
	}
	// Clause 3.1 runs onto page 3: its continuation there keeps its path.
	cs := Chunk(doc, secs, Options{Size: 5000})
	var onPage3 []schema.Chunk
	for _, c := range cs {
		if c.Page == 3 {
			onPage3 = append(onPage3, c)
		}
	}
	if len(onPage3) == 0 || onPage3[0].ClausePath != "3 Fees > 3.1 Monthly fee" || !strings.HasPrefix(onPage3[0].Text, "Late payments") {
		t.Errorf("first chunk on page 3: %+v", onPage3)
	}
}

func TestChunkLinesAndPath(t *testing.T) {
	text := "intro line\n\n# A\n\n## A.1\n\nline one\nline two\n\n# B\n\nlast line"
	secs := []schema.Section{
		section(text, "# A", "A", 1, -1),
		section(text, "## A.1", "A > A.1", 2, 0),
		section(text, "# B", "B", 1, -1),
	}
	closeSections(secs)
	doc := &schema.ParsedDoc{Text: text}
	cs := Chunk(doc, secs, Options{Size: 800})
	checkInvariants(t, "lines", doc, secs, 800, cs)
	type row struct {
		text       string
		start, end int
		path       string
	}
	var got []row
	for _, c := range cs {
		got = append(got, row{c.Text, c.LineStart, c.LineEnd, c.ClausePath})
	}
	want := []row{
		{"intro line", 1, 1, ""},
		{"# A\n\n## A.1\n\nline one\nline two", 3, 8, "A"},
		{"# B\n\nlast line", 10, 12, "B"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if p := innermostPath(secs, strings.Index(text, "line one")); p != "A > A.1" {
		t.Errorf("innermost path %q", p)
	}
}

// TestChunkDeterministic: the same input gives the same chunks, and a
// chunk's hash is the hash of its text.
func TestChunkDeterministic(t *testing.T) {
	for _, tc := range goldenCases(t) {
		a := Chunk(tc.doc, tc.secs, Options{Size: tc.size})
		b := Chunk(tc.doc, tc.secs, Options{Size: tc.size})
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs differ", tc.name)
		}
		for _, c := range a {
			if c.Hash != schema.ContentHash(c.Text) {
				t.Errorf("%s: chunk %d hash", tc.name, c.Ordinal)
			}
		}
	}
}
