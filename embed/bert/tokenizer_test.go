package bert

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
)

// testPieces is the vocabulary of the tokenizer tests; a piece's id is its
// index.
var testPieces = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	"hello", "world", ",", "!", ".", "-", "$", "^", "`", "|", "«", "»", "—",
	"cafe", "naive", "ang", "##strom", "東", "京", "un", "##able", "##s", "run",
	"a", "b", "c", "##a", "##b", "##c", "i", "##̇", "1", "##2", "x", "y",
}

func pieceID(t *testing.T, piece string) int {
	t.Helper()
	i := slices.Index(testPieces, piece)
	if i < 0 {
		t.Fatalf("no piece %q in testPieces", piece)
	}
	return i
}

// writeTokenizerJSON writes a tokenizer.json over testPieces into a new
// folder, with edit applied to its decoded form, and returns the folder.
func writeTokenizerJSON(t testing.TB, edit func(map[string]any)) string {
	t.Helper()
	vocab := map[string]int{}
	for i, p := range testPieces {
		vocab[p] = i
	}
	special := func(name string) map[string]any {
		return map[string]any{"id": name, "ids": []int{slices.Index(testPieces, name)}, "tokens": []string{name}}
	}
	seq := func(id string, typ int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typ}}
	}
	tok := func(id string, typ int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": typ}}
	}
	var added []map[string]any
	for _, name := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		added = append(added, map[string]any{"id": slices.Index(testPieces, name), "content": name, "special": true})
	}
	doc := map[string]any{
		"added_tokens":  added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type":           "TemplateProcessing",
			"single":         []any{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)},
			"pair":           []any{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)},
			"special_tokens": map[string]any{"[CLS]": special("[CLS]"), "[SEP]": special("[SEP]")},
		},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab},
	}
	if edit != nil {
		edit(doc)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"tokenizer.json": string(data)})
	return dir
}

