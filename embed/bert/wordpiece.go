package bert

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenizer is BERT's WordPiece tokenizer as Hugging Face tokenizers runs it:
// special tokens matched in the raw text, BertNormalizer, BertPreTokenizer,
// greedy longest-match-first WordPiece, and the [CLS] … [SEP] template.
type tokenizer struct {
	vocab    map[string]int // pieces that start a word
	cont     map[string]int // continuing pieces, keyed without their prefix ("##")
	unk      int
	cls, sep int
	pad      int
	maxChars int // a longer word is [UNK]

	cleanText, chinese, stripAccents, lowercase bool

	special []addedToken // matched in the raw text before normalisation
}

// addedToken is a special token ("[SEP]") that, written in the input, is
// taken as that token rather than as text, as tokenizers does.
type addedToken struct {
	content string
	id      int
}

// encode returns [CLS] ids [SEP], truncated to at most maxTokens ids.
func (t *tokenizer) encode(text string, maxTokens int) []int {
	ids := t.tokens(text, nil)
	ids = ids[:min(len(ids), maxTokens-2)]
	out := make([]int, 0, len(ids)+2)
	out = append(out, t.cls)
	out = append(out, ids...)
	return append(out, t.sep)
}

// encodePair returns [CLS] a [SEP] b [SEP] and the token type ids (0 up to
// the first [SEP], 1 after), truncated to at most maxTokens ids as
// tokenizers' longest-first strategy does.
func (t *tokenizer) encodePair(a, b string, maxTokens int) (ids, types []int) {
	ta, tb := t.tokens(a, nil), t.tokens(b, nil)
	na, nb := pairLengths(len(ta), len(tb), maxTokens-3)
	ids = make([]int, 0, na+nb+3)
	ids = append(ids, t.cls)
	ids = append(ids, ta[:na]...)
	ids = append(ids, t.sep)
	split := len(ids)
	ids = append(ids, tb[:nb]...)
	ids = append(ids, t.sep)
	types = make([]int, len(ids))
	for i := split; i < len(types); i++ {
		types[i] = 1
	}
	return ids, types
}

// pairLengths returns how many tokens of two sequences of na and nb tokens
// to keep within budget, as tokenizers' LongestFirst truncation does: the
// shorter sequence is kept whole when the longer can take the rest;
// otherwise each gets half, and the longer one (the second on a tie) gets
// the odd token.
func pairLengths(na, nb, budget int) (int, int) {
	if budget < 0 {
		budget = 0
	}
	if na+nb <= budget {
		return na, nb
	}
	short, long := na, nb
	if na > nb {
		short, long = nb, na
	}
	if short <= budget-short {
		long = budget - short
	} else {
		short, long = budget/2, budget/2+budget%2
	}
	if na > nb {
		return long, short
	}
	return short, long
}

// tokens appends to dst the ids of text's pieces, without [CLS] and [SEP].
// Special tokens written in text are matched first, on the raw text; the
// text between them is normalised and split separately, as tokenizers does.
func (t *tokenizer) tokens(text string, dst []int) []int {
	for text != "" {
		at, tok := t.nextSpecial(text)
		dst = t.words(t.normalize(text[:at]), dst)
		if tok == nil {
			break
		}
		dst = append(dst, tok.id)
		text = text[at+len(tok.content):]
	}
	return dst
}

// nextSpecial finds the leftmost special token in text, the longest one
// where several start at the same place. It returns len(text) and nil when
// there is none.
func (t *tokenizer) nextSpecial(text string) (int, *addedToken) {
	at, found := len(text), (*addedToken)(nil)
	for i := range t.special {
		s := &t.special[i]
		j := strings.Index(text[:min(len(text), at+len(s.content))], s.content)
		if j < 0 {
			continue
		}
		if j < at || (j == at && len(s.content) > len(found.content)) {
			at, found = j, s
		}
	}
	return at, found
}

// normalize applies BertNormalizer: drop control characters and U+FFFD and
// turn whitespace into spaces, put spaces around CJK ideographs, strip
// accents (NFD, then drop non-spacing marks), lowercase.
func (t *tokenizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if t.cleanText {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if unicode.IsSpace(r) {
				r = ' '
			}
		}
		if t.chinese && isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if t.stripAccents {
		out = stripAccents(out)
	}
	if t.lowercase {
		out = lower(out)
	}
	return out
}

// isControl reports the characters clean_text drops: categories Cc, Cf, Co
// and Cs, except tab, newline and carriage return, which are whitespace.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isCJK reports the CJK Unified Ideographs blocks that BERT treats as words
// of their own (not Hangul, Hiragana or Katakana).
func isCJK(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF,
		r >= 0x20000 && r <= 0x2A6DF, r >= 0x2A700 && r <= 0x2B73F,
		r >= 0x2B740 && r <= 0x2B81F, r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// stripAccents decomposes s (NFD) and drops the non-spacing marks.
func stripAccents(s string) string {
	if isASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

// lower lowercases s rune by rune, as Rust's char::to_lowercase does: like
// unicode.ToLower except that İ (U+0130) becomes i and a combining dot.
func lower(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isPunct reports BertPreTokenizer's punctuation: every ASCII symbol
// (33–47, 58–64, 91–96, 123–126) and Unicode category P.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r > ' ' && r < 0x7F && !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// words splits normalised text as BertPreTokenizer does (whitespace
// separates words and is dropped; each punctuation character is a word of
// its own) and appends the WordPiece ids of each word to dst.
func (t *tokenizer) words(s string, dst []int) []int {
	start := -1 // start of the current word, or -1 between words
	for i, r := range s {
		space, punct := unicode.IsSpace(r), isPunct(r)
		if (space || punct) && start >= 0 {
			dst = t.wordPiece(s[start:i], dst)
			start = -1
		}
		switch {
		case punct:
			dst = t.wordPiece(s[i:i+utf8.RuneLen(r)], dst)
		case !space && start < 0:
			start = i
		}
	}
	if start >= 0 {
		dst = t.wordPiece(s[start:], dst)
	}
	return dst
}

// wordPiece appends the ids of word's pieces, longest match first, to dst;
// a word longer than maxChars characters, or one that cannot be cut into
// known pieces, is one [UNK].
func (t *tokenizer) wordPiece(word string, dst []int) []int {
	if utf8.RuneCountInString(word) > t.maxChars {
		return append(dst, t.unk)
	}
	n := len(dst)
	vocab := t.vocab
	for start := 0; start < len(word); {
		end := len(word)
		for ; end > start; end -= lastRuneLen(word[start:end]) {
			if id, ok := vocab[word[start:end]]; ok {
				dst = append(dst, id)
				break
			}
		}
		if end == start {
			return append(dst[:n], t.unk)
		}
		start, vocab = end, t.cont
	}
	return dst
}

func lastRuneLen(s string) int {
	_, size := utf8.DecodeLastRuneInString(s)
	return size
}
