// Package wordnet reads the Princeton WordNet 3.0 database files (the
// Debian package wordnet-base installs them under /usr/share/wordnet) and
// gives, for a word, the single-word lemmas of its synsets: a synonym
// source for query expansion (issue 12, class 2). It is pure: files in,
// strings out.
package wordnet

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultDir is where Debian's wordnet-base puts the database.
const DefaultDir = "/usr/share/wordnet"

// posNames are the parts of speech, as the files are named.
var posNames = []string{"noun", "verb", "adj", "adv"}

// DB is a loaded WordNet database.
type DB struct {
	// index maps pos -> lemma -> synset offsets, most frequent sense first.
	index map[string]map[string][]int64
	// data holds each part of speech's data file.
	data map[string][]byte
	// exc maps pos -> inflected form -> base forms (the exception lists).
	exc map[string]map[string][]string
}

// Load reads the index, data and exception files of dir.
func Load(dir string) (*DB, error) {
	db := &DB{index: map[string]map[string][]int64{}, data: map[string][]byte{}, exc: map[string]map[string][]string{}}
	for _, pos := range posNames {
		idx, err := os.ReadFile(filepath.Join(dir, "index."+pos))
		if err != nil {
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		m, err := parseIndex(idx)
		if err != nil {
			return nil, fmt.Errorf("wordnet: index.%s: %w", pos, err)
		}
		db.index[pos] = m
		if db.data[pos], err = os.ReadFile(filepath.Join(dir, "data."+pos)); err != nil {
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		exc, err := os.ReadFile(filepath.Join(dir, pos+".exc"))
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		db.exc[pos] = parseExc(exc)
	}
	return db, nil
}

// parseIndex reads an index file: lines of lemma pos synset_cnt p_cnt
// [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...; the licence
// lines start with spaces.
func parseIndex(b []byte) (map[string][]int64, error) {
	out := map[string][]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("short line %q", line)
		}
		synsets, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		ptrs, err := strconv.Atoi(f[3])
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		first := 4 + ptrs + 2
		if len(f) < first+synsets {
			return nil, fmt.Errorf("line %q: want %d synsets", line, synsets)
		}
		offs := make([]int64, synsets)
		for i := range offs {
			if offs[i], err = strconv.ParseInt(f[first+i], 10, 64); err != nil {
				return nil, fmt.Errorf("line %q: %w", line, err)
			}
		}
		out[f[0]] = offs
	}
	return out, sc.Err()
}

func parseExc(b []byte) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out[f[0]] = append(out[f[0]], f[1:]...)
		}
	}
	return out
}

// synsetWords returns the words of the synset at off in pos's data file:
// synset_offset lex_filenum ss_type w_cnt (two hex digits) word lex_id ...
func (db *DB) synsetWords(pos string, off int64) []string {
	d := db.data[pos]
	if off < 0 || off >= int64(len(d)) {
		return nil
	}
	line := d[off:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(string(line))
	if len(f) < 4 {
		return nil
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 4+2*int(n) {
		return nil
	}
	out := make([]string, 0, n)
	for i := range int(n) {
		w := f[4+2*i]
		if j := strings.IndexByte(w, '('); j > 0 { // adjective marker: (a), (p), (ip)
			w = w[:j]
		}
		out = append(out, strings.ToLower(w))
	}
	return out
}

// detach are WordNet's suffix rules for finding a base form, per part of
// speech (suffix, replacement).
var detach = map[string][][2]string{
	"noun": {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	"verb": {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	"adj":  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// baseForms returns the lemmas of pos that word may be a form of: the word
// itself when it is one, its exception-list bases, else the suffix rules'
// candidates that are lemmas.
func (db *DB) baseForms(pos, word string) []string {
	idx := db.index[pos]
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if _, ok := idx[w]; ok && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	add(word)
	for _, b := range db.exc[pos][word] {
		add(b)
	}
	if len(out) > 0 {
		return out
	}
	for _, r := range detach[pos] {
		if strings.HasSuffix(word, r[0]) && len(word) > len(r[0])+1 {
			add(word[:len(word)-len(r[0])] + r[1])
		}
	}
	return out
}

// Synonyms returns the single-word lemmas (no multi-word collocations) of
// the synsets of word in every part of speech, the word and its base forms
// left out: the first sense of each part of speech only when firstSense,
// else every sense. The order is the database's (parts of speech noun,
// verb, adjective, adverb; senses most frequent first), each word once.
func (db *DB) Synonyms(word string, firstSense bool) []string {
	w := strings.ToLower(strings.TrimSpace(word))
	if w == "" {
		return nil
	}
	self := map[string]bool{w: true}
	var out []string
	seen := map[string]bool{}
	for _, pos := range posNames {
		for _, base := range db.baseForms(pos, w) {
			self[base] = true
			offs := db.index[pos][base]
			if firstSense && len(offs) > 1 {
				offs = offs[:1]
			}
			for _, off := range offs {
				for _, s := range db.synsetWords(pos, off) {
					if strings.ContainsAny(s, "_-") || seen[s] {
						continue
					}
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	kept := out[:0]
	for _, s := range out {
		if !self[s] {
			kept = append(kept, s)
		}
	}
	return kept
}
