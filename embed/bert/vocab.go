package bert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// tokenizerFile is the part of a Hugging Face tokenizer.json this package
// reads.
type tokenizerFile struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		Lstrip     bool   `json:"lstrip"`
		Rstrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *postProcessor `json:"post_processor"`
	Padding       *struct {
		PadID int `json:"pad_id"`
	} `json:"padding"`
	Model struct {
		Type                    string         `json:"type"`
		Vocab                   map[string]int `json:"vocab"`
		UnkToken                string         `json:"unk_token"`
		ContinuingSubwordPrefix string         `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int            `json:"max_input_chars_per_word"`
	} `json:"model"`
}

// postProcessor is a TemplateProcessing or BertProcessing post-processor.
type postProcessor struct {
	Type          string                         `json:"type"`
	Single        []templatePiece                `json:"single"`
	Pair          []templatePiece                `json:"pair"`
	SpecialTokens map[string]struct{ IDs []int } `json:"special_tokens"`
	Cls           *[2]json.RawMessage            `json:"cls"` // BertProcessing: ["[CLS]", 101]
	Sep           *[2]json.RawMessage            `json:"sep"`
}

type templatePiece struct {
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"Sequence"`
}

// loadTokenizer reads dir/tokenizer.json, or dir/vocab.txt (with
// dir/tokenizer_config.json when present) when there is no tokenizer.json.
func loadTokenizer(dir string) (*tokenizer, error) {
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err == nil {
		tok, err := parseTokenizerJSON(data)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, "tokenizer.json"), err)
		}
		return tok, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read tokenizer: %w", err)
	}
	tok, err := readVocabTxt(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, "vocab.txt"), err)
	}
	return tok, nil
}

// parseTokenizerJSON builds the tokenizer a tokenizer.json describes,
// refusing one whose parts this package does not implement.
func parseTokenizerJSON(data []byte) (*tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if err := f.supported(); err != nil {
		return nil, err
	}
	if f.Model.ContinuingSubwordPrefix == "" {
		f.Model.ContinuingSubwordPrefix = "##"
	}
	if f.Model.MaxInputCharsPerWord == 0 {
		f.Model.MaxInputCharsPerWord = 100
	}
	t, err := newTokenizer(f.Model.Vocab, f.Model.UnkToken, f.Model.ContinuingSubwordPrefix)
	if err != nil {
		return nil, err
	}
	t.maxChars = f.Model.MaxInputCharsPerWord
	n := f.Normalizer
	t.cleanText, t.chinese, t.lowercase = orTrue(n.CleanText), orTrue(n.HandleChineseChars), orTrue(n.Lowercase)
	t.stripAccents = t.lowercase
	if n.StripAccents != nil {
		t.stripAccents = *n.StripAccents
	}
	if t.cls, t.sep, err = f.PostProcessor.clsSep(); err != nil {
		return nil, fmt.Errorf("post_processor: %w", err)
	}
	t.pad = f.Model.Vocab["[PAD]"]
	if f.Padding != nil {
		t.pad = f.Padding.PadID
	}
	for _, a := range f.AddedTokens {
		t.special = append(t.special, addedToken{content: a.Content, id: a.ID})
	}
	return t, nil
}

// supported returns an error naming the first part of f that this package
// does not implement.
func (f *tokenizerFile) supported() error {
	if f.Model.Type != "WordPiece" {
		return fmt.Errorf("model type %q is not supported, want WordPiece", f.Model.Type)
	}
	normalizer, preTokenizer := "null", "null"
	if f.Normalizer != nil {
		normalizer = strconv.Quote(f.Normalizer.Type)
	}
	if f.PreTokenizer != nil {
		preTokenizer = strconv.Quote(f.PreTokenizer.Type)
	}
	if normalizer != `"BertNormalizer"` {
		return fmt.Errorf("normalizer %s is not supported, want BertNormalizer", normalizer)
	}
	if preTokenizer != `"BertPreTokenizer"` {
		return fmt.Errorf("pre_tokenizer %s is not supported, want BertPreTokenizer", preTokenizer)
	}
	for _, a := range f.AddedTokens {
		if a.Normalized || a.Lstrip || a.Rstrip || a.SingleWord || a.Content == "" {
			return fmt.Errorf("added token %q: only tokens matched verbatim (normalized, lstrip, rstrip and single_word false) are supported", a.Content)
		}
	}
	return nil
}

func orTrue(b *bool) bool { return b == nil || *b }

