package server

import (
	"sort"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// DocumentView is the body of GET /v1/documents/{id}: the stored text as
// lines, with where each line starts (byte offsets, the unit of refs), the
// structure map as a tree of sections, and the pages of a PDF with where
// each page's text came from.
type DocumentView struct {
	store.DocumentSummary
	Layer string `json:"layer"`
	// Lines are the stored text's lines; line n is Lines[n-1], the numbers
	// citations give.
	Lines []string `json:"lines"`
	// LineOffsets[i] is the byte offset at which line i+1 starts.
	LineOffsets []int `json:"line_offsets"`
	// Bytes is the length of the text returned, in bytes.
	Bytes int `json:"bytes"`
	// Truncated: the text is longer than the server returns; Lines hold
	// its start.
	Truncated bool           `json:"truncated"`
	Sections  []*SectionNode `json:"sections"`
	PageSpans []PageView     `json:"page_spans"`
	// TextOrigin is "text", "ocr" or "mixed" (some pages by OCR); "text"
	// for a document without pages.
	TextOrigin string `json:"text_origin"`
}

// SectionNode is one section of the structure map, with its subsections.
type SectionNode struct {
	Number     string         `json:"number"`
	Title      string         `json:"title"`
	Kind       string         `json:"kind"`
	Level      int            `json:"level"`
	ClausePath string         `json:"clause_path"`
	Start      int            `json:"start"`
	End        int            `json:"end"`
	LineStart  int            `json:"line_start"`
	LineEnd    int            `json:"line_end"`
	Children   []*SectionNode `json:"children"`
}

// PageView is one page of a PDF.
type PageView struct {
	Number        int      `json:"number"`
	LineStart     int      `json:"line_start"`
	LineEnd       int      `json:"line_end"`
	TextOrigin    string   `json:"text_origin"`
	OCRConfidence *float32 `json:"ocr_confidence"`
}

// documentView turns a stored document into its view.
func documentView(d store.DocumentText) DocumentView {
	v := DocumentView{DocumentSummary: d.DocumentSummary, Layer: d.Layer, Bytes: len(d.Body), Truncated: d.Truncated,
		Sections: []*SectionNode{}, PageSpans: []PageView{}, TextOrigin: "text"}
	v.Lines = strings.Split(d.Body, "\n")
	v.LineOffsets = make([]int, len(v.Lines))
	off := 0
	for i, l := range v.Lines {
		v.LineOffsets[i] = off
		off += len(l) + 1
	}
	v.Sections = sectionTree(d.Sections, v.LineOffsets)
	ocr := 0
	for _, p := range d.Pages {
		v.PageSpans = append(v.PageSpans, PageView{Number: p.Number, LineStart: lineAt(v.LineOffsets, p.Start),
			LineEnd: lineAt(v.LineOffsets, max(p.Start, p.End-1)), TextOrigin: p.TextOrigin, OCRConfidence: p.OCRConfidence})
		if p.TextOrigin == "ocr" {
			ocr++
		}
	}
	switch {
	case ocr > 0 && ocr == len(d.Pages):
		v.TextOrigin = "ocr"
	case ocr > 0:
		v.TextOrigin = "mixed"
	}
	return v
}

// lineAt is the 1-based number of the line holding byte offset off.
func lineAt(offsets []int, off int) int {
	return max(1, sort.Search(len(offsets), func(i int) bool { return offsets[i] > off }))
}

// sectionTree nests the sections (in ord order) under their parents; a
// section whose parent is missing goes to the top.
func sectionTree(rows []store.SectionRow, offsets []int) []*SectionNode {
	byOrd := make(map[int]*SectionNode, len(rows))
	top := []*SectionNode{}
	for _, r := range rows {
		n := &SectionNode{Number: r.Number, Title: r.Title, Kind: r.Kind, Level: r.Level, ClausePath: r.ClausePath,
			Start: r.Start, End: r.End, LineStart: lineAt(offsets, r.Start), LineEnd: lineAt(offsets, max(r.Start, r.End-1)),
			Children: []*SectionNode{}}
		byOrd[r.Ord] = n
		if r.ParentOrd != nil {
			if p, ok := byOrd[*r.ParentOrd]; ok {
				p.Children = append(p.Children, n)
				continue
			}
		}
		top = append(top, n)
	}
	return top
}
