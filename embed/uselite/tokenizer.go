package uselite

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// wordBoundary is the sentencepiece meta symbol that marks the start of a word.
const wordBoundary = '\u2581'

// reservedPieces is the number of control pieces at the head of the
// vocabulary (unknown, <s>, </s> and three extra ids) that text never maps to.
const reservedPieces = 6

// unknownID is the id of the unknown piece.
const unknownID = 0

// tokenizer is a unigram sentencepiece tokenizer over the model's vocabulary.
// It reproduces the reference JavaScript tokenizer decision for decision,
// including its quirks (a best score of exactly 0 counts as "no path yet", and
// ties go to the later candidate), because the model was evaluated with it.
type tokenizer struct {
	root *trieNode
	// pieceLen is each piece's length in UTF-16 code units, which is what the
	// reference implementation steps back by when it reads the best path.
	pieceLen []int
}

type trieNode struct {
	children map[rune]*trieNode
	end      bool
	score    float64
	id       int
}

// loadVocab reads vocab.json: an array of [piece, score] pairs, where a null
// score counts as 0.
func loadVocab(path string) (*tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	var raw [][2]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode vocabulary %s: %w", path, err)
	}
	pieces := make([]string, len(raw))
	scores := make([]float64, len(raw))
	for i, p := range raw {
		s, ok := p[0].(string)
		if !ok {
			return nil, fmt.Errorf("decode vocabulary %s: entry %d has no piece string", path, i)
		}
		pieces[i] = s
		switch v := p[1].(type) {
		case float64:
			scores[i] = v
		case nil:
			scores[i] = 0
		default:
			return nil, fmt.Errorf("decode vocabulary %s: entry %d has a score of type %T", path, i, v)
		}
	}
	return newTokenizer(pieces, scores)
}

func newTokenizer(pieces []string, scores []float64) (*tokenizer, error) {
	if len(pieces) <= reservedPieces {
		return nil, fmt.Errorf("vocabulary has %d pieces, want more than %d", len(pieces), reservedPieces)
	}
	t := &tokenizer{root: &trieNode{children: map[rune]*trieNode{}}, pieceLen: make([]int, len(pieces))}
	for i, p := range pieces {
		t.pieceLen[i] = utf16Len(p)
		if i < reservedPieces || p == "" {
			continue
		}
		node := t.root
		for _, r := range p {
			child := node.children[r]
			if child == nil {
				child = &trieNode{children: map[rune]*trieNode{}}
				node.children[r] = child
			}
			node = child
		}
		// A duplicated piece keeps the last entry's score and id, as the
		// reference trie does.
		node.end = true
		node.score = scores[i]
		node.id = i
	}
	return t, nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// normalizeText applies NFKC and the sentencepiece word-boundary convention: a
// leading meta symbol and every ASCII space replaced by it.
func normalizeText(text string) []rune {
	s := norm.NFKC.String(text)
	if s == "" {
		return nil
	}
	return []rune(string(wordBoundary) + strings.ReplaceAll(s, " ", string(wordBoundary)))
}

// encode returns the piece ids of text, unclipped.
func (t *tokenizer) encode(text string) []int {
	symbols := normalizeText(text)
	n := len(symbols)
	if n == 0 {
		return []int{}
	}
	// ends[e] lists the pieces that end at symbol e, by ascending start; the
	// reference visits them in that order.
	type cand struct {
		start, id int
		score     float64
	}
	ends := make([][]cand, n+1)
	for i := 0; i < n; i++ {
		found := false
		node := t.root.children[symbols[i]]
		for j := i; j < n && node != nil; j++ {
			if node.end {
				ends[j+1] = append(ends[j+1], cand{start: i, id: node.id, score: node.score})
				found = true
			}
			if j+1 < n {
				node = node.children[symbols[j+1]]
			} else {
				node = nil
			}
		}
		if !found {
			ends[i+1] = append(ends[i+1], cand{start: i, id: unknownID, score: 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int, n+1)
	for e := 1; e <= n; e++ {
		// Candidates were appended in ascending start order because the
		// outer loop above walks starts in order.
		for _, c := range ends[e] {
			score := c.score + best[c.start]
			if best[e] == 0 || score >= best[e] {
				best[e] = score
				words[e] = c.id
			}
		}
	}
	var rev []int
	for i := n; i > 0; i -= t.pieceLen[words[i]] {
		rev = append(rev, words[i])
	}
	ids := make([]int, 0, len(rev))
	prevUnknown := false
	for k := len(rev) - 1; k >= 0; k-- {
		id := rev[k]
		if !(prevUnknown && id == unknownID) {
			ids = append(ids, id)
		}
		prevUnknown = id == unknownID
	}
	return ids
}