// clsSep returns the ids of the tokens the post-processor puts first and
// between and after the sequences. Only BERT's template is accepted:
// single [CLS] $A [SEP], pair [CLS] $A [SEP] $B:1 [SEP]:1.
func (p *postProcessor) clsSep() (cls, sep int, err error) {
	if p == nil {
		return 0, 0, errors.New("null is not supported, want BERT's [CLS] … [SEP] template")
	}
	switch p.Type {
	case "BertProcessing":
		if p.Cls == nil || p.Sep == nil {
			return 0, 0, errors.New("BertProcessing without cls or sep")
		}
		if err := json.Unmarshal(p.Cls[1], &cls); err != nil {
			return 0, 0, fmt.Errorf("cls id: %w", err)
		}
		if err := json.Unmarshal(p.Sep[1], &sep); err != nil {
			return 0, 0, fmt.Errorf("sep id: %w", err)
		}
		return cls, sep, nil
	case "TemplateProcessing":
		return p.templateClsSep()
	}
	return 0, 0, fmt.Errorf("type %q is not supported, want TemplateProcessing or BertProcessing", p.Type)
}

func (p *postProcessor) templateClsSep() (cls, sep int, err error) {
	s, q := p.Single, p.Pair
	if len(s) != 3 || len(q) != 5 ||
		!s[0].special(0) || !s[1].sequence("A", 0) || !s[2].special(0) ||
		!q[0].special(0) || !q[1].sequence("A", 0) || !q[2].special(0) || !q[3].sequence("B", 1) || !q[4].special(1) ||
		q[0].SpecialToken.ID != s[0].SpecialToken.ID || q[2].SpecialToken.ID != s[2].SpecialToken.ID || q[4].SpecialToken.ID != s[2].SpecialToken.ID {
		return 0, 0, errors.New("template is not BERT's: want single [CLS] $A [SEP], pair [CLS] $A [SEP] $B:1 [SEP]:1")
	}
	if cls, err = p.specialID(s[0].SpecialToken.ID); err != nil {
		return 0, 0, err
	}
	if sep, err = p.specialID(s[2].SpecialToken.ID); err != nil {
		return 0, 0, err
	}
	return cls, sep, nil
}

func (p *postProcessor) specialID(name string) (int, error) {
	st, ok := p.SpecialTokens[name]
	if !ok || len(st.IDs) != 1 {
		return 0, fmt.Errorf("special token %q needs exactly one id", name)
	}
	return st.IDs[0], nil
}

func (p templatePiece) special(typeID int) bool {
	return p.SpecialToken != nil && p.Sequence == nil && p.SpecialToken.TypeID == typeID
}

func (p templatePiece) sequence(id string, typeID int) bool {
	return p.Sequence != nil && p.SpecialToken == nil && p.Sequence.ID == id && p.Sequence.TypeID == typeID
}

// newTokenizer splits vocab into word-initial and continuing pieces and
// looks up the unknown token; the caller sets the rest.
func newTokenizer(vocab map[string]int, unk, prefix string) (*tokenizer, error) {
	t := &tokenizer{vocab: make(map[string]int, len(vocab)), cont: map[string]int{}}
	for piece, id := range vocab {
		if rest, ok := strings.CutPrefix(piece, prefix); ok && rest != "" {
			t.cont[rest] = id
		}
		t.vocab[piece] = id
	}
	id, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("unknown token %q is not in the vocabulary", unk)
	}
	t.unk = id
	return t, nil
}

// readVocabTxt builds BERT's tokenizer from dir/vocab.txt (one piece a line,
// the line number is its id) as tokenizers' BertWordPieceTokenizer does.
// Lowercasing follows do_lower_case in dir/tokenizer_config.json (default
// true), accent stripping its strip_accents (default: as lowercasing), CJK
// spacing its tokenize_chinese_chars (default true).
func readVocabTxt(dir string) (*tokenizer, error) {
	data, err := os.ReadFile(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		return nil, err
	}
	vocab := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for id := 0; sc.Scan(); id++ {
		vocab[strings.TrimRightFunc(sc.Text(), unicode.IsSpace)] = id
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t, err := newTokenizer(vocab, "[UNK]", "##")
	if err != nil {
		return nil, err
	}
	t.maxChars = 100
	var ok bool
	for name, p := range map[string]*int{"[CLS]": &t.cls, "[SEP]": &t.sep, "[PAD]": &t.pad} {
		if *p, ok = vocab[name]; !ok {
			return nil, fmt.Errorf("%s is not in the vocabulary", name)
		}
	}
	for _, name := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		if id, ok := vocab[name]; ok {
			t.special = append(t.special, addedToken{content: name, id: id})
		}
	}
	if err := readTokenizerConfig(dir, t); err != nil {
		return nil, err
	}
	return t, nil
}

// readTokenizerConfig sets t's normalisation from dir/tokenizer_config.json,
// or to BERT's uncased defaults when there is none.
func readTokenizerConfig(dir string, t *tokenizer) error {
	var cfg struct {
		DoLowerCase          *bool `json:"do_lower_case"`
		StripAccents         *bool `json:"strip_accents"`
		TokenizeChineseChars *bool `json:"tokenize_chinese_chars"`
	}
	path := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
	}
	t.cleanText, t.lowercase, t.chinese = true, orTrue(cfg.DoLowerCase), orTrue(cfg.TokenizeChineseChars)
	t.stripAccents = t.lowercase
	if cfg.StripAccents != nil {
		t.stripAccents = *cfg.StripAccents
	}
	return nil
}