func testTokenizer(t *testing.T, edit func(map[string]any)) *tokenizer {
	t.Helper()
	tok, err := loadTokenizer(writeTokenizerJSON(t, edit))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// pieces returns the pieces of text's ids, without [CLS] and [SEP].
func pieces(tok *tokenizer, text string) string {
	var out []string
	for _, id := range tok.tokens(text, nil) {
		out = append(out, testPieces[id])
	}
	return strings.Join(out, " ")
}

func TestTokenize(t *testing.T) {
	tok := testTokenizer(t, nil)
	for _, c := range []struct{ name, text, want string }{
		{"punctuation is a word of its own", "Hello,world!!", "hello , world ! !"},
		{"ASCII symbols count as punctuation", "a$b^c`a|b-c", "a $ b ^ c ` a | b - c"},
		{"Unicode punctuation", "«hello»—world", "« hello » — world"},
		{"accents stripped, lowercased", "Café NAÏVE Ångström", "cafe naive ang ##strom"},
		{"decomposed accents too", "cafe\u0301", "cafe"},
		{"CJK ideographs split", "東京", "東 京"},
		{"CJK inside a word", "a東b", "a 東 b"},
		{"longest match first", "unable runs", "un ##able run ##s"},
		{"no match makes the whole word unknown", "unz hello", "[UNK] hello"},
		{"unknown character", "hello ☃", "hello [UNK]"},
		{"whitespace of every kind", "hello\tworld\nhello\u00a0world\u2028a\r\nb", "hello world hello world a b"},
		{"control characters and U+FFFD dropped", "hel\u0000lo\u200b wor\ufffdld\u00ad", "hello world"},
		{"digits are word pieces", "12", "1 ##2"},
		{"special tokens in the raw text", "a[SEP]b [MASK]", "a [SEP] b [MASK]"},
		{"special tokens only verbatim", "[sep]", "[UNK] [UNK] [UNK]"},
		{"empty", "", ""},
		{"only spaces", " \t\n", ""},
	} {
		if got := pieces(tok, c.text); got != c.want {
			t.Errorf("%s: %q → %q, want %q", c.name, c.text, got, c.want)
		}
	}
}

func TestTokenizeMaxInputChars(t *testing.T) {
	tok := testTokenizer(t, func(doc map[string]any) {
		doc["model"].(map[string]any)["max_input_chars_per_word"] = 4
	})
	// "abca" has 4 characters, within the limit; "abcab" has 5.
	if got, want := pieces(tok, "abca abcab"), "a ##b ##c ##a [UNK]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Characters, not bytes: "東" is one character of 3 bytes.
	if got, want := pieces(tok, "ab東"), "a ##b 東"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTokenizeCasedWithoutStripping(t *testing.T) {
	tok := testTokenizer(t, func(doc map[string]any) {
		doc["normalizer"].(map[string]any)["strip_accents"] = false
	})
	// Lowercase without accent stripping: İ becomes i and a combining dot,
	// as Rust's to_lowercase makes it.
	if got, want := pieces(tok, "İ"), "i ##̇"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := pieces(tok, "Café"), "[UNK]"; got != want {
		t.Errorf("accents kept: got %q, want %q", got, want)
	}
}

func TestEncodeTruncates(t *testing.T) {
	tok := testTokenizer(t, nil)
	cls, sep, hello, world := pieceID(t, "[CLS]"), pieceID(t, "[SEP]"), pieceID(t, "hello"), pieceID(t, "world")
	if got, want := tok.encode("hello world hello", 4), []int{cls, hello, world, sep}; !slices.Equal(got, want) {
		t.Errorf("encode to 4: %v, want %v", got, want)
	}
	if got, want := tok.encode("", 4), []int{cls, sep}; !slices.Equal(got, want) {
		t.Errorf("encode empty: %v, want %v", got, want)
	}
}

func TestPairLengths(t *testing.T) {
	for _, c := range []struct{ na, nb, budget, wantA, wantB int }{
		{3, 4, 10, 3, 4},   // fits
		{2, 20, 10, 2, 8},  // only the longer is cut
		{20, 2, 10, 8, 2},  // either side
		{20, 20, 10, 5, 5}, // both cut to half
		{20, 20, 9, 4, 5},  // a tie: the second gets the odd token
		{30, 20, 9, 5, 4},  // the longer gets the odd token
		{6, 20, 10, 5, 5},  // the shorter is longer than half: both cut
		{5, 20, 10, 5, 5},  // exactly half
		{4, 4, 0, 0, 0},
	} {
		a, b := pairLengths(c.na, c.nb, c.budget)
		if a != c.wantA || b != c.wantB {
			t.Errorf("pairLengths(%d, %d, %d) = %d, %d, want %d, %d", c.na, c.nb, c.budget, a, b, c.wantA, c.wantB)
		}
	}
}

func TestEncodePair(t *testing.T) {
	tok := testTokenizer(t, nil)
	ids, types := tok.encodePair("hello world hello world", "a b c a b c", 9)
	var got []string
	for _, id := range ids {
		got = append(got, testPieces[id])
	}
	if want := "[CLS] hello world hello [SEP] a b c [SEP]"; strings.Join(got, " ") != want {
		t.Errorf("ids: %q, want %q", strings.Join(got, " "), want)
	}
	if want := []int{0, 0, 0, 0, 0, 1, 1, 1, 1}; !slices.Equal(types, want) {
		t.Errorf("types: %v, want %v", types, want)
	}
}

// TestTokenizerJSONRejected checks that a tokenizer.json this package does
// not implement is refused with an error naming what is wrong.
func TestTokenizerJSONRejected(t *testing.T) {
	for want, edit := range map[string]func(map[string]any){
		`model type "BPE"`:                 func(d map[string]any) { d["model"].(map[string]any)["type"] = "BPE" },
		`normalizer "Sequence"`:            func(d map[string]any) { d["normalizer"] = map[string]any{"type": "Sequence"} },
		`normalizer null`:                  func(d map[string]any) { d["normalizer"] = nil },
		`pre_tokenizer "Whitespace"`:       func(d map[string]any) { d["pre_tokenizer"] = map[string]any{"type": "Whitespace"} },
		`post_processor: type "ByteLevel"`: func(d map[string]any) { d["post_processor"] = map[string]any{"type": "ByteLevel"} },
		`template is not BERT's`: func(d map[string]any) {
			pp := d["post_processor"].(map[string]any)
			pp["single"] = pp["single"].([]any)[:2]
		},
		`added token "<x>"`: func(d map[string]any) {
			d["added_tokens"] = append(d["added_tokens"].([]map[string]any), map[string]any{"id": 5, "content": "<x>", "lstrip": true})
		},
		`unknown token "[UNK]"`: func(d map[string]any) {
			v := maps.Clone(d["model"].(map[string]any)["vocab"].(map[string]int))
			delete(v, "[UNK]")
			d["model"].(map[string]any)["vocab"] = v
		},
	} {
		_, err := loadTokenizer(writeTokenizerJSON(t, edit))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want one containing %s", err, want)
		}
	}
}

// TestVocabTxt checks the vocab.txt folder: ids are line numbers, and
// do_lower_case in tokenizer_config.json turns lowercasing and accent
// stripping off.
func TestVocabTxt(t *testing.T) {
	vocab := strings.Join(testPieces, "\n") + "\n"
	for _, c := range []struct{ config, text, want string }{
		{"", "Hello, CAFÉ", "hello , cafe"},
		{`{"do_lower_case": false}`, "Hello, cafe", "[UNK] , cafe"},
		{`{"do_lower_case": true, "strip_accents": false}`, "hello café", "hello [UNK]"},
	} {
		dir := t.TempDir()
		files := map[string]string{"vocab.txt": vocab}
		if c.config != "" {
			files["tokenizer_config.json"] = c.config
		}
		testenv.WriteFiles(t, dir, files)
		tok, err := loadTokenizer(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := pieces(tok, c.text); got != c.want {
			t.Errorf("config %s: %q → %q, want %q", c.config, c.text, got, c.want)
		}
		if got := tok.encode("[MASK]", 8); !slices.Equal(got, []int{2, 4, 3}) {
			t.Errorf("config %s: [MASK] → %v, want [2 4 3]", c.config, got)
		}
	}
}

// TestTokenizerFromModels checks that a model's tokenizer.json and the same
// vocabulary as vocab.txt tokenize alike.
func TestTokenizerFromModels(t *testing.T) {
	dir := filepath.Join(testenv.VarDir(t), "models", requiredModel)
	testenv.Require(t, filepath.Join(dir, "tokenizer.json"), "the default model (make setup)")
	fromJSON, err := loadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	byID := make([]string, len(fromJSON.vocab))
	for p, id := range fromJSON.vocab {
		byID[id] = p
	}
	txt := t.TempDir()
	testenv.WriteFiles(t, txt, map[string]string{"vocab.txt": strings.Join(byID, "\n") + "\n"})
	fromTxt, err := loadTokenizer(txt)
	if err != nil {
		t.Fatal(err)
	}
	text := "Ångström's café — 東京, [SEP] naïve résumé of EUR 7.2 million!"
	if a, b := fromJSON.encode(text, 64), fromTxt.encode(text, 64); !slices.Equal(a, b) {
		t.Errorf("tokenizer.json %v\n      vocab.txt %v", a, b)
	}
}
