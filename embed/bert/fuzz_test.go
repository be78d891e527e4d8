package bert

import "testing"

// FuzzTokenize checks that any input, valid UTF-8 or not, encodes without
// panicking to [CLS] … [SEP] within MaxTokens, alone and as a pair.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "Café 東京 [SEP]x", "\xff\xfe", "a\u0301\u0000\t", "[MASK][SEP"} {
		f.Add(s, "passage")
	}
	tok, err := loadTokenizer(writeTokenizerJSON(f, nil))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, max := range []int{3, 8} {
			ids := tok.encode(a, max)
			if len(ids) < 2 || len(ids) > max || ids[0] != tok.cls || ids[len(ids)-1] != tok.sep {
				t.Fatalf("encode(%q, %d) = %v", a, max, ids)
			}
			ids, types := tok.encodePair(a, b, max)
			if len(ids) < 3 || len(ids) > max || len(types) != len(ids) || ids[0] != tok.cls || ids[len(ids)-1] != tok.sep {
				t.Fatalf("encodePair(%q, %q, %d) = %v %v", a, b, max, ids, types)
			}
			for _, id := range ids {
				if id < 0 || id >= len(testPieces) {
					t.Fatalf("encodePair(%q, %q): id %d out of the vocabulary", a, b, id)
				}
			}
		}
	})
}
