package chunker

import (
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
)

// editResult says which chunks an edit made new: chunks whose text (hence
// vector) did not exist before the edit and must be embedded again.
type editResult struct {
	renewed int // new chunks
	outside int // new chunks that hold no byte of the edited paragraph
}

// applyEdit replaces text[s:e] with repl, re-chunks, and compares.
func applyEdit(text string, body int, sections func(string, int) []schema.Section, size, ps, pe, s, e int, repl string) editResult {
	oldDoc := &schema.ParsedDoc{Text: text, BodyStart: body}
	newText := text[:s] + repl + text[e:]
	newDoc := &schema.ParsedDoc{Text: newText, BodyStart: body}
	var oldSecs, newSecs []schema.Section
	if sections != nil {
		oldSecs, newSecs = sections(text, body), sections(newText, body)
	}
	old := map[string]bool{}
	for _, c := range Chunk(oldDoc, oldSecs, Options{Size: size}) {
		old[c.Hash] = true
	}
	npe := pe + len(repl) - (e - s)
	var r editResult
	for _, c := range Chunk(newDoc, newSecs, Options{Size: size}) {
		if old[c.Hash] {
			continue
		}
		r.renewed++
		if c.End <= ps || c.Start >= npe {
			r.outside++
		}
	}
	return r
}

// editTargets returns the paragraphs of the body worth editing: those with
// at least one word of four letters or more after their first line.
func editTargets(text string, body int) [][2]int {
	var out [][2]int
	for _, p := range paragraphs(text, body, len(text)) {
		if strings.Contains(text[p.start:p.end], "\n") || p.end-p.start > 120 {
			out = append(out, [2]int{p.start, p.end})
		}
	}
	return out
}

// middleWord finds a word of at least four lower-case ASCII letters near
// the middle of paragraph text[ps:pe], more than 32 bytes from the ends of
// the paragraph and of the sentence holding it (the bytes that gap scores
// hash), and not followed by a dot (so it cannot be an abbreviation).
func middleWord(text string, ps, pe int) (int, int, bool) {
	units := splitUnits(text, ps, pe)
	ws := words(text, ps, pe)
	for k := len(ws) / 2; k < len(ws); k++ {
		w := ws[k]
		ok := w[1]-w[0] >= 4 && w[1] < len(text) && text[w[1]] != '.'
		for i := w[0]; i < w[1]; i++ {
			ok = ok && text[i] >= 'a' && text[i] <= 'z'
		}
		for _, u := range units {
			if u.start <= w[0] && w[1] <= u.end && (w[0]-u.start <= 32 || u.end-w[1] <= 32) {
				ok = false
			}
		}
		if ok && w[0]-ps > 32 && pe-w[1] > 32 {
			return w[0], w[1], true
		}
	}
	return 0, 0, false
}

// TestEditIsLocal edits every paragraph of long documents, one at a time,
// and counts the chunks that come out new: those are what a re-ingest
// re-embeds. A word replaced by another of the same length, away from the
// 32 bytes at each end of its paragraph and sentence that gap scores hash,
// renews only the chunks holding the paragraph. A phrase added to or a word
// removed from a paragraph can move a boundary, but the boundaries fall back
// into place: on average an edit renews fewer than two chunks in all, at
// least 90 % of edits renew at most one chunk outside the paragraph, and
// none renews more than four (never the rest of the document, as counting
// from the start of a section would).
func TestEditIsLocal(t *testing.T) {
	type doc struct {
		name string
		text string
		secs func(string, int) []schema.Section
	}
	handbook := readFixture(t, "handbook.txt")
	policy := readFixture(t, "policy.md")
	docs := []doc{
		{"handbook.txt", handbook, nil},
		{"policy.md", policy, testSections},
		{"handbook.txt twice", handbook + "\n\n" + handbook, nil},
	}
	for _, cd := range loadCorpus(t, 100) {
		if len(cd.doc.Text) > 40000 && len(docs) < 6 {
			docs = append(docs, doc{cd.name, cd.doc.Text, testSections})
		}
	}
	for _, d := range docs {
		body := bodyStart(d.text)
		for _, size := range []int{400, DefaultSize} {
			var edits, renewed, worst, far int
			for _, p := range editTargets(d.text, body) {
				ws, we, ok := middleWord(d.text, p[0], p[1])
				if !ok {
					continue
				}
				// Same length, away from the hashed ends: only chunks
				// holding the paragraph change.
				r := applyEdit(d.text, body, d.secs, size, p[0], p[1], ws, we, strings.Repeat("x", we-ws))
				if r.outside > 0 || r.renewed == 0 {
					t.Errorf("%s size %d: replacing %q at %d renewed %d chunks, %d outside its paragraph", d.name, size, d.text[ws:we], ws, r.renewed, r.outside)
				}
				// Longer and shorter: boundaries fall back into place.
				for _, e := range []struct {
					s, e int
					repl string
				}{
					{we, we, " and, as the parties agreed in writing on the first day of the term, also"},
					{ws, we + 1, ""},
				} {
					r := applyEdit(d.text, body, d.secs, size, p[0], p[1], e.s, e.e, e.repl)
					edits++
					renewed += r.renewed
					worst = max(worst, r.outside)
					if r.outside > 1 {
						far++
					}
					if r.outside > 4 {
						t.Errorf("%s size %d: edit at %d renewed %d chunks, %d outside its paragraph", d.name, size, e.s, r.renewed, r.outside)
					}
				}
			}
			if edits == 0 {
				t.Fatalf("%s: no paragraph to edit", d.name)
			}
			mean := float64(renewed) / float64(edits)
			t.Logf("%s size %d: %d length-changing edits, %.2f chunks renewed per edit, %d renewed more than one chunk outside the paragraph, at most %d", d.name, size, edits, mean, far, worst)
			if mean >= 2 || far*10 > edits {
				t.Errorf("%s size %d: %.2f chunks renewed per edit (want under 2), %d of %d edits renewed more than one chunk outside the paragraph (want at most 10%%)", d.name, size, mean, far, edits)
			}
		}
	}
}
